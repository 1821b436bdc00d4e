import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { paymentIdHashFields, validatePaymentId } from '../protocol/merchant/operations';
import { retryOwnPayment } from '../protocol/merchant/retry';

/** POST /api/v1/payment/retry (platform extension) */
export const handler = merchantApi<ReturnType<typeof validatePaymentId>>()
  .use(validateBody(validatePaymentId))
  .use(verifyHash(paymentIdHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body, requestKey }) => retryOwnPayment(deps, merchantKey, body, { transId: requestKey?.transId }), { deps: routeDeps });
