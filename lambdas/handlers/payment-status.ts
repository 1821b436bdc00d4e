import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { paymentStatus, paymentStatusHashFields, validatePaymentStatus } from '../use-cases/payment-status';

/** POST /api/v1/payment/status */
export const handler = merchantApi<ReturnType<typeof validatePaymentStatus>>()
  .use(validateBody(validatePaymentStatus))
  .use(verifyHash(paymentStatusHashFields))
  // A read: a replay under the same key reads again (the key only checks the body is the same).
  .use(idempotencyKey('current-state'))
  .handler(({ deps, merchantKey, body }) => paymentStatus(deps, merchantKey, body));
