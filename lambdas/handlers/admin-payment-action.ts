import { invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { operatorAction, type PaymentAction } from '../use-cases/admin';

const ACTIONS: readonly PaymentAction[] = ['capture', 'release', 'void', 'refund'];

/** POST /admin/api/payments/{paymentId}/{action} with {"amount"?}: capture, release, void, refund. */
export const handler = operatorEndpoint(
  ({ event, deps, actor, body }) => {
    const action = event.pathParameters?.action as PaymentAction;
    if (!ACTIONS.includes(action)) throw invalidRequest([{ path: 'action', message: RULE.choice }]);
    const amount = body.amount === undefined || body.amount === null ? undefined : String(body.amount);
    return operatorAction(deps, actor, event.pathParameters?.paymentId ?? '', action, amount);
  },
  { body: true },
);
