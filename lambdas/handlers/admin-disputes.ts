import { operatorEndpoint } from '../middleware/operator-endpoint';
import { disputesView } from '../protocol/admin/disputes';
import { disputeSearchOf } from '../protocol/admin/queries';
import { disputesOf } from '../use-cases/admin/disputes';

/** GET /admin/api/disputes?month=&merchant=&reason=&outcome= : a month's chargebacks and the merchants' chargeback rates. */
export const handler = operatorEndpoint(async ({ event, deps }) => disputesView(await disputesOf(deps, disputeSearchOf(event.queryStringParameters))));
