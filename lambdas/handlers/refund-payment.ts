import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { amountHashFields, validateAmountOperation } from '../protocol/merchant/operations';
import { refundPayment } from '../protocol/merchant/refund';

/** POST /api/v1/payment/refund (platform extension) */
export const handler = merchantApi<ReturnType<typeof validateAmountOperation>>()
  .use(validateBody(validateAmountOperation))
  .use(verifyHash(amountHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body, requestKey, answerBy }) => refundPayment(deps, merchantKey, body, { transId: requestKey?.transId, answerBy }), { deps: routeDeps });
