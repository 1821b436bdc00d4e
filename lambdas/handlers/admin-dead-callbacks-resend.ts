import { withCallbacks } from '../callback-container';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { resendDeadView } from '../protocol/admin/callbacks';
import { resendDeadCallbacks } from '../use-cases/callback-log';

/** POST /admin/api/merchants/{merchantKey}/callbacks/resend-dead with {}: queues the merchant's dead callbacks again. */
export const handler = operatorEndpoint(
  async ({ event, deps, actor }) => {
    const merchantKey = event.pathParameters?.merchantKey ?? '';
    return resendDeadView(merchantKey, await resendDeadCallbacks(withCallbacks(deps), actor, merchantKey));
  },
  { body: true },
);
