import { merchantEndpoint } from '../middleware/merchant-endpoint';
import { paymentIdHashFields, validatePaymentId } from '../use-cases/payment-operations';
import { retryPayment } from '../use-cases/retry-payment';

/** POST /api/v1/payment/retry (platform extension) */
export const handler = merchantEndpoint({
  validate: validatePaymentId,
  hashFields: paymentIdHashFields,
  run: ({ deps, merchantKey, body, requestKey }) => retryPayment(deps, merchantKey, body, { transId: requestKey?.transId }),
});
