import { merchantEndpoint } from '../middleware/merchant-endpoint';
import { chargeRecurring, recurringHashFields, validateRecurring } from '../use-cases/recurring-payment';

/** POST /api/v1/payment/recurring (also under its Cyrillic-spelled twin path). */
export const handler = merchantEndpoint({
  validate: validateRecurring,
  hashFields: recurringHashFields,
  run: ({ deps, merchantKey, body }) => chargeRecurring(deps, merchantKey, body),
});
