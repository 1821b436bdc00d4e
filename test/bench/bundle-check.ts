import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { decodeLinkToken } from '../../lambdas/domain/checkout-link';
import { routeKey, type RouteDefinition } from '../../lib/routes';
import type { Bundle } from './bundles';
import { expectStatus, postJson } from './http-client';
import { createSessionBody, paymentStatusBody, type MerchantCredentials } from './requests';

export interface CheckContext {
  /** The in-process service running the TypeScript sources: it confirms what a bundle did. */
  readonly baseUrl: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly merchant: MerchantCredentials;
  session?: { readonly paymentId: string; readonly orderNumber: string; readonly linkToken: string };
}

export interface CheckRequest {
  readonly body?: Record<string, unknown>;
  readonly pathParameters?: Readonly<Record<string, string>>;
}

interface RouteCheck {
  readonly request: (ctx: CheckContext) => CheckRequest;
  /** Throws unless the bundled handler's answer, and its effect on the backend, are right. */
  readonly verify: (result: APIGatewayProxyStructuredResultV2, ctx: CheckContext) => Promise<string>;
}

/** Route id → how to invoke its bundle. A route without an entry is reported as not checked. */
const ROUTE_CHECKS: Readonly<Record<string, RouteCheck>> = {
  CreateSession: {
    request: (ctx) => {
      ctx.session = { paymentId: '', linkToken: '', orderNumber: `bench-bundle-${process.pid}` };
      return { body: createSessionBody(ctx.merchant, ctx.session.orderNumber) };
    },
    verify: async (result, ctx) => {
      const redirect = (JSON.parse(result.body ?? '{}') as { redirect_url?: string }).redirect_url ?? '';
      const linkToken = redirect.slice(redirect.lastIndexOf('/') + 1);
      const decoded = decodeLinkToken(linkToken);
      if (result.statusCode !== 200 || !decoded || !ctx.session) throw new Error(`answered ${result.statusCode}: ${result.body}`);
      ctx.session = { ...ctx.session, paymentId: decoded.paymentId, linkToken };
      // The payment the bundle wrote must be readable through the source handlers.
      const status = await postJson(ctx.baseUrl, '/api/v1/payment/status', paymentStatusBody(ctx.merchant, { payment_id: decoded.paymentId }));
      expectStatus('status of the payment the bundle created', status);
      return 'session created; payment found in DynamoDB';
    },
  },
  PaymentStatus: {
    request: (ctx) => ({ body: paymentStatusBody(ctx.merchant, { payment_id: sessionOf(ctx).paymentId }) }),
    verify: async (result, ctx) => {
      const out = JSON.parse(result.body ?? '{}') as { payment_id?: string; order?: { number?: string } };
      if (result.statusCode !== 200 || out.payment_id !== ctx.session?.paymentId || out.order?.number !== ctx.session?.orderNumber) {
        throw new Error(`answered ${result.statusCode}: ${result.body}`);
      }
      return 'status of that payment returned';
    },
  },
  CheckoutPage: {
    request: (ctx) => ({ pathParameters: { token: sessionOf(ctx).linkToken } }),
    verify: async (result) => {
      const type = String(result.headers?.['content-type'] ?? '');
      if (result.statusCode !== 200 || !type.startsWith('text/html')) throw new Error(`answered ${result.statusCode} ${type}: ${String(result.body).slice(0, 200)}`);
      return 'checkout page of that session rendered';
    },
  },
  // A route built from the stores alone (lambdas/wiring/stores.ts): no secret, no acquirer in its bundle.
  CheckoutStatus: {
    request: (ctx) => ({ pathParameters: { token: sessionOf(ctx).linkToken } }),
    verify: async (result) => {
      const state = (JSON.parse(result.body ?? '{}') as { state?: string }).state;
      if (result.statusCode !== 200 || !state) throw new Error(`answered ${result.statusCode}: ${result.body}`);
      return `state of that session's attempt read (${state})`;
    },
  },
};

