import { idempotencyKey, merchantApi, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { capture, captureResponse } from '../use-cases/capture-payment';
import { amountHashFields, operationAmount, ownPayment, validateAmountOperation } from '../use-cases/payment-operations';

/** POST /api/v1/payment/capture (platform extension) */
export const handler = merchantApi<ReturnType<typeof validateAmountOperation>>()
  .use(validateBody(validateAmountOperation))
  .use(verifyHash(amountHashFields))
  .use(idempotencyKey())
  .handler(async ({ deps, merchantKey, body, requestKey, answerBy }) => {
    const payment = await ownPayment(deps.store, merchantKey, body.payment_id);
    const result = await capture(deps, payment, operationAmount(body.amount, payment), `merchant:${merchantKey}`, requestKey?.transId, answerBy);
    return captureResponse(result, deps.clock.now());
  });
