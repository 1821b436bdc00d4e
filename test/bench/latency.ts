import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { decodeLinkToken } from '../../lambdas/domain/checkout-link';
import { ROUTES, type RouteDefinition } from '../../lib/routes';
import { signBody } from '../support/sign';
import { apiEvent } from './bundle-check';
import type { Bundle } from './bundles';
import { createSessionBody, type MerchantCredentials } from './requests';
import { percentile } from './stats';

/**
 * The latency budget: four operations through their BUNDLED handlers (the .mjs files section 1
 * measures), imported once into this process and invoked in a loop with API Gateway events, as a
 * warm Lambda invokes them, against the local engine. Each round opens a session, reads its status,
 * pays it on the page (the form post) and refunds part of it; each call is timed alone.
 */
export const LATENCY_PLAN = { warmup: 20, samples: 200 } as const;

/** The goals of the issue, per operation: p99 on this machine. */
export const LATENCY_TARGETS_P99_MS: Readonly<Record<string, number>> = { session: 15, status: 15 };

export interface LatencyRow {
  readonly operation: 'session' | 'status' | 'pay' | 'refund';
  readonly route: string;
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Calls that did not answer as they should (counted, not timed). */
  readonly errors: number;
  readonly firstError?: string;
  readonly targetP99Ms?: number;
}

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const context = (name: string): Context =>
  ({ functionName: name, awsRequestId: randomUUID(), getRemainingTimeInMillis: () => 30_000, callbackWaitsForEmptyEventLoop: false }) as unknown as Context;

const OPERATIONS = [
  { operation: 'session', route: 'CreateSession' },
  { operation: 'status', route: 'PaymentStatus' },
  { operation: 'pay', route: 'CheckoutPay' },
  { operation: 'refund', route: 'RefundPayment' },
] as const;

/**
 * Runs the rounds with the bundles' environment set in this process (the bundles read it when they
 * first build their dependencies), restored after. The merchant's request limit is raised for the
 * run: a round is three merchant requests, and the loop makes hundreds a second.
 */
