import { operatorEndpoint } from '../middleware/operator-endpoint';
import { csvResponse } from '../protocol/admin/csv-response';
import { cursorDeps } from '../wiring/cursor-key';
import { csvPart } from '../protocol/admin/payments-csv';
import { paymentSearchOf } from '../protocol/admin/queries';
import { boundedSearchWork, exportPayments } from '../use-cases/admin/search';

/**
 * GET /admin/api/payments/export with the search's parameters: one part of the search's CSV file
 * (text/csv). `X-Next-Cursor` names the next part; the request again with `cursor` set to it reads
 * on, until an answer carries none. Parts joined in order are the whole file. One of the operator's
 * slots is held meanwhile, and the part ends with its time budget (use-cases/admin/search.ts boundedSearchWork).
 */
export const handler = operatorEndpoint(
  async ({ event, deps, actor, deadline }) => {
    const search = paymentSearchOf(event.queryStringParameters);
    return csvPart(await boundedSearchWork(deps, actor, deadline, (budget) => exportPayments(deps, search, budget)), !search.cursor);
  },
  {
    deps: cursorDeps,
    respond: (part) => csvResponse('payments.csv', part),
  },
);
