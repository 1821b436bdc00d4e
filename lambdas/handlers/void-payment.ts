import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { paymentIdHashFields, validatePaymentId } from '../protocol/merchant/operations';
import { voidOwnPayment } from '../protocol/merchant/void';

/** POST /api/v1/payment/void */
export const handler = merchantApi<ReturnType<typeof validatePaymentId>>()
  .use(validateBody(validatePaymentId))
  .use(verifyHash(paymentIdHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body, requestKey, answerBy }) => voidOwnPayment(deps, merchantKey, body, { transId: requestKey?.transId, answerBy }), { deps: routeDeps });
