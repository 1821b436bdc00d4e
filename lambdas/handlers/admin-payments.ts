import { operatorEndpoint } from '../middleware/operator-endpoint';
import { paymentSearchOf, searchPayments } from '../use-cases/admin';

/** GET /admin/api/payments?payment_id=&order=&status=&merchant=&email=&last4=&amount=&from=&to=&cursor= */
export const handler = operatorEndpoint(({ event, deps }) => searchPayments(deps, paymentSearchOf(event.queryStringParameters)));
