import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import type { TestService } from '../support/service';

/**
 * The metrics a paid checkout emits, read from what the handlers write (Embedded Metric Format
 * lines on stdout, as CloudWatch reads them), request by request, against the list docs/operations.md
 * documents; and the request log line that ties each request's id to its payment and merchant.
 *
 * Metrics are off outside Lambda (lambdas/observability/telemetry.ts): this file turns them, and the
 * logger, on before the handlers are loaded.
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
process.env.LOG_LEVEL = 'INFO';
process.env.STAGE = 'dev';
const { startTestService } = require('../support/service') as typeof import('../support/service');
const { openSession, statusOf, submitPage, TEST_PAN } = require('../support/payments') as typeof import('../support/payments');
const { METRICS, METRIC_NAMESPACE } = require('../../lambdas/observability/telemetry') as typeof import('../../lambdas/observability/telemetry');

const OPERATIONS = readFileSync(join(__dirname, '../../docs/operations.md'), 'utf8');

/** The rows of the table that follows an HTML comment marker in docs/operations.md. */
function documentedTable(marker: string): string[][] {
  const start = OPERATIONS.indexOf(`<!-- ${marker} -->`);
  if (start < 0) throw new Error(`docs/operations.md has no <!-- ${marker} --> table`);
  const lines = OPERATIONS.slice(start).split('\n').slice(1);
  const rows = lines.slice(0, lines.findIndex((l, i) => i > 0 && !l.startsWith('|')));
  return rows.slice(2).map((row) => row.split('|').slice(1, -1).map((cell) => cell.trim()));
}
const names = (cell: string) => [...cell.matchAll(/`([A-Za-z0-9]+)`/g)].map((m) => m[1]!);

interface Emf {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [key: string]: unknown;
}
type Line = Record<string, unknown>;

let service: TestService;
let shop: MerchantCredentials;
let written: string[] = [];
const realWrite = process.stdout.write.bind(process.stdout);

beforeAll(async () => {
  service = await startTestService();
  shop = await service.createMerchant({ name: 'Metrics Shop' });
  jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array) => {
    written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  }) as typeof process.stdout.write);
});
afterAll(async () => {
  jest.restoreAllMocks();
  await service?.close();
});

/** What one request wrote to stdout, as JSON lines. */
async function during(request: () => Promise<unknown>): Promise<Line[]> {
  written = [];
  await request();
  const lines = written.join('').split('\n').filter((l) => l.trim().startsWith('{'));
  written = [];
  return lines.map((l) => JSON.parse(l) as Line);
}
const emfOf = (lines: Line[]) => lines.filter((l): l is Emf => typeof l._aws === 'object');
const emitted = (lines: Line[]) => emfOf(lines).flatMap((e) => e._aws.CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => x.Name))).sort();

it('outside Lambda SDK clients are left as they are (no trace middleware)', () => {
  const { traced } = require('../../lambdas/observability/telemetry') as typeof import('../../lambdas/observability/telemetry');
  expect(process.env.AWS_LAMBDA_FUNCTION_NAME).toBeUndefined();
  const add = jest.fn();
  const client = { middlewareStack: { add } };
  expect(traced(client)).toBe(client);
  expect(add).not.toHaveBeenCalled();
});

it('every metric the service emits is documented, with its unit, and nothing else is', () => {
  const rows = documentedTable('metrics');
  const documented = Object.fromEntries(rows.map(([name, unit]) => [names(name!)[0], unit]));
  expect(documented).toEqual(Object.fromEntries(Object.entries(METRICS).map(([name, unit]) => [name, unit])));
});

