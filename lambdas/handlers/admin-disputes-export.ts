import { JSON_HEADERS } from '../middleware/error-envelope';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { disputesCsv } from '../protocol/admin/disputes';
import { disputeSearchOf } from '../protocol/admin/queries';
import { chargebackList } from '../use-cases/admin/disputes';

/** GET /admin/api/disputes/export with the view's filters: the month's chargebacks as one CSV file (text/csv). */
export const handler = operatorEndpoint(async ({ event, deps }) => chargebackList(deps, disputeSearchOf(event.queryStringParameters)), {
  respond: (read) => ({
    statusCode: 200,
    headers: { ...JSON_HEADERS, 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="chargebacks-${read.month}.csv"`, 'x-export-rows': String(read.chargebacks.length) },
    body: disputesCsv(read),
  }),
});
