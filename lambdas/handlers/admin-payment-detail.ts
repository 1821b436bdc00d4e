import { operatorEndpoint } from '../middleware/operator-endpoint';
import { paymentDetailView } from '../protocol/admin/payment-view';
import { paymentDetail } from '../use-cases/admin/payment-reads';

/** GET /admin/api/payments/{paymentId}: the payment, its transaction history and its audit entries. */
export const handler = operatorEndpoint(async ({ event, deps }) => paymentDetailView(await paymentDetail(deps, event.pathParameters?.paymentId ?? '')));
