import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { captureOwnPayment } from '../protocol/merchant/capture';
import { amountHashFields, validateAmountOperation } from '../protocol/merchant/operations';

/** POST /api/v1/payment/capture (platform extension) */
export const handler = merchantApi<ReturnType<typeof validateAmountOperation>>()
  .use(validateBody(validateAmountOperation))
  .use(verifyHash(amountHashFields))
  .use(idempotencyKey())
  .handler(({ deps, merchantKey, body, requestKey, answerBy }) => captureOwnPayment(deps, merchantKey, body, { transId: requestKey?.transId, answerBy }), { deps: routeDeps });
