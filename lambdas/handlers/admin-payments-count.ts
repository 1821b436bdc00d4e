import { operatorEndpoint } from '../middleware/operator-endpoint';
import { countPayments, paymentSearchOf } from '../use-cases/admin';

/**
 * GET /admin/api/payments/count with the search's parameters: `{ total, complete, cursor? }`; while
 * `complete` is false, the same request with `cursor` counts on.
 */
export const handler = operatorEndpoint(({ event, deps }) => countPayments(deps, paymentSearchOf(event.queryStringParameters)));
