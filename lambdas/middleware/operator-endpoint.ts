import middy from '@middy/core';
import { requestObservability } from './observability';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { roleAllows, strongestRole, type OperatorRole } from '../../lib/operator-roles';
import { ROUTES, routeKey } from '../../lib/routes';
import { storeDeps, type StoreKeys } from '../wiring/stores';
import type { Deps } from '../container';
import { ApiError } from '../domain/errors';
import type { AuditEntry, AuditLog } from '../ports/operators';
import { logger } from '../observability/logger';
import { errorEnvelope, jsonResponse } from './error-envelope';
import { jsonBody } from './json-body';
import { loadCursorSeal } from '../adapters/dynamodb/cursor';
import type { LambdaHandler } from './merchant-endpoint';

/** What every operator route has: the table's stores (lambdas/wiring/stores.ts). */
export type OperatorDeps = Pick<Deps, StoreKeys>;

export interface OperatorRequest<D extends OperatorDeps = OperatorDeps> {
  readonly event: APIGatewayProxyEventV2;
  /** Its audit log writes the operator's role into every entry appended for this request. */
  readonly deps: D;
  /** The signed-in operator, from the token the authorizer verified. */
  readonly actor: string;
  /** Their role, which the route's declared role has already been checked against. */
  readonly role: OperatorRole;
  readonly body: Record<string, unknown>;
  /** When the function's time ends (its Lambda context): work that may run long stops before it. */
  readonly deadline: Date;
}

type Claims = Record<string, unknown>;

const claimsOf = (event: APIGatewayProxyEventV2): Claims | undefined =>
  (event.requestContext as { authorizer?: { jwt?: { claims?: Claims } } }).authorizer?.jwt?.claims;

/** The operator's name from a verified token: Cognito's username claim, or the local one. */
export function actorOf(event: APIGatewayProxyEventV2): string | undefined {
  const claims = claimsOf(event);
  const name = claims?.['cognito:username'] ?? claims?.username ?? claims?.sub;
  return typeof name === 'string' && name ? name : undefined;
}

/**
 * The operator's role from a verified token: Cognito's `cognito:groups` (an array in the token,
 * which API Gateway's JWT authorizer hands over as the text `[admin viewer]`), else the `role` the
 * local runner signed. An operator in several groups has the strongest; in none, no role.
 */
export function roleOf(event: APIGatewayProxyEventV2): OperatorRole | undefined {
  const claims = claimsOf(event);
  const groups = claims?.['cognito:groups'];
  if (Array.isArray(groups)) return strongestRole(groups);
  if (typeof groups === 'string') return strongestRole(groups.replace(/^\[|\]$/g, '').split(/[\s,]+/));
  return strongestRole([claims?.role]);
}

/** The least role of each operator route, by route key: the route table's one declaration. */
const NEEDED_ROLE: ReadonlyMap<string, OperatorRole> = new Map(ROUTES.flatMap((r) => (r.auth === 'operator' ? [[routeKey(r), r.role] as const] : [])));

/** The operator routes a role may call (what the portal offers; the API refuses the others). */
export const routesAllowedTo = (role: OperatorRole): string[] => [...NEEDED_ROLE].filter(([, needed]) => roleAllows(role, needed)).map(([key]) => key);

/**
 * Who is calling and whether they may: 401 without a verified identity, 403 (the error envelope)
 * when their role is weaker than the route's, or the route declares none (never open by mistake).
 */
function authorize(event: APIGatewayProxyEventV2): { actor: string; role: OperatorRole } {
  const actor = actorOf(event);
  if (!actor) throw new ApiError('UNAUTHORIZED');
  const role = roleOf(event);
  const needed = NEEDED_ROLE.get(event.routeKey);
  if (!role || !needed || !roleAllows(role, needed)) {
    logger.warn('operator refused by role', { operator: actor, role: role ?? 'none', routeKey: event.routeKey, needed: needed ?? 'undeclared' });
    throw new ApiError('FORBIDDEN');
  }
  return { actor, role };
}

/** The same audit log, writing the role of the operator who acted into each entry. */
function auditOfRole(log: AuditLog, role: OperatorRole): AuditLog {
  return Object.assign(Object.create(log) as AuditLog, { append: (entry: AuditEntry) => log.append({ ...entry, actorRole: role }) });
}

/** The host of an Origin header; undefined for an opaque origin ("null", sent by sandboxed frames). */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/**
 * The chain of the admin API. The token is verified before the Lambda runs (the JWT authorizer;
 * locally its equivalent); this checks a verified identity is present, that its role may call the
 * route (before the body is even read), and, for writes, that the request is same-origin JSON.
 * Bearer tokens are never sent by a browser on its own, so a cross-site request cannot act as an
 * operator (CSRF); the Origin check is defence in depth.
 */
export function operatorEndpoint<T, D extends OperatorDeps = OperatorDeps>(
  run: (request: OperatorRequest<D>) => Promise<T>,
  options: {
    body?: boolean;
    respond?: (out: T) => APIGatewayProxyStructuredResultV2;
    /** The route's dependencies beyond the stores (a part of lambdas/wiring/): its acquirer, the merchants' secrets, the cursor key. */
    deps?: () => D;
  } = {},
): LambdaHandler {
  const core = async (event: APIGatewayProxyEventV2, context?: Context): Promise<APIGatewayProxyStructuredResultV2> => {
    const deadline = new Date(Date.now() + (context?.getRemainingTimeInMillis?.() ?? 30_000));
    const { actor, role } = authorize(event);
    const origin = event.headers?.origin;
    if (options.body && origin && hostOf(origin) !== (event.headers?.host ?? event.requestContext.domainName)) {
      throw new ApiError('UNAUTHORIZED', [], 'Cross-origin requests are not accepted.');
    }
    logger.appendKeys({ operator: actor, operatorRole: role });
    const base = (options.deps ?? (storeDeps as () => D))();
    // The cursor key, when it is a secret: read on the first request (and after its cache time), before any cursor is sealed or opened.
    await loadCursorSeal();
    const deps: D = { ...base, audit: auditOfRole(base.audit, role) };
    const out = await run({ event, deps, actor, role, body: (options.body ? event.body : {}) as unknown as Record<string, unknown>, deadline });
    return options.respond ? options.respond(out) : jsonResponse(200, out);
  };
  const chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(core)
    .use(requestObservability())
    .use(errorEnvelope())
    .use({ before: (request) => void authorize(request.event) });
  return (options.body ? chain.use(jsonBody()) : chain) as unknown as LambdaHandler;
}
