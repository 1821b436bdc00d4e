import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { deployedRoutes, ROUTES, type RouteDefinition } from '../../lib/routes';
import { canonicalPath, pathPattern, routesAtPath } from '../../lib/route-table/paths';
import { methodNotAllowed, routeNotFound, shownPath } from '../domain/unknown-route';
import { errorEnvelope, JSON_HEADERS, jsonResponse } from '../middleware/error-envelope';
import type { LambdaHandler } from '../middleware/merchant-endpoint';
import { requestObservability } from '../middleware/observability';

/** The order `Allow` lists methods in. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const byMethodOrder = (a: string, b: string) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b);

/**
 * Where a 405 says the method is not allowed: the route's path as the table writes it (with a link
 * token or an id as its template, `/auth/{token}`, never the value), or, for a path whose every
 * parameter takes only a few fixed values (`servedValues`), the path as sent, made safe to show.
 */
function where(route: RouteDefinition, path: string): string {
  const params = pathPattern(route.path).params;
  const fixed = params.length > 0 && params.every((name) => route.servedValues?.[name] !== undefined);
  return fixed ? shownPath(path) : route.path;
}

/**
 * The answer to a request no route took, from the route table alone:
 * - a path no route has: 404 ROUTE_NOT_FOUND;
 * - a path routes have, with another method: 405 METHOD_NOT_ALLOWED, `Allow` listing their methods;
 * - OPTIONS on such a path: 204 with `Allow` (no CORS headers: nothing here is called cross-origin);
 * - HEAD (no route takes it): the same status and headers as the refusal, without a body.
 * The path compared is the one API Gateway routed on (rawPath), normalized as the local runner does.
 */
export function answerUnmatched(routes: readonly RouteDefinition[], event: APIGatewayProxyEventV2): APIGatewayProxyStructuredResultV2 {
  const method = event.requestContext?.http?.method ?? 'GET';
  const path = event.rawPath || event.requestContext?.http?.path || '/';
  const served = routesAtPath(routes, canonicalPath(path));
  const allowed: string[] = [...new Set(served.map((r) => r.method))].sort(byMethodOrder);
  // A method a route takes here cannot reach the fallback in the cloud; should it ever, the path counts as unknown.
  const refused = allowed.length > 0 && !allowed.includes(method);
  const allow = { allow: allowed.join(', ') };
  if (method === 'OPTIONS' && refused) return { statusCode: 204, headers: { 'cache-control': JSON_HEADERS['cache-control'], ...allow } };
  const error = refused ? methodNotAllowed(method, where(served[0]!, path), allowed) : routeNotFound(method, path);
  const response = jsonResponse(error.httpStatus, error.toEnvelope());
  return { ...response, headers: { ...response.headers, ...(refused ? allow : {}) }, ...(method === 'HEAD' ? { body: '' } : {}) };
}

/**
 * The routes this function speaks for: those its stage deploys (the stage's acquirer, not the
 * local runner's own), the same on the runner, so the cloud and the runner give the same answer.
 */
let deployed: { acquirer: string; routes: RouteDefinition[] } | undefined;
function stageRoutes(): RouteDefinition[] {
  const acquirer = process.env.ACQUIRER === 's2s-card' ? 's2s-card' : 'sandbox';
  if (deployed?.acquirer !== acquirer) deployed = { acquirer, routes: deployedRoutes(ROUTES, acquirer) };
  return deployed.routes;
}

/**
 * API Gateway's `$default` route (lib/routes.ts FALLBACK_ROUTE): every request no route takes, in
 * the error envelope. It reads no table and no secret; the route table is all it knows (and the
 * stage's Apple Pay domain-association file, above).
 */
const core = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => appleDomainAssociation(event) ?? answerUnmatched(stageRoutes(), event);

export const APPLE_DOMAIN_ASSOCIATION_PATH = '/.well-known/apple-developer-merchantid-domain-association';

/**
 * The file Apple fetches to verify the stage's domain for Apple Pay (docs/wallets.md), when the
 * stage has one: its content is the stage's configuration, compiled into this function's bundle
 * (lib/stage-settings.ts `wallets.applePay.domainAssociationFile`; the local runner's environment).
 * Served here, without a route of its own: no table, no secret, and no function more in the stack.
 */
function appleDomainAssociation(event: APIGatewayProxyEventV2): APIGatewayProxyStructuredResultV2 | undefined {
  const file = process.env.APPLE_PAY_DOMAIN_ASSOCIATION;
  const method = event.requestContext?.http?.method ?? 'GET';
  if (!file || (event.rawPath || event.requestContext?.http?.path) !== APPLE_DOMAIN_ASSOCIATION_PATH || (method !== 'GET' && method !== 'HEAD')) return undefined;
  return { statusCode: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' }, body: method === 'HEAD' ? '' : file };
}
export const handler = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(core)
  .use(requestObservability())
  .use(errorEnvelope()) as unknown as LambdaHandler;