it('a paid checkout emits, request by request, exactly the documented metrics, and logs each request with its payment', async () => {
  const expected = Object.fromEntries(documentedTable('paid-checkout-metrics').map(([request, metrics]) => [request!.replace(/`/g, '').replace(/ \(.*\)$/, ''), names(metrics!).sort()]));
  expect(Object.keys(expected)).toEqual(['POST /api/v1/session', 'GET /auth/{token}', 'POST /auth/{token}']);

  let session!: Awaited<ReturnType<typeof openSession>>;
  const created = await during(async () => {
    session = await openSession(service, shop);
  });
  const viewed = await during(() => service.request({ path: session.path, method: 'GET' }));
  const paid = await during(async () => {
    const page = await submitPage(service, session, { card: '01/38' });
    expect(page.status).toBe(303);
  });

  expect(emitted(created)).toEqual(expected['POST /api/v1/session']);
  expect(emitted(viewed)).toEqual(expected['GET /auth/{token}']);
  expect(emitted(paid)).toEqual(expected['POST /auth/{token}']);

  for (const emf of emfOf([...created, ...viewed, ...paid])) {
    for (const set of emf._aws.CloudWatchMetrics) {
      expect(set.Namespace).toBe(METRIC_NAMESPACE);
      // Bounded dimensions only: no merchant or payment stream per request.
      expect(set.Dimensions).toEqual([['service', 'stage']]);
    }
    expect(emf).toMatchObject({ service: 'checkout', stage: 'dev' });
  }
  expect(emfOf(paid)[0]).toMatchObject({ PaymentsApproved: 1, ApprovalRate: 100 });

  // One `request` line per request, with the API request id (correlation_id), payment and merchant.
  for (const [lines, routeKey, statusCode] of [[created, 'POST /api/v1/session', 200], [viewed, 'GET /auth/{token}', 200], [paid, 'POST /auth/{token}', 303]] as const) {
    const requestLines = lines.filter((l) => l.message === 'request');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({
      level: 'INFO',
      routeKey,
      statusCode,
      correlation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      payment_id: session.paymentId,
      merchant_key: shop.merchant_key,
    });
  }
  // Nothing the handlers wrote holds the card number.
  expect(JSON.stringify([...created, ...viewed, ...paid])).not.toContain(TEST_PAN);
});

it('requests served at once by the local runner each log their own function, payment and merchant, and emit their own metrics', async () => {
  const other = await service.createMerchant({ name: 'Other Metrics Shop' });
  const sessions = await Promise.all([shop, other, shop, other].map((m) => openSession(service, m).then((s) => ({ merchant: m, session: s }))));
  // Sessions created, payment pages viewed and statuses read, all interleaved.
  const lines = await during(() =>
    Promise.all(
      sessions.flatMap(({ merchant, session }) => [
        openSession(service, merchant),
        service.request({ path: session.path, method: 'GET' }),
        statusOf(service, merchant, session.paymentId),
      ]),
    ),
  );
  const requestLines = lines.filter((l) => l.message === 'request');
  expect(requestLines).toHaveLength(12);
  const functionOf: Record<string, string> = { 'POST /api/v1/session': 'local-CreateSession', 'GET /auth/{token}': 'local-CheckoutPage', 'POST /api/v1/payment/status': 'local-PaymentStatus' };
  for (const line of requestLines) expect([line.routeKey, line.function_name]).toEqual([line.routeKey, functionOf[line.routeKey as string]]);
  // Each payment's lines name its own merchant; the pages and statuses name their own payment.
  const merchantOf = new Map(sessions.map(({ merchant, session }) => [session.paymentId, merchant.merchant_key]));
  for (const line of requestLines.filter((l) => l.routeKey !== 'POST /api/v1/session')) {
    expect(merchantOf.get(line.payment_id as string)).toBe(line.merchant_key);
  }
  expect(new Set(requestLines.map((l) => l.function_request_id)).size).toBe(12);
  // One metrics line per request with its own counts: four sessions, four page views.
  const counted = (name: string) => emfOf(lines).reduce((n, e) => n + (typeof e[name] === 'number' ? (e[name] as number) : 0), 0);
  expect([counted('SessionsCreated'), counted('PageViews')]).toEqual([4, 4]);
});

it('a merchant named in METRIC_MERCHANTS gets its own approval-rate stream; no other metric has the dimension', async () => {
  const { metrics, metricMerchants } = require('../../lambdas/observability/telemetry') as typeof import('../../lambdas/observability/telemetry');
  expect([...metricMerchants(' a, b ,,c')]).toEqual(['a', 'b', 'c']);
  expect(metricMerchants(Array.from({ length: 30 }, (_, i) => `m${i}`).join(',')).size).toBe(10);

  process.env.METRIC_MERCHANTS = 'big-shop';
  const lines = await during(async () => {
    // A fresh module: the merchant list is read once per process.
    await new Promise<void>((resolve) => {
      jest.isolateModules(() => {
        const fresh = require('../../lambdas/observability/telemetry') as typeof import('../../lambdas/observability/telemetry');
        fresh.telemetry.attemptRecorded('declined', 'big-shop');
        fresh.telemetry.attemptRecorded('approved', 'small-shop');
        fresh.metrics.publishStoredMetrics();
        resolve();
      });
    });
  });
  delete process.env.METRIC_MERCHANTS;
  const sets = emfOf(lines);
  const perMerchant = sets.filter((e) => e._aws.CloudWatchMetrics[0]!.Dimensions[0]!.includes('merchant'));
  expect(perMerchant).toHaveLength(1);
  expect(perMerchant[0]).toMatchObject({ merchant: 'big-shop', ApprovalRate: 0 });
  expect(perMerchant[0]!._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name)).toEqual(['ApprovalRate']);
  const shared = sets.find((e) => !e._aws.CloudWatchMetrics[0]!.Dimensions[0]!.includes('merchant'));
  expect(shared).toMatchObject({ PaymentsApproved: 1, PaymentsDeclined: 1, ApprovalRate: [0, 100] });
  // The module-wide instance is untouched by the isolated one.
  expect(metrics.hasStoredMetrics()).toBe(false);
});
