import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { FALLBACK_ROUTE, FALLBACK_ROUTE_KEY, ROUTES, routeKey, type FallbackRouteDefinition, type RouteDefinition } from '../lib/routes';
import { canonicalPath, pathPattern } from '../lib/route-table/paths';
import { importEntry } from './entries';
import { inInvocation, lambdaContext } from './lambda-context';
import { redactText } from '../lambdas/observability/redact';
import { verifyLocalOperatorToken } from '../lambdas/adapters/local/operator-auth';
import { ACQUIRER_TIMEOUTS, routeTimeoutSeconds, type AcquirerTimeouts } from '../lib/time-budget';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2 | string | undefined>;

/** API Gateway's payload limit for HTTP APIs. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

interface CompiledRoute {
  readonly route: RouteDefinition;
  readonly pattern: RegExp;
  readonly params: readonly string[];
  handler?: Handler;
}

const compile = (route: RouteDefinition): CompiledRoute => ({ route, ...pathPattern(route.path) });

/** What an event is built for: a route's key and its path parameters, or the fallback's `$default`. */
interface EventTarget {
  readonly routeKey: string;
  readonly params: readonly string[];
}

async function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return 'too-large';
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

const decodable = (s: string): boolean => {
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
};

const TEXTUAL = /^(text\/|application\/(json|x-www-form-urlencoded|javascript|xml))/;

