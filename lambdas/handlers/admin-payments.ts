import { operatorEndpoint } from '../middleware/operator-endpoint';
import { searchPayments } from '../use-cases/admin';

/** GET /admin/api/payments?payment_id=&order=&status=&merchant=&from=&to=&cursor= */
export const handler = operatorEndpoint(({ event, deps }) => {
  const q = event.queryStringParameters ?? {};
  return searchPayments(deps, { paymentId: q.payment_id, order: q.order, status: q.status, merchant: q.merchant, from: q.from, to: q.to, cursor: q.cursor });
});
