import { operatorEndpoint } from '../middleware/operator-endpoint';
import { paymentDetail } from '../use-cases/admin';

/** GET /admin/api/payments/{paymentId}: the payment, its transaction history and its audit entries. */
export const handler = operatorEndpoint(({ event, deps }) => paymentDetail(deps, event.pathParameters?.paymentId ?? ''));