/** Builds the API Gateway HTTP API (payload 2.0) event the Lambda would receive. */
export function toEvent(req: IncomingMessage, body: Buffer, target: EventTarget, match: RegExpExecArray | undefined, url: URL): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined && k !== 'cookie') headers[k] = Array.isArray(v) ? v.join(',') : v;
  }
  const cookies = req.headers.cookie ? req.headers.cookie.split(/;\s*/) : undefined;
  const local = req.socket.localAddress ?? '127.0.0.1';
  const listeningOn = `${local.includes(':') ? `[${local.replace(/^::ffff:/, '')}]` : local}:${req.socket.localPort ?? 0}`.replace(/^\[(\d+\.\d+\.\d+\.\d+)\]/, '$1');
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
  const pathParameters: Record<string, string> = {};
  target.params.forEach((name, i) => {
    pathParameters[name] = decodeURIComponent(match?.[i + 1] ?? '');
  });
  const contentType = headers['content-type'] ?? '';
  const textual = body.length === 0 || TEXTUAL.test(contentType) || contentType === '';
  const now = Date.now();
  return {
    version: '2.0',
    routeKey: target.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.replace(/^\?/, ''),
    headers,
    ...(cookies ? { cookies } : {}),
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(target.params.length ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      // As API Gateway does, the domain the request actually reached, not what its Host header claims.
      domainName: listeningOn,
      domainPrefix: listeningOn.split('.')[0] ?? 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: target.routeKey,
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(body.length ? { body: textual ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

function send(res: ServerResponse, result: APIGatewayProxyStructuredResultV2 | string | undefined): void {
  if (typeof result === 'string' || result === undefined) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(result ?? '');
    return;
  }
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(result.headers ?? {})) if (v !== undefined && v !== null) headers[k.toLowerCase()] = String(v);
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  res.writeHead(result.statusCode ?? 200, headers);
  res.end(result.body === undefined ? '' : result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

const gatewayAnswer = (res: ServerResponse, status: number, message: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ message }));
};

export interface AppOptions {
  /** Verifies operator tokens on admin routes, as API Gateway's JWT authorizer does in the cloud. */
  readonly operatorKey?: Uint8Array;
  /**
   * Where a refused request (an answer of 400 or more) is reported with its reason: the route (never
   * its raw path, which may hold a link token), the status and the error messages of the answer
   * (rule messages, never values; anything shaped like a card number masked). The runner prints
   * them; tests pass their own sink.
   */
  readonly logRefusal?: (line: string) => void;
  /**
   * The acquirer timeouts the functions are configured with (S2S_CARD_TIMEOUT_MS,
   * S2S_CARD_FOLLOW_UP_WAIT_MS): each acquirer route's timeout derives from them as the stack's
   * does. The stack's choice (lib/time-budget.ts ACQUIRER_TIMEOUTS) unless given.
   */
  readonly acquirerTimeouts?: AcquirerTimeouts;
  /** Multiplies every function's timeout (FUNCTION_TIMEOUT_SCALE, functionTimeoutScaleOf); 1 unless given. */
  readonly timeoutScale?: number;
  /**
   * The runner's own pages, no part of the route table nor of any stage (local/local-pages.ts): asked
   * first, answering for their paths only (undefined for any other).
   */
  readonly localPages?: (method: string, url: URL) => Promise<APIGatewayProxyStructuredResultV2 | undefined>;
}

/**
 * Each route's function timeout in seconds, by route id, as the runner invokes it: the one
 * derivation the stack uses (lib/time-budget.ts routeTimeoutSeconds), so a refund has the same time
 * here as in the cloud. Settings under which a route could not answer in time stop the start.
 */
export function runnerTimeouts(routes: readonly RouteDefinition[], timeouts: AcquirerTimeouts = ACQUIRER_TIMEOUTS): Map<string, number> {
  return new Map([...routes, FALLBACK_ROUTE].map((r) => [r.id, routeTimeoutSeconds(r, timeouts)]));
}

const AMOUNT_NOT_VALID = /(^|[\s.])(order\.)?amount: This value is not valid\./;
/** What "amount: This value is not valid." means, which the protocol's fixed wording does not say (docs/errors.md). */
export const AMOUNT_FORMAT_HINT = "an amount is a string with exactly its currency's decimals: 10.00 USD, 1500 JPY (none), 10.250 KWD; docs/errors.md";

/** The line a refused request is reported with. Reads the answer, never the request's body. */
export function refusalLine(method: string, where: string, status: number, answer: { body?: string; contentType?: string } = {}): string {
  let reason = '';
  if (answer.body && /json/i.test(answer.contentType ?? 'application/json')) {
    try {
      const json = JSON.parse(answer.body) as { error_message?: string; message?: string; errors?: { error_message?: string }[] };
      const details = (json.errors ?? []).map((e) => e.error_message).filter(Boolean);
      reason = [json.error_message ?? json.message, ...details].filter(Boolean).join(' ');
    } catch {
      /* not JSON: the status says it */
    }
  } else if (answer.body) reason = 'an HTML page (the page shows what to correct)';
  // The protocol fixes the rule's words; the runner's log may say what they mean for an amount.
  if (AMOUNT_NOT_VALID.test(reason)) reason += ` (${AMOUNT_FORMAT_HINT})`;
  // Each part masked on its own: a card number in the path must not run on into the status.
  return `refused ${method} ${redactText(where)} ${status}${reason ? `: ${redactText(reason)}` : ''}`.slice(0, 1000);
}

/**
 * Serves the route table the way API Gateway would: one handler per route, payload format 2.0, the
 * fallback function (lib/routes.ts FALLBACK_ROUTE) for whatever no route takes, as the `$default`
 * route does, and API Gateway's own answers where it answers itself (oversized bodies, a missing
 * operator token, a malformed escape in a path parameter).
 */
export function createApp(routes: readonly RouteDefinition[] = ROUTES, options: AppOptions = {}): Server {
  const compiled = routes.map(compile);
  const timeouts = runnerTimeouts(routes, options.acquirerTimeouts);
  const fallback: { readonly route: FallbackRouteDefinition; handler?: Handler } = { route: FALLBACK_ROUTE };
  const report = options.logRefusal ?? ((line: string) => console.log(line));
  const load = async (entry: string) => ((await importEntry(entry)) as { handler: Handler }).handler;
  return createServer(async (req, res) => {
    const apiGatewayError = (res: ServerResponse, status: number, message: string, where: string, reason = message) => {
      report(refusalLine(req.method ?? '?', where, status, { body: JSON.stringify({ message: reason }) }));
      gatewayAnswer(res, status, message);
    };
    /** Invokes a function as its Lambda would be, sends its answer and reports a refusal by `where` (a route, never a raw path). */
    const invoke = async (handler: Handler, event: APIGatewayProxyEventV2, fn: { id: string; memoryMb?: number }, where: string) => {
      const context = lambdaContext(fn.id, timeouts.get(fn.id)! * (options.timeoutScale ?? 1), fn.memoryMb);
      const result = await inInvocation(context, () => handler(event, context));
      send(res, result);
      const status = typeof result === 'object' && result ? (result.statusCode ?? 200) : 200;
      if (status >= 400 && typeof result === 'object') {
        const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
        report(refusalLine(req.method ?? '?', where, status, { body: result.isBase64Encoded ? undefined : result.body, contentType: headers['content-type'] }));
      }
    };
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const path = canonicalPath(url.pathname);
      const local = options.localPages ? await options.localPages(req.method ?? 'GET', url) : undefined;
      if (local) return send(res, local);
      let found: { c: CompiledRoute; m: RegExpExecArray } | undefined;
      for (const c of compiled) {
        const m = c.route.method === req.method ? c.pattern.exec(path) : null;
        if (m) {
          found = { c, m };
          break;
        }
      }
      if (!found) {
        // API Gateway's `$default` route: the fallback function answers what no route takes (404,
        // or 405 naming the methods the path takes), its message the reason in the log.
        const where = `${fallback.route.id} (${FALLBACK_ROUTE_KEY})`;
        const body = await readBody(req);
        if (body === 'too-large') return apiGatewayError(res, 413, 'Request Entity Too Large', where);
        fallback.handler ??= await load(fallback.route.entry);
        return await invoke(fallback.handler, toEvent(req, body, { routeKey: FALLBACK_ROUTE_KEY, params: [] }, undefined, url), fallback.route, where);
      }
      // A malformed escape in a path parameter (`%ZZ`, a cut UTF-8 sequence) is the client's error.
      const where = `${found.c.route.id} (${routeKey(found.c.route)})`;
      if (found.m.slice(1).some((p) => p !== undefined && !decodable(p))) return apiGatewayError(res, 400, 'Bad Request', where);
      const body = await readBody(req);
      if (body === 'too-large') return apiGatewayError(res, 413, 'Request Entity Too Large', where);
      const event = toEvent(req, body, { routeKey: routeKey(found.c.route), params: found.c.params }, found.m, url);
      if (found.c.route.auth === 'operator') {
        const bearer = /^Bearer (\S+)$/i.exec(event.headers.authorization ?? '')?.[1];
        const claims = bearer && options.operatorKey ? await verifyLocalOperatorToken(bearer, options.operatorKey) : undefined;
        if (!claims) return apiGatewayError(res, 401, 'Unauthorized', where, bearer ? 'the operator token does not verify (expired, or not issued here)' : 'no operator token (Authorization: Bearer …)');
        (event.requestContext as { authorizer?: unknown }).authorizer = { jwt: { claims, scopes: null } };
      }
      found.c.handler ??= await load(found.c.route.entry);
      await invoke(found.c.handler, event, found.c.route, where);
    } catch (e) {
      // What a crashed Lambda looks like behind API Gateway.
      console.error('handler crashed', (e as Error).name);
      if (!res.headersSent) gatewayAnswer(res, 500, 'Internal Server Error');
      else res.end();
    }
  });
}
