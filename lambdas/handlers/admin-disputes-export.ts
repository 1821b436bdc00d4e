import { operatorEndpoint } from '../middleware/operator-endpoint';
import { csvResponse } from '../protocol/admin/csv-response';
import { disputesCsv } from '../protocol/admin/disputes';
import { disputeSearchOf } from '../protocol/admin/queries';
import { chargebackList } from '../use-cases/admin/disputes';

/** GET /admin/api/disputes/export with the view's filters: the month's chargebacks as one CSV file (text/csv). */
export const handler = operatorEndpoint(async ({ event, deps }) => chargebackList(deps, disputeSearchOf(event.queryStringParameters)), {
  respond: (read) => csvResponse(`chargebacks-${read.month}.csv`, { csv: disputesCsv(read), rows: read.chargebacks.length }),
});