export async function measureLatency(
  bundles: readonly Bundle[],
  environment: Readonly<Record<string, string>>,
  merchant: MerchantCredentials,
  plan: { readonly warmup: number; readonly samples: number } = LATENCY_PLAN,
): Promise<LatencyRow[]> {
  const vars = { ...environment, MERCHANT_REQUESTS_PER_SECOND: '1000' };
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    const handlers = new Map<string, { route: RouteDefinition; handler: Handler }>();
    for (const { route: id } of OPERATIONS) {
      const bundle = bundles.find((b) => b.spec.name === id);
      const route = ROUTES.find((r) => r.id === id);
      if (!bundle || !route) throw new Error(`no bundle for ${id}`);
      const mod = (await import(pathToFileURL(bundle.file).href)) as { handler: Handler };
      handlers.set(id, { route, handler: mod.handler });
    }
    const timings = new Map<string, number[]>(OPERATIONS.map((o) => [o.operation, []]));
    const errors = new Map<string, { count: number; first?: string }>(OPERATIONS.map((o) => [o.operation, { count: 0 }]));
    const call = async (operation: string, routeId: string, event: APIGatewayProxyEventV2, expect: number, record: boolean): Promise<APIGatewayProxyStructuredResultV2 | undefined> => {
      const { handler } = handlers.get(routeId)!;
      const started = performance.now();
      let result: APIGatewayProxyStructuredResultV2 | undefined;
      let problem: string | undefined;
      try {
        result = await handler(event, context(`bench-${routeId}`));
        if (result.statusCode !== expect) problem = `answered ${result.statusCode}: ${String(result.body).slice(0, 160)}`;
      } catch (e) {
        problem = (e as Error).message;
      }
      const ms = performance.now() - started;
      if (!record) return problem ? undefined : result;
      if (problem) {
        const e = errors.get(operation)!;
        e.count++;
        e.first ??= problem;
        return undefined;
      }
      timings.get(operation)!.push(ms);
      return result;
    };
    const route = (id: string) => handlers.get(id)!.route;
    for (let round = 0; round < plan.warmup + plan.samples; round++) {
      const record = round >= plan.warmup;
      const created = await call('session', 'CreateSession', apiEvent(route('CreateSession'), { body: createSessionBody(merchant, `latency-${process.pid}-${round}-${randomUUID().slice(0, 8)}`) }), 200, record);
      const redirect = created ? ((JSON.parse(String(created.body)) as { redirect_url?: string }).redirect_url ?? '') : '';
      const token = redirect.slice(redirect.lastIndexOf('/') + 1);
      const paymentId = decodeLinkToken(token)?.paymentId;
      if (!paymentId) continue;
      const statusBody = signBody('/api/v1/payment/status', { merchant_key: merchant.merchant_key, payment_id: paymentId }, merchant.password);
      await call('status', 'PaymentStatus', apiEvent(route('PaymentStatus'), { body: statusBody }), 200, record);
      const pay = apiEvent(route('CheckoutPay'), { pathParameters: { token } });
      const form = new URLSearchParams({ card_number: '4111111111111111', card_expiry: '01/38', card_cvv: '123', card_holder: 'John Doe' }).toString();
      const paid = await call('pay', 'CheckoutPay', { ...pay, headers: { ...pay.headers, 'content-type': 'application/x-www-form-urlencoded' }, body: form }, 303, record);
      if (!paid) continue;
      const refundBody = signBody('/api/v1/payment/refund', { merchant_key: merchant.merchant_key, payment_id: paymentId, amount: '1.00' }, merchant.password);
      await call('refund', 'RefundPayment', apiEvent(route('RefundPayment'), { body: refundBody }), 200, record);
    }
    return OPERATIONS.map(({ operation, route: id }): LatencyRow => {
      const xs = [...timings.get(operation)!].sort((a, b) => a - b);
      const e = errors.get(operation)!;
      const target = LATENCY_TARGETS_P99_MS[operation];
      return {
        operation,
        route: id,
        samples: xs.length,
        p50Ms: xs.length ? percentile(xs, 50) : NaN,
        p99Ms: xs.length ? percentile(xs, 99) : NaN,
        maxMs: xs.length ? xs[xs.length - 1]! : NaN,
        errors: e.count,
        ...(e.first ? { firstError: e.first } : {}),
        ...(target !== undefined ? { targetP99Ms: target } : {}),
      };
    });
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

export const latencyPass = (row: LatencyRow): boolean | undefined =>
  row.targetP99Ms === undefined ? undefined : row.errors === 0 && row.samples > 0 && row.p99Ms <= row.targetP99Ms;

export function latencyLines(rows: readonly LatencyRow[]): string[] {
  return rows.map((r) => {
    const pass = latencyPass(r);
    return `latency ${r.operation.padEnd(8)} (${r.route}, bundled, in-process) p50 ${r.p50Ms.toFixed(1)} ms  p99 ${r.p99Ms.toFixed(1)} ms  max ${r.maxMs.toFixed(1)} ms  ${r.samples} samples${r.errors ? `  ${r.errors} ERRORS: ${r.firstError}` : ''}${pass === undefined ? '' : `  p99 ≤ ${r.targetP99Ms} ms ${pass ? 'pass' : 'FAIL'}`}`;
  });
}

export function renderLatencySection(rows: readonly LatencyRow[]): string[] {
  return [
    '## Latency budget',
    '',
    `Four operations through their bundled handlers (section 1's .mjs files), each imported once into the benchmark process`,
    `and invoked with API Gateway events as a warm Lambda invokes them, against the local engine (dynalite, in the same process,`,
    `over HTTP). ${LATENCY_PLAN.samples} rounds after ${LATENCY_PLAN.warmup} unrecorded ones; a round opens a session, reads its status, pays it on the`,
    'page (the form post, sandbox acquirer) and refunds 1.00 of it; each call is timed alone (`performance.now()` around the',
    'handler). The engine shares the process, so its work is inside these times as the network and DynamoDB would be in AWS.',
    `Goal: session and status p99 ≤ ${LATENCY_TARGETS_P99_MS.session} ms on this machine.`,
    '',
    '| Operation | Route | Samples | p50 (ms) | p99 (ms) | max (ms) | Errors | Goal | Result |',
    '|---|---|---:|---:|---:|---:|---:|---|:-:|',
    ...rows.map((r) => {
      const pass = latencyPass(r);
      return `| ${r.operation} | ${r.route} | ${r.samples} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.maxMs.toFixed(1)} | ${r.errors}${r.firstError ? ` (${r.firstError.replace(/\|/g, '\\|')})` : ''} | ${r.targetP99Ms === undefined ? '—' : `p99 ≤ ${r.targetP99Ms} ms`} | ${pass === undefined ? '—' : pass ? 'pass' : '**FAIL**'} |`;
    }),
  ];
}
