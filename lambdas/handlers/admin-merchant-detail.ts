import { operatorEndpoint } from '../middleware/operator-endpoint';
import { merchantDetailView } from '../protocol/admin/merchants';
import { merchantDetail } from '../use-cases/admin/merchants';

/** GET /admin/api/merchants/{merchantKey}: settings and their audit history. */
export const handler = operatorEndpoint(async ({ event, deps }) => merchantDetailView(await merchantDetail(deps, event.pathParameters?.merchantKey ?? '')));
