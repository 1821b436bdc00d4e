import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantSecretDeps } from '../wiring/secrets';
import { rotateWebhookSecretAudited } from '../use-cases/admin/merchants';

/**
 * POST /admin/api/merchants/{merchantKey}/webhook-secret: a new secret signing callbacks, in the
 * answer only; the previous one signs beside it until `previous_valid_until`.
 */
export const handler = operatorEndpoint(({ event, deps, actor }) => rotateWebhookSecretAudited(deps, actor, event.pathParameters?.merchantKey ?? ''), { body: true, deps: merchantSecretDeps });