function sessionOf(ctx: CheckContext): NonNullable<CheckContext['session']> {
  if (!ctx.session?.linkToken) throw new Error('the CreateSession check must run first');
  return ctx.session;
}

/** The API Gateway (HTTP API, payload 2.0) event of a request to `route`. */
export function apiEvent(route: RouteDefinition, request: CheckRequest): APIGatewayProxyEventV2 {
  const now = Date.now();
  const params = request.pathParameters ?? {};
  const rawPath = route.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const headers: Record<string, string> = { host: 'localhost', 'user-agent': 'bench', ...(request.body ? { 'content-type': 'application/json' } : {}) };
  return {
    version: '2.0',
    routeKey: routeKey(route),
    rawPath,
    rawQueryString: '',
    headers,
    ...(Object.keys(params).length ? { pathParameters: { ...params } } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: route.method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'bench' },
      requestId: randomUUID(),
      routeKey: routeKey(route),
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(request.body ? { body: JSON.stringify(request.body) } : {}),
    isBase64Encoded: false,
  };
}

const INVOKE_TIMEOUT_MS = 30_000;

interface Invocation {
  readonly result: APIGatewayProxyStructuredResultV2;
  readonly importMs: number;
  readonly invokeMs: number;
}

function invokeBundle(bundle: Bundle, event: APIGatewayProxyEventV2, environment: Readonly<Record<string, string>>): Promise<Invocation> {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'invoke-bundle.mjs'), [], {
      execArgv: [],
      env: { ...environment, PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    child.once('message', (m: { ok: boolean; error?: string } & Partial<Invocation>) => {
      if (m.ok && m.result) resolve({ result: m.result, importMs: m.importMs ?? NaN, invokeMs: m.invokeMs ?? NaN });
      else reject(new Error(m.error ?? 'no result'));
    });
    child.once('error', reject);
    // After a result this is a no-op; without one it is the failure.
    child.once('close', (code) => reject(new Error(`bundle process exited ${code} without a result: ${output.slice(0, 500)}`)));
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no answer within ${INVOKE_TIMEOUT_MS / 1000} s`));
    }, INVOKE_TIMEOUT_MS);
    timer.unref();
    child.send({ bundle: bundle.file, name: `bench-${bundle.spec.name}`, event });
  });
}

export interface BundleCheckResult {
  readonly route: RouteDefinition;
  readonly outcome: 'works' | 'failed' | 'not checked';
  readonly detail: string;
  readonly importMs?: number;
  readonly invokeMs?: number;
}

/**
 * Invokes each route's BUNDLED handler in a fresh process against the local backend, so an
 * alias or option in lib/bundling.ts that breaks runtime behaviour shows up here.
 */
export async function checkBundles(routes: readonly RouteDefinition[], bundles: readonly Bundle[], ctx: CheckContext): Promise<BundleCheckResult[]> {
  const results: BundleCheckResult[] = [];
  // In the order of ROUTE_CHECKS: later checks use the session the CreateSession check made.
  for (const [id, check] of Object.entries(ROUTE_CHECKS)) {
    const route = routes.find((r) => r.id === id);
    const bundle = bundles.find((b) => b.spec.name === id);
    if (!route || !bundle) continue;
    try {
      const invocation = await invokeBundle(bundle, apiEvent(route, check.request(ctx)), ctx.environment);
      const detail = await check.verify(invocation.result, ctx);
      results.push({ route, outcome: 'works', detail, importMs: invocation.importMs, invokeMs: invocation.invokeMs });
    } catch (e) {
      results.push({ route, outcome: 'failed', detail: (e as Error).message.split('\n')[0] ?? 'failed' });
    }
  }
  for (const route of routes) {
    if (!(route.id in ROUTE_CHECKS)) results.push({ route, outcome: 'not checked', detail: 'no sample request in test/bench/bundle-check.ts' });
  }
  return results;
}
