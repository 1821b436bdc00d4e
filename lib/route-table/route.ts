/**
 * What one entry of the route table says, and the helpers the table is written with: each kind of
 * route (merchant API, page, acquirer page, operator API) carries its defaults (method, throttle,
 * who may call, which secrets it reads), so an entry states only what is its own.
 */
import type { AcquirerName } from '../acquirer';
import type { OperatorRole } from '../operator-roles';
import type { AcquirerWorkKind } from '../time-budget';
import { callsAcquirer, type TableAccess } from '../table-access';
import type { RoutePath } from './paths';

export type RouteMethod = 'GET' | 'POST' | 'PUT';

export interface RouteAccess {
  /** The item kinds, actions and indexes its code uses (lib/table-access.ts); nothing else is granted. */
  readonly table: TableAccess;
  /** Reads merchant signing passwords from Secrets Manager; 'write' also creates and rotates them. */
  readonly merchantSecrets: boolean | 'write';
  /**
   * Needs the acquirer's credentials without touching its records (the S2S CARD redirect page);
   * a function that touches them (lib/table-access.ts acquirer blocks) gets them anyway.
   */
  readonly acquirerCredentials?: true;
  /** Seals and opens the portal's page cursors: reads the stack's cursor key (CURSOR_SECRET_ID). */
  readonly cursorSecret?: true;
  /**
   * Creates and rotates the acquirer accounts' passwords (the portal's account administration). A
   * function that calls the S2S CARD gateway reads them without saying so.
   */
  readonly accountSecrets?: 'write';
  /** Reads Apple Pay's secrets (merchant identity certificates, the domain-association file: APPLE_PAY_SECRET_PREFIX). */
  readonly applePaySecrets?: true;
}

export interface RouteFields extends RoutePath {
  /** Stable id: construct ids, function names and log groups derive from it. */
  readonly id: string;
  readonly method: RouteMethod;
  /** The handler module, relative to the project root; it exports `handler`. */
  readonly entry: string;
  readonly access: RouteAccess;
  /**
   * A path parameter that stands for a few spellings of one literal segment: the only values
   * (decoded) its handler serves, answering any other as a path no route has. The fallback
   * (FALLBACK_ROUTE) reads it to tell a wrong method (405) from an unknown path (404).
   */
  readonly servedValues?: { readonly [parameter: string]: readonly string[] };
  /** Exists only on stages whose acquirer this is (its own pages and callbacks). */
  readonly acquirer?: AcquirerName;
  /** Route-level throttling in the cloud (requests per second, burst). */
  readonly throttle: Throttle;
  readonly memoryMb?: number;
  /**
   * For a route without acquirer work; one with `acquirerWork` gets its timeout from the acquirer's
   * timeouts (lib/time-budget.ts), never a number written here.
   */
  readonly timeoutSeconds?: number;
  /**
   * The acquirer work one request does in a row (lib/time-budget.ts ACQUIRER_WORK): its function's
   * timeout is derived from it. Every route whose access reaches the acquirer's records declares it.
   */
  readonly acquirerWork?: AcquirerWorkKind;
  /**
   * Served by the local runner only; the stack makes no function or route of it (the local
   * stand-in for Cognito's sign-in pages, ADR 0019).
   */
  readonly localOnly?: true;
}

/**
 * Who may call: everyone (the route checks a merchant signature or a link token itself), or
 * signed-in operators (the API's JWT authorizer in the cloud, its local equivalent locally) whose
 * role is at least `role` (lib/operator-roles.ts; lambdas/middleware/operator-endpoint.ts refuses
 * anyone else with 403).
 */
type RouteAuth = { readonly auth?: undefined; readonly role?: undefined } | { readonly auth: 'operator'; readonly role: OperatorRole };

export type RouteDefinition = RouteFields & RouteAuth;

