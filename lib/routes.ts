/**
 * The one route table. The CDK stack makes one Lambda and one HTTP API route of each entry; the
 * local runner serves the same handlers at the same paths. Nothing else lists routes: FALLBACK_ROUTE
 * (below) answers whatever none of them takes, from this table.
 *
 * The entries are written in lib/route-table/ by kind (merchant API, pages, admin), with the
 * helpers of lib/route-table/route.ts carrying each kind's defaults; their order here is the order
 * the local runner tries them in.
 */
import type { AcquirerName } from './acquirer';
import { NO_TABLE_ACCESS } from './table-access';
import { ADMIN_ROUTES } from './route-table/admin';
import { MERCHANT_API_ROUTES } from './route-table/merchant-api';
import { ACQUIRER_ROUTES, CHECKOUT_PAGE_ROUTES } from './route-table/pages';
import type { RouteAccess, RouteDefinition, Throttle } from './route-table/route';

export type { RouteAccess, RouteDefinition, RouteFields, RouteMethod, Throttle } from './route-table/route';
export { secretsRead } from './route-table/route';
export { canonicalPath, pathPattern, routesAtPath, type RoutePath } from './route-table/paths';

export const ROUTES: readonly RouteDefinition[] = [...MERCHANT_API_ROUTES, ...CHECKOUT_PAGE_ROUTES, ...ACQUIRER_ROUTES, ...ADMIN_ROUTES];

/**
 * The routes the stack makes functions and API routes of: all but the local runner's own, and of
 * the acquirer-specific ones only those of the stage's acquirer.
 */
export const deployedRoutes = (routes: readonly RouteDefinition[] = ROUTES, acquirer: AcquirerName = 'sandbox'): RouteDefinition[] =>
  routes.filter((r) => !r.localOnly && (r.acquirer === undefined || r.acquirer === acquirer));

/** The routes the local runner serves: its own included, of the acquirer-specific ones those of its acquirer. */
export const localRoutes = (acquirer: AcquirerName, routes: readonly RouteDefinition[] = ROUTES): RouteDefinition[] =>
  routes.filter((r) => r.acquirer === undefined || r.acquirer === acquirer);

/** `POST /api/v1/session` — the API Gateway route key of a route. */
export const routeKey = (r: Pick<RouteDefinition, 'method' | 'path'>): string => `${r.method} ${r.path}`;

/** API Gateway's route key for every request no other route takes. */
export const FALLBACK_ROUTE_KEY = '$default';

/**
 * The function behind the `$default` route: the answer to every request no entry of ROUTES takes,
 * an unknown path (404) or a known path with another method (405 with `Allow`), in the error
 * envelope (ADR 0024). It is no method and path, so it is not in ROUTES; the stack gives it its
 * own function and route, the local runner hands it what it cannot match. Open to everyone (no
 * authorizer, also under /admin): it reads nothing and says only what the route table says.
 */
export interface FallbackRouteDefinition {
  readonly id: string;
  readonly entry: string;
  readonly access: RouteAccess;
  readonly throttle: Throttle;
  readonly memoryMb?: number;
  readonly timeoutSeconds?: number;
}

export const FALLBACK_ROUTE: FallbackRouteDefinition = {
  id: 'NotFound',
  entry: 'lambdas/handlers/not-found.ts',
  access: { table: NO_TABLE_ACCESS, merchantSecrets: false },
  // A wrong path is an integration mistake, never a payment flow; each answer costs an invocation,
  // so scanners and retry loops are held to a modest rate (above it API Gateway answers 429).
  throttle: { rateLimit: 20, burstLimit: 40 },
};
