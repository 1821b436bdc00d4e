import { pageEndpoint } from '../middleware/page-endpoint';
import { contentSecurityPolicy, htmlResponse, newNonce } from '../checkout-page/respond';
import { renderChallenge } from '../adapters/sandbox-acquirer/challenge-page';
import { renderState } from '../checkout-page/render';

/** GET /sandbox/challenge/{key}: the sandbox's simulated 3-D Secure or bank page. */
export const handler = pageEndpoint(async (event, deps) => {
  const key = event.pathParameters?.key ?? '';
  const nonce = newNonce();
  const challenge = await deps.sandbox.challenge(key);
  if (!challenge) return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  const html = renderChallenge(challenge.flow, `/sandbox/challenge/${encodeURIComponent(key)}`, nonce, challenge.returnUrl);
  return htmlResponse(200, html, contentSecurityPolicy(nonce), false);
});
