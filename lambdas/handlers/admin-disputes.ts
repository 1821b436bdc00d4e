import { operatorEndpoint } from '../middleware/operator-endpoint';
import { disputesView } from '../protocol/admin/disputes';
import { disputeSearchOf } from '../protocol/admin/queries';
import { disputesOf } from '../use-cases/admin/disputes';

/** Time kept back for the answer after counting stops (a page of a day's payments may be in flight then). */
const ANSWER_MARGIN_MS = 5_000;

/**
 * GET /admin/api/disputes?month=&merchant=&reason=&outcome= : a month's chargebacks and the merchants' chargeback rates.
 * Counting the rates' settled payments stops before the request's time ends: a part count is shown as one.
 */
export const handler = operatorEndpoint(async ({ event, deps, deadline }) =>
  disputesView(await disputesOf(deps, disputeSearchOf(event.queryStringParameters), { stopAt: deadline.getTime() - ANSWER_MARGIN_MS })),
);
