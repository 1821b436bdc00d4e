import { merchantEndpoint } from '../middleware/merchant-endpoint';
import { paymentIdHashFields, validatePaymentId } from '../use-cases/payment-operations';
import { voidPayment } from '../use-cases/void-payment';

/** POST /api/v1/payment/void */
export const handler = merchantEndpoint({
  validate: validatePaymentId,
  hashFields: paymentIdHashFields,
  run: ({ deps, merchantKey, body, requestKey }) => voidPayment(deps, merchantKey, body, { transId: requestKey?.transId }),
});
