import { merchantEndpoint } from '../middleware/merchant-endpoint';
import { amountHashFields, validateAmountOperation } from '../use-cases/payment-operations';
import { refundPayment } from '../use-cases/refund-payment';

/** POST /api/v1/payment/refund (platform extension) */
export const handler = merchantEndpoint({
  validate: validateAmountOperation,
  hashFields: amountHashFields,
  run: ({ deps, merchantKey, body, requestKey }) => refundPayment(deps, merchantKey, body, { transId: requestKey?.transId }),
});
