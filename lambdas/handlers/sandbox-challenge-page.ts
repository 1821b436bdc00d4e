import { pageEndpoint } from '../middleware/page-endpoint';
import { sandboxDeps } from '../wiring/sandbox';
import { contentSecurityPolicy, htmlResponse, newNonce } from '../checkout-page/headers';
import { renderChallenge, returnPathFor } from '../adapters/sandbox-acquirer/challenge-page';
import { renderState } from '../checkout-page/render';
import { pageTexts } from '../checkout-page/texts';

/**
 * GET /sandbox/challenge/{key}?return=/auth/<token>/complete: the sandbox's simulated 3-D Secure or
 * bank page, addressed by an unguessable key of its own; once answered, or closed by
 * reconciliation, it says so and links back to the checkout (the path the browser brought).
 */
export const handler = pageEndpoint(async (event, deps) => {
  const key = event.pathParameters?.key ?? '';
  // The sandbox's pages exist only where it is the stage's acquirer (the stack does not deploy them elsewhere).
  if (deps.config.ACQUIRER !== 'sandbox') {
    const nonce = newNonce();
    return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  }
  const nonce = newNonce();
  const challenge = await deps.sandbox.challenges.challenge(key);
  if (!challenge) return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce, texts: pageTexts(undefined, event.headers?.['accept-language']) }), contentSecurityPolicy(nonce), false);
  // The answer is a form post whose redirects end on the merchant's return URLs (through
  // /auth/{token}/complete); browsers check form-action on every redirect, so those origins are
  // allowed. The page opens where the checkout page was, so the merchant's framing rules apply too.
  const payment = await deps.store.findPayment(challenge.paymentId);
  const merchant = payment ? await deps.merchants.find(payment.merchantKey) : undefined;
  const back = returnPathFor(event.queryStringParameters?.return, challenge.paymentId);
  const texts = pageTexts(payment?.checkout?.language, event.headers?.['accept-language']);
  const html = renderChallenge(challenge, `/sandbox/challenge/${encodeURIComponent(key)}`, nonce, back, { texts, payment, merchant });
  return htmlResponse(200, html, contentSecurityPolicy(nonce, payment, merchant), Boolean(merchant?.frameAncestors?.length));
}, sandboxDeps);
