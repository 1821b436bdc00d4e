import { operatorEndpoint } from '../middleware/operator-endpoint';
import { cursorDeps } from '../wiring/cursor-key';
import { paymentSearchOf } from '../protocol/admin/queries';
import { boundedSearchWork, countPayments } from '../use-cases/admin/search';

/**
 * GET /admin/api/payments/count with the search's parameters: `{ total, complete, cursor? }`; while
 * `complete` is false, the same request with `cursor` counts on. One of the operator's slots is held
 * meanwhile, and the part ends with its time budget (use-cases/admin/search.ts boundedSearchWork).
 */
export const handler = operatorEndpoint(({ event, deps, actor, deadline }) =>
  boundedSearchWork(deps, actor, deadline, (budget) => countPayments(deps, paymentSearchOf(event.queryStringParameters), budget)),
  { deps: cursorDeps },
);
