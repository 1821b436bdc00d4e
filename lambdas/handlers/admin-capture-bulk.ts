import { operatorEndpoint } from '../middleware/operator-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { bulkActionOf } from '../protocol/admin/actions';
import { bulkAction, bulkDeadlineOf } from '../use-cases/admin/operator-actions';

/** POST /admin/api/capture-queue/bulk (protocol/admin/actions.ts bulkActionOf). */
export const handler = operatorEndpoint(
  async ({ deps, actor, body, deadline }) => {
    const { action, paymentIds, amounts } = bulkActionOf(body);
    // Payments are started only while the function's time allows (its Lambda context), the rest answered "not started".
    return { results: await bulkAction(deps, actor, action, paymentIds, amounts, bulkDeadlineOf(deadline)) };
  },
  { body: true, deps: routeDeps },
);
