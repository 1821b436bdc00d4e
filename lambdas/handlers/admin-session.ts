import { operatorEndpoint, routesAllowedTo } from '../middleware/operator-endpoint';

/**
 * GET /admin/api/session: the signed-in operator, their role and the admin routes it allows (by
 * route key), so the portal offers only what the API would accept.
 */
export const handler = operatorEndpoint(async ({ actor, role }) => ({ username: actor, role, routes: routesAllowedTo(role) }));
