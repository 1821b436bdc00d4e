import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantSecretDeps } from '../wiring/secrets';
import { rotatePasswordAudited } from '../use-cases/admin/merchants';

/**
 * POST /admin/api/merchants/{merchantKey}/password: a new signing password, in the answer only. It is
 * accepted at once (a hash that fails re-reads the secret); the old one until warm functions' cached
 * copy expires (SECRET_CACHE_TTL_SECONDS, five minutes by default).
 */
export const handler = operatorEndpoint(({ event, deps, actor }) => rotatePasswordAudited(deps, actor, event.pathParameters?.merchantKey ?? ''), { body: true, deps: merchantSecretDeps });
