import { merchantEndpoint } from '../middleware/merchant-endpoint';
import { paymentStatus, paymentStatusHashFields, validatePaymentStatus } from '../use-cases/payment-status';

/** POST /api/v1/payment/status */
export const handler = merchantEndpoint({
  validate: validatePaymentStatus,
  hashFields: paymentStatusHashFields,
  run: ({ deps, merchantKey, body }) => paymentStatus(deps, merchantKey, body),
});
