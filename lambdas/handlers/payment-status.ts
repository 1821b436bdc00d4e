import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { merchantSecretDeps } from '../wiring/secrets';
import { paymentLookupOf, paymentStatusHashFields, toStatusResponse, validatePaymentStatus, type PaymentStatusRequest } from '../protocol/merchant/status';
import { paymentStatus } from '../use-cases/payment-status';

/** POST /api/v1/payment/status */
export const handler = merchantApi<PaymentStatusRequest>()
  .use(validateBody(validatePaymentStatus))
  .use(verifyHash(paymentStatusHashFields))
  // A read: a replay under the same key reads again (the key only checks the body is the same).
  .use(idempotencyKey('current-state'))
  .handler(async ({ deps, merchantKey, body }) => {
    const { payment, now } = await paymentStatus(deps, merchantKey, paymentLookupOf(body));
    return toStatusResponse(payment, now);
  }, { deps: merchantSecretDeps });
