import { formFields, pageEndpoint } from '../middleware/page-endpoint';
import { contentSecurityPolicy, htmlResponse, newNonce } from '../checkout-page/headers';
import { renderChallenge } from '../adapters/sandbox-acquirer/challenge-page';
import { renderState } from '../checkout-page/render';

/** The payment an attempt's idempotency key (`<payment_id>.<attempt>`) belongs to. */
const paymentIdOf = (idempotencyKey: string): string => idempotencyKey.slice(0, Math.max(0, idempotencyKey.lastIndexOf('.')));

/**
 * POST /sandbox/challenge/{key}: the customer confirms or refuses, and goes back to the checkout. An
 * answer to a challenge reconciliation has closed is refused (409): the page says it is closed.
 */
export const handler = pageEndpoint(async (event, deps) => {
  const key = event.pathParameters?.key ?? '';
  const form = formFields(event);
  const answered = await deps.sandbox.answer(key, {
    code: form?.get('code')?.trim() ?? undefined,
    confirm: form?.get('decision') === 'confirm',
  });
  const nonce = newNonce();
  if (!answered) return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  if (answered.result === 'closed') {
    const payment = await deps.store.findPayment(paymentIdOf(key));
    const merchant = payment ? await deps.merchants.find(payment.merchantKey) : undefined;
    const html = renderChallenge({ flow: answered.flow, state: 'closed' }, `/sandbox/challenge/${encodeURIComponent(key)}`, nonce, answered.returnUrl);
    return htmlResponse(409, html, contentSecurityPolicy(nonce, payment, merchant), Boolean(merchant?.frameAncestors?.length));
  }
  return { statusCode: 303, headers: { location: answered.returnUrl, 'cache-control': 'no-store' }, body: '' };
});
