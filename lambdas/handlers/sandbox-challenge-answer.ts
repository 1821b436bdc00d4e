import { formFields, pageEndpoint } from '../middleware/page-endpoint';
import { sandboxDeps } from '../wiring/sandbox';
import { contentSecurityPolicy, htmlResponse, newNonce } from '../checkout-page/headers';
import { renderChallenge, returnPathFor } from '../adapters/sandbox-acquirer/challenge-page';
import { renderState } from '../checkout-page/render';
import { pageTexts } from '../checkout-page/texts';

/**
 * POST /sandbox/challenge/{key}: the customer confirms or refuses, and goes back to the checkout
 * (the return path the page carried). A wrong one-time code shows the page again (400) until the
 * sandbox's tries are used up. An answer to a challenge reconciliation has closed is refused
 * (409): the page says it is closed.
 */
export const handler = pageEndpoint(async (event, deps) => {
  const key = event.pathParameters?.key ?? '';
  // The sandbox's pages exist only where it is the stage's acquirer (the stack does not deploy them elsewhere).
  if (deps.config.ACQUIRER !== 'sandbox') {
    const nonce = newNonce();
    return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  }
  const form = formFields(event);
  const answered = await deps.sandbox.challenges.answer(key, {
    code: form?.get('code')?.trim() ?? undefined,
    confirm: form?.get('decision') === 'confirm',
  });
  const nonce = newNonce();
  if (!answered) return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce, texts: pageTexts(undefined, event.headers?.['accept-language']) }), contentSecurityPolicy(nonce), false);
  const back = returnPathFor(form?.get('return'), answered.paymentId);
  const payment = answered.result === 'closed' || answered.result === 'retry' || !back ? await deps.store.findPayment(answered.paymentId) : undefined;
  const texts = pageTexts(payment?.checkout?.language, event.headers?.['accept-language']);
  const merchant = payment ? await deps.merchants.find(payment.merchantKey) : undefined;
  if (answered.result === 'retry') {
    // A mistyped code: the same page again, saying so; the challenge stays open.
    const html = renderChallenge({ flow: answered.flow, state: 'open' }, `/sandbox/challenge/${encodeURIComponent(key)}`, nonce, back, { texts, payment, merchant, codeTriesLeft: answered.codeTriesLeft });
    return htmlResponse(400, html, contentSecurityPolicy(nonce, payment, merchant), Boolean(merchant?.frameAncestors?.length));
  }
  if (answered.result === 'closed') {
    const html = renderChallenge({ flow: answered.flow, state: 'closed' }, `/sandbox/challenge/${encodeURIComponent(key)}`, nonce, back, { texts, payment, merchant });
    return htmlResponse(409, html, contentSecurityPolicy(nonce, payment, merchant), Boolean(merchant?.frameAncestors?.length));
  }
  if (!back) {
    const html = renderChallenge({ flow: answered.flow, state: 'finished' }, `/sandbox/challenge/${encodeURIComponent(key)}`, nonce, undefined, { texts, payment, merchant });
    return htmlResponse(200, html, contentSecurityPolicy(nonce, payment, merchant), Boolean(merchant?.frameAncestors?.length));
  }
  return { statusCode: 303, headers: { location: back, 'cache-control': 'no-store' }, body: '' };
}, sandboxDeps);
