import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { paymentStatus, paymentStatusHashFields, validatePaymentStatus } from '../use-cases/payment-status';

/** POST /api/v1/payment/status */
export const handler = merchantApi<ReturnType<typeof validatePaymentStatus>>()
  .use(validateBody(validatePaymentStatus))
  .use(verifyHash(paymentStatusHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body }) => paymentStatus(deps, merchantKey, body));
