import { operatorEndpoint } from '../middleware/operator-endpoint';
import { routeDeps } from '../wiring/acquirer';
import { paymentActionOf } from '../protocol/admin/actions';
import { operatorAction } from '../use-cases/admin/operator-actions';

/** POST /admin/api/payments/{paymentId}/{action} with {"amount"?}: capture, release, void, refund. */
export const handler = operatorEndpoint(
  ({ event, deps, actor, body }) => {
    const { action, typedAmount } = paymentActionOf(event.pathParameters?.action, body);
    return operatorAction(deps, actor, event.pathParameters?.paymentId ?? '', action, typedAmount);
  },
  { body: true, deps: routeDeps },
);
