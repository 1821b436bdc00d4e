import { pageEndpoint } from '../middleware/page-endpoint';
import { contentSecurityPolicy, htmlResponse, newNonce } from '../checkout-page/headers';
import { renderChallenge } from '../adapters/sandbox-acquirer/challenge-page';
import { renderState } from '../checkout-page/render';

/** The payment an attempt's idempotency key (`<payment_id>.<attempt>`) belongs to. */
const paymentIdOf = (idempotencyKey: string): string => idempotencyKey.slice(0, Math.max(0, idempotencyKey.lastIndexOf('.')));

/**
 * GET /sandbox/challenge/{key}: the sandbox's simulated 3-D Secure or bank page; once answered, or
 * closed by reconciliation, it says so and links back to the checkout.
 */
export const handler = pageEndpoint(async (event, deps) => {
  const key = event.pathParameters?.key ?? '';
  const nonce = newNonce();
  const challenge = await deps.sandbox.challenge(key);
  if (!challenge) return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  // The answer is a form post whose redirects end on the merchant's return URLs (through
  // /auth/{token}/complete); browsers check form-action on every redirect, so those origins are
  // allowed. The page opens where the checkout page was, so the merchant's framing rules apply too.
  const payment = await deps.store.findPayment(paymentIdOf(key));
  const merchant = payment ? await deps.merchants.find(payment.merchantKey) : undefined;
  const html = renderChallenge(challenge, `/sandbox/challenge/${encodeURIComponent(key)}`, nonce, challenge.returnUrl);
  return htmlResponse(200, html, contentSecurityPolicy(nonce, payment, merchant), Boolean(merchant?.frameAncestors?.length));
});
