import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantDetail } from '../use-cases/admin';

/** GET /admin/api/merchants/{merchantKey}: settings and their audit history. */
export const handler = operatorEndpoint(({ event, deps }) => merchantDetail(deps, event.pathParameters?.merchantKey ?? ''));