export interface Throttle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export const MERCHANT_API_THROTTLE: Throttle = { rateLimit: 100, burstLimit: 200 };
export const CHECKOUT_PAGE_THROTTLE: Throttle = { rateLimit: 200, burstLimit: 400 };
export const ADMIN_THROTTLE: Throttle = { rateLimit: 20, burstLimit: 40 };
/** The gateway's callbacks: a few per payment; a 429 would count as a timeout towards its URL block, so generous. */
export const ACQUIRER_CALLBACK_THROTTLE: Throttle = { rateLimit: 200, burstLimit: 400 };

/** `POST /api/v1/session`: a route's method and path, written as API Gateway's route key. */
type Key<M extends RouteMethod = RouteMethod> = `${M} /${string}`;

/** What an entry may add to its kind's defaults. */
type Extras = Partial<Pick<RouteFields, 'servedValues' | 'memoryMb' | 'timeoutSeconds' | 'acquirerWork' | 'localOnly'>>;

/** What a route reads beyond its table access; merchant passwords are not read unless it says so. */
type Reads = Omit<RouteAccess, 'merchantSecrets'> & { readonly merchantSecrets?: RouteAccess['merchantSecrets'] };

function route(id: string, key: Key, handler: string, reads: Reads, throttle: Throttle, extras: Extras = {}): RouteFields {
  const space = key.indexOf(' ');
  return {
    id,
    method: key.slice(0, space) as RouteMethod,
    path: key.slice(space + 1),
    entry: `lambdas/handlers/${handler}.ts`,
    access: { ...reads, merchantSecrets: reads.merchantSecrets ?? false },
    throttle,
    ...extras,
  };
}

/** The merchant API: a signed POST (the signature check reads the merchant's password), the merchant throttle. */
export const merchantRoute = (id: string, key: Key<'POST'>, handler: string, table: TableAccess, extras?: Extras): RouteDefinition =>
  route(id, key, handler, { table, merchantSecrets: true }, MERCHANT_API_THROTTLE, extras);

/** A page of the customer's checkout (the link token is its key), the page throttle. */
export const pageRoute = (id: string, key: Key, handler: string, reads: Reads, extras?: Extras): RouteDefinition =>
  route(id, key, handler, reads, CHECKOUT_PAGE_THROTTLE, extras);

/** A page or callback of one acquirer, on the stages of that acquirer only. */
export const acquirerRoute = (acquirer: AcquirerName, id: string, key: Key, handler: string, reads: Reads, throttle: Throttle = CHECKOUT_PAGE_THROTTLE): RouteDefinition => ({
  ...route(id, key, handler, reads, throttle),
  acquirer,
});

/** The portal's own page and sign-in: open to everyone, the admin throttle. */
export const portalRoute = (id: string, key: Key, handler: string, reads: Reads, extras?: Extras): RouteDefinition =>
  route(id, key, handler, reads, ADMIN_THROTTLE, extras);

/** The admin API: signed-in operators of at least `role`, the admin throttle. */
export const operatorRoute = (role: OperatorRole, id: string, key: Key, handler: string, reads: Reads, extras?: Extras): RouteDefinition => ({
  ...route(id, key, handler, reads, ADMIN_THROTTLE, extras),
  auth: 'operator',
  role,
});

/**
 * The secrets a route's function reads, by its entry: merchants' passwords, the cursor key, Apple
 * Pay's certificates, the acquirer's credentials (a route that calls the acquirer may run the S2S CARD connector, which
 * reads them; the sandbox keeps none). A route with none bundles no Secrets Manager client
 * (test/unit/route-bundles.test.ts); behind CloudFront every route also reads the origin secret.
 */
export function secretsRead(route: Pick<RouteFields, 'access' | 'acquirer'>): string[] {
  const { access } = route;
  return [
    ...(access.merchantSecrets ? ['merchant secrets'] : []),
    ...(access.cursorSecret ? ['cursor key'] : []),
    ...(access.accountSecrets ? ['acquirer account passwords'] : []),
    ...(access.applePaySecrets ? ['Apple Pay certificates'] : []),
    ...(access.acquirerCredentials || (callsAcquirer(access.table) && route.acquirer !== 'sandbox') ? ['acquirer credentials'] : []),
  ];
}
