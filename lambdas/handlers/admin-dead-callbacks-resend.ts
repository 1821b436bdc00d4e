import { withCallbacks } from '../callback-container';
import { operatorEndpoint } from '../middleware/operator-endpoint';
import { resendDeadCallbacks } from '../use-cases/callback-log';

/** POST /admin/api/merchants/{merchantKey}/callbacks/resend-dead with {}: queues the merchant's dead callbacks again. */
export const handler = operatorEndpoint(({ event, deps, actor }) => resendDeadCallbacks(withCallbacks(deps), actor, event.pathParameters?.merchantKey ?? ''), { body: true });
