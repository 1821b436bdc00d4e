import { operatorEndpoint } from '../middleware/operator-endpoint';
import { searchPayments } from '../use-cases/admin';

/** GET /admin/api/payments?payment_id=&order=&status=&merchant=&email=&last4=&amount=&from=&to=&cursor= */
export const handler = operatorEndpoint(({ event, deps }) => {
  const q = event.queryStringParameters ?? {};
  return searchPayments(deps, {
    paymentId: q.payment_id,
    order: q.order,
    status: q.status,
    merchant: q.merchant,
    email: q.email,
    last4: q.last4,
    amount: q.amount,
    from: q.from,
    to: q.to,
    cursor: q.cursor,
  });
});
