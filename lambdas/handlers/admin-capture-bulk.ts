import { operatorEndpoint } from '../middleware/operator-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { actionOutcomeOf, bulkActionOf } from '../protocol/admin/actions';
import { bulkAction, bulkDeadlineOf } from '../use-cases/admin/operator-actions';

/** POST /admin/api/capture-queue/bulk (protocol/admin/actions.ts bulkActionOf). */
export const handler = operatorEndpoint(
  async ({ deps, actor, body, deadline }) => {
    // Payments are started only while the function's time allows (its Lambda context), the rest answered "not started".
    const results = await bulkAction(deps, { actor, ...bulkActionOf(body), deadline: bulkDeadlineOf(deadline) });
    return { results: results.map(actionOutcomeOf) };
  },
  { body: true, deps: routeDeps },
);
