import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { paymentIdHashFields, validatePaymentId } from '../use-cases/payment-operations';
import { voidPayment } from '../use-cases/void-payment';

/** POST /api/v1/payment/void */
export const handler = merchantApi<ReturnType<typeof validatePaymentId>>()
  .use(validateBody(validatePaymentId))
  .use(verifyHash(paymentIdHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body, requestKey, answerBy }) => voidPayment(deps, merchantKey, body, { transId: requestKey?.transId, answerBy }));
