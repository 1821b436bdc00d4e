import { operatorEndpoint } from '../middleware/operator-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { actionOutcomeOf, paymentActionOf } from '../protocol/admin/actions';
import { operatorAction } from '../use-cases/admin/operator-actions';

/** POST /admin/api/payments/{paymentId}/{action} with {"amount"?}: capture, release, void, refund. */
export const handler = operatorEndpoint(
  async ({ event, deps, actor, body }) =>
    actionOutcomeOf(await operatorAction(deps, { actor, paymentId: event.pathParameters?.paymentId ?? '', ...paymentActionOf(event.pathParameters?.action, body) })),
  { body: true, deps: routeDeps },
);
