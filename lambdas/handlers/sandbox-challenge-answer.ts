import { formFields, pageEndpoint } from '../middleware/page-endpoint';
import { contentSecurityPolicy, htmlResponse, newNonce } from '../checkout-page/respond';
import { renderState } from '../checkout-page/render';

/** POST /sandbox/challenge/{key}: the customer confirms or refuses; back to the checkout. */
export const handler = pageEndpoint(async (event, deps) => {
  const key = event.pathParameters?.key ?? '';
  const form = formFields(event);
  const returnUrl = await deps.sandbox.answerChallenge(key, {
    code: form?.get('code')?.trim() ?? undefined,
    confirm: form?.get('decision') === 'confirm',
  });
  if (!returnUrl) {
    const nonce = newNonce();
    return htmlResponse(404, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  }
  return { statusCode: 303, headers: { location: returnUrl, 'cache-control': 'no-store' }, body: '' };
});
