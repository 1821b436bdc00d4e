import { ServerResponse } from 'node:http';
import { ROUTES } from '../../lib/routes';
import { DEFAULT_MEMORY_MB } from '../../lib/constructs/checkout-function';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { runCaptureJob } from '../../lambdas/use-cases/capture-job';
import { updateMerchantSettings } from '../../lambdas/use-cases/manage-merchants';
import { DRAIN_DEFAULTS, JOB_END_MARGIN_MS } from '../../lambdas/use-cases/work-queue';
import { inParallel } from '../../lambdas/domain/parallel';
import { JOB_WORKERS } from '../../lib/jobs';
import { startCallbackReceiver } from '../support/callback-receiver';
import { answerChallenge, openSession, paidPayment, statusOf, submitPage } from '../support/payments';
import type { TestService } from '../support/service';
import { countCallsOf } from './aws-calls';
import { heatModel, WriteRecorder, type HeatModel } from './write-heat';
import { MERCHANT_REQUESTS_PER_SECOND_MAX } from '../../lambdas/config';
import { TARGETS } from './targets';

/**
 * Published on-demand prices, us-east-1, as read on the date below. The cost model multiplies them
 * by what a run of checkouts measured; nothing here is estimated that the run can count.
 */
export const PRICES = {
  asOf: '2026-11-25',
  region: 'us-east-1',
  /** DynamoDB on-demand, per million write / read request units. */
  dynamodbWriteMillion: 0.625,
  dynamodbReadMillion: 0.125,
  /** HTTP API, per million requests (first 300 million a month). */
  httpApiMillion: 1.0,
  /** Lambda on Arm (Graviton), per GB-second and per million requests. */
  lambdaGbSecond: 0.0000133334,
  lambdaRequestMillion: 0.2,
  /** Secrets Manager, per 10,000 API calls. */
  secretsTenThousand: 0.05,
} as const;

/** The steps of one completed checkout, as its requests reach the API (the customer's and the merchant's). */
export type Flow = 'plain' | '3ds';

interface Measured {
  /** Requests through the API per checkout, and Lambda invocations (the API's plus the callback's). */
  apiRequests: number;
  invocations: number;
  /** Milliseconds of handler time per checkout, measured here and billed at each function's memory. */
  gbSeconds: number;
  reads: number;
  secretsCalls: number;
  /** Bytes of the log lines our code wrote (stdout and stderr of the service, as Lambda ships them to CloudWatch Logs). */
  logBytes: number;
  /** Bytes of the answers' bodies the service sent (pages, JSON, redirects), toward the internet. */
  responseBytes: number;
  /** Calls to the acquirer (each one a wait on the gateway in prod). */
  acquirerCalls: number;
}

const ACQUIRER_METHODS = ['authorize', 'completeAction', 'lookup', 'capture', 'void', 'refund', 'reverse', 'close'] as const;

/**
 * Counts, while `on` says so, the bytes written to stdout and stderr (our handlers' log lines), the
 * bytes of response bodies the in-process HTTP servers send, and the calls to the acquirer.
 */
function meterProcess(acquirer: object, on: () => boolean): { logBytes: number; responseBytes: number; acquirerCalls: number; restore(): void } {
  const meter = { logBytes: 0, responseBytes: 0, acquirerCalls: 0, restore: () => undefined as void };
  const bytes = (chunk: unknown) => (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk instanceof Uint8Array ? chunk.byteLength : 0);
  const streams = [process.stdout, process.stderr].map((stream) => {
    const write = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      if (on()) meter.logBytes += bytes(chunk);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof stream.write;
    return () => void (stream.write = write);
  });
  const { write, end } = ServerResponse.prototype;
  ServerResponse.prototype.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    if (on()) meter.responseBytes += bytes(chunk);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof write;
  ServerResponse.prototype.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    if (on() && typeof chunk !== 'function') meter.responseBytes += bytes(chunk);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as typeof end;
  const target = acquirer as Record<string, unknown>;
  const originals = ACQUIRER_METHODS.filter((name) => typeof target[name] === 'function').map((name) => {
    const fn = target[name] as (...a: unknown[]) => unknown;
    target[name] = (...args: unknown[]) => {
      if (on()) meter.acquirerCalls++;
      return fn.apply(acquirer, args);
    };
    return () => void (target[name] = fn);
  });
  meter.restore = () => {
    streams.forEach((r) => r());
    Object.assign(ServerResponse.prototype, { write, end });
    originals.forEach((r) => r());
  };
  return meter;
}

/**
 * How callbacks leave: the cloud's stream dispatcher (CALLBACK_STREAM=1, as the stack sets it), or the
 * local runner's in-process stand-in for the stream (local/local-stream.ts), as `npm start` runs it.
 */
export type DeliveryPath = 'stream' | 'local';

export interface CostRow {
  readonly flow: Flow;
  readonly path: DeliveryPath;
  readonly checkouts: number;
  readonly heat: HeatModel;
  readonly measured: Measured;
  /** Dollars per million completed checkouts, by line. */
  readonly dollars: Readonly<Record<'api' | 'lambda' | 'dynamodbWrites' | 'dynamodbReads' | 'secrets', number>> & { readonly total: number };
}

const memoryOf = (routeId: string): number => (ROUTES.find((r) => r.id === routeId)?.memoryMb ?? DEFAULT_MEMORY_MB) / 1024;
/** The stream dispatcher runs at the default memory (lib/constructs/callback-delivery.ts). */
const CALLBACK_MEMORY_GB = DEFAULT_MEMORY_MB / 1024;

/**
 * Runs `checkouts` completed checkouts one after another on the local service (create-session, the
 * page, pay, status, the one sale callback delivered to a receiver that answers 200 at once) and
 * records every write the service makes: the key heat, the write units and the cost per checkout.
 * The 3-D Secure flow adds the challenge (the sandbox's pages stand in for the issuer's, and their
 * requests are not counted as ours) and the return to /auth/{token}/complete.
 */
export async function measureCheckouts(service: TestService, flow: Flow, checkouts: number, path: DeliveryPath = 'stream'): Promise<CostRow> {
  const recorder = new WriteRecorder(service.deps.db, {
    endpoint: service.backend.dynamodbEndpoint,
    region: 'local',
    tableName: service.backend.tableName,
  });
  const counter = countCallsOf(service);
  const receiver = await startCallbackReceiver();
  let merchantKey = '';
  const measured: Measured = { apiRequests: 0, invocations: 0, gbSeconds: 0, reads: 0, secretsCalls: 0, logBytes: 0, responseBytes: 0, acquirerCalls: 0 };
  let metering = false;
  const meter = meterProcess(service.deps.acquirer, () => metering);
  try {
    const merchant = await service.createMerchant({ name: `Key Heat Shop ${flow}`, settings: { notificationUrl: receiver.url } });
    merchantKey = merchant.merchant_key;
    // One checkout first, unrecorded: the secret cache and the merchant's settings warm, as in a running service.
    await runOne(0);
    recorder.reset();
    counter.reset();
    metering = true;
    for (let n = 1; n <= checkouts; n++) await recorder.during(n, () => runOne(n));
    metering = false;
    Object.assign(measured, { logBytes: meter.logBytes, responseBytes: meter.responseBytes, acquirerCalls: meter.acquirerCalls });
    const calls = counter.snapshot();
    measured.reads = calls.reads;
    measured.secretsCalls = calls.secretsManager;

    async function runOne(n: number): Promise<void> {
      const timed = async <T>(routeId: string, fn: () => Promise<T>): Promise<T> => {
        const started = performance.now();
        const out = await fn();
        if (n > 0) {
          measured.apiRequests++;
          measured.invocations++;
          measured.gbSeconds += ((performance.now() - started) / 1000) * memoryOf(routeId);
        }
        return out;
      };
      const session = await timed('CreateSession', () => openSession(service, merchant));
      await timed('CheckoutPage', () => service.request({ method: 'GET', path: session.path }));
      const paid = await timed('CheckoutPay', () => submitPage(service, session, { card: flow === '3ds' ? '05/38' : '01/38' }));
      if (flow === '3ds') {
        // The challenge's callback (3ds, waiting) goes out while the customer is at the challenge, as the stream hands it over.
        await dispatch('3ds');
        // The customer sees the challenge page first (the sandbox stands in for the issuer's page), then answers it.
        const answered = await answerChallenge(service, paid);
        if (answered.status !== 303) throw new Error(`3-D Secure checkout ${n}: the challenge answered ${answered.status}: ${answered.text.slice(0, 200)}`);
        const complete = new URL(String(answered.headers.location), service.baseUrl);
        const back = await timed('CheckoutComplete', () => service.request({ method: 'GET', path: `${complete.pathname}${complete.search}` }));
        if (back.status !== 303) throw new Error(`3-D Secure checkout ${n}: complete answered ${back.status}`);
      } else if (paid.status !== 303) throw new Error(`checkout ${n}: pay answered ${paid.status}: ${paid.text.slice(0, 200)}`);
      const status = await timed('PaymentStatus', () => statusOf(service, merchant, session.paymentId));
      if (status.status !== 'settled') throw new Error(`checkout ${n}: status ${status.status}`);
      await dispatch('sale');

      /**
       * The stream dispatcher's work after a write that made a callback due: one invocation delivering
       * it, as the stream hands the record over within a second (locally, the runner's stream has
       * delivered it in process already, or is at it).
       */
      async function dispatch(type: string): Promise<void> {
        const started = performance.now();
        if (path === 'stream') {
          const report = await runCallbackJob(service.deps, { paymentIds: [session.paymentId], deferSlow: true, fromStream: true });
          if (report.delivered !== 1) throw new Error(`checkout ${n}: the ${type} callback not delivered: ${JSON.stringify(report)}`);
        } else {
          if (!service.localStream) throw new Error('the local path needs the service\'s local stream (startTestService({ localStream: true }))');
          await service.localStream.idle();
        }
        const got = receiver.received.filter((c) => c.fields.id === session.paymentId && c.answer === 200).map((c) => c.fields.type);
        if (got[got.length - 1] !== type) throw new Error(`checkout ${n}: the ${type} callback not delivered (${got.join(', ') || 'none'})`);
        if (n > 0) {
          measured.invocations++;
          measured.gbSeconds += ((performance.now() - started) / 1000) * CALLBACK_MEMORY_GB;
        }
      }
    }
  } finally {
    meter.restore();
    await receiver.close();
    recorder.close();
  }
  // One merchant's partitions (its key in theirs) see at most its own checkouts: every checkout is a
  // merchant request, and no merchant can be given more than MERCHANT_REQUESTS_PER_SECOND_MAX a second.
  const heat = heatModel(recorder.writes, checkouts, { isMerchantPartition: (partition) => merchantKey !== '' && partition.includes(merchantKey), merchantMaxRate: MERCHANT_REQUESTS_PER_SECOND_MAX });
  const per = (x: number) => x / checkouts;
  const million = 1_000_000;
  const dollars = {
    api: per(measured.apiRequests) * PRICES.httpApiMillion,
    lambda: per(measured.invocations) * PRICES.lambdaRequestMillion + per(measured.gbSeconds) * PRICES.lambdaGbSecond * million,
    dynamodbWrites: heat.unitsPerCheckout * PRICES.dynamodbWriteMillion,
    // Every read here is a consistent read of an item under 4 KB, or a query of a few keys: one read unit each.
    dynamodbReads: per(measured.reads) * PRICES.dynamodbReadMillion,
    secrets: (per(measured.secretsCalls) * PRICES.secretsTenThousand * million) / 10_000,
  };
  return {
    flow,
    path,
    checkouts,
    heat,
    measured: {
      apiRequests: per(measured.apiRequests),
      invocations: per(measured.invocations),
      gbSeconds: per(measured.gbSeconds),
      reads: per(measured.reads),
      secretsCalls: per(measured.secretsCalls),
      logBytes: per(measured.logBytes),
      responseBytes: per(measured.responseBytes),
      acquirerCalls: per(measured.acquirerCalls),
    },
    dollars: { ...dollars, total: Object.values(dollars).reduce((a, b) => a + b, 0) },
  };
}

export const wruPass = (row: CostRow): boolean => row.heat.unitsPerCheckout <= TARGETS.writeUnits[row.flow];
export const ratePass = (row: CostRow): boolean => row.heat.maxRate >= TARGETS.checkoutsPerSecond && row.heat.merchantPeakWcu <= row.heat.limit;

/** The one-line verdict of the key-heat run: what `npm run bench -- --only keys` prints last. */
export const keysLine = (rows: readonly CostRow[]): string => {
  const rate = Math.min(...rows.map((r) => r.heat.maxRate));
  const peak = Math.max(...rows.map((r) => r.heat.merchantPeakWcu));
  const wru = rows.map((r) => `${r.flow}/${r.path} ${r.heat.unitsPerCheckout.toFixed(1)} (≤ ${TARGETS.writeUnits[r.flow]} ${wruPass(r) ? 'pass' : 'FAIL'})`).join(', ');
  return (
    `keys: ${Number.isFinite(rate) ? Math.floor(rate) : '∞'} checkouts/s before a partition shared by merchants passes 1000 WCU/s (≥ ${TARGETS.checkoutsPerSecond} ${rows.every(ratePass) ? 'pass' : 'FAIL'}); ` +
    `one merchant at its ceiling: ${Math.round(peak)} WCU/s on its hottest partition; WRU per checkout: ${wru}`
  );
};

const money = (x: number) => `$${x.toFixed(2)}`;
const n1 = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));

/** The "Key heat and cost" section of docs/benchmarks.md. */
export function renderKeysSection(rows: readonly CostRow[]): string[] {
  const plain = rows.find((r) => r.flow === 'plain') ?? rows[0]!;
  const out = [
    '## Key heat and cost per checkout',
    '',
    `A run of ${plain.checkouts} completed checkouts per flow on the local engine, one after another (create-session, the page, pay,`,
    'status, its callbacks delivered to a receiver answering 200: the sale, after the challenge\'s 3ds callback), with every write the service sent bracketed by a consistent',
    'read of the item before and after it (test/bench/write-heat.ts). From the two images follow the write units the table and',
    'each index consumed, on which partition key: ⌈max(size before, after) / 1 KB⌉ for the table, and for an index a put, a',
    'delete, or both when its key changed, or a put when a projected attribute changed (entry: keys, projected attributes and',
    '100 bytes). The sandbox acquirer\'s own records are left out: a real acquirer keeps its ledger elsewhere.',
    '',
    'Every checkout in the run belongs to **one merchant**: the worst case for the per-merchant keys. A partition shared by',
    'checkouts takes its share of every checkout (a sharded family\'s spread over its shards by the payment id\'s hash); a',
    'partition of one payment takes that payment\'s writes only, whatever the rate.',
    '',
    `One merchant's partitions (its key is in theirs: its request counter, its search days) see only`,
    `its checkouts, and every checkout is a merchant request (the session): at the highest request limit a merchant can be`,
    `given (${MERCHANT_REQUESTS_PER_SECOND_MAX} a second, ADR 0025) they take "WRU per checkout on it" × ${MERCHANT_REQUESTS_PER_SECOND_MAX}. The platform's rate is bounded by the`,
    'partitions all merchants share (the sharded queues).',
    '',
    `Callbacks leave by the cloud's stream dispatcher (\`stream\`: the write that makes a callback due leaves the dispatcher its`,
    'lease) or by the local runner\'s in-process stand-in for the stream (`local`, local/local-stream.ts: the same writes). Targets: ' +
      `≤ ${TARGETS.writeUnits.plain} WRU per plain checkout and ≤ ${TARGETS.writeUnits['3ds']} with 3-D Secure on both paths; ≥ ${TARGETS.checkoutsPerSecond} checkouts/s before a shared`,
    'partition passes 1,000 WCU/s, and one merchant at its ceiling under 1,000 WCU/s on each of its own.',
    '',
    '| flow | path | table / index | hottest partition | shards | WRU per checkout on it | WRU per checkout, all partitions | at 10,000 checkouts/s |',
    '|---|---|---|---|---|---:|---:|---:|',
  ];
  for (const r of rows) {
    for (const h of r.heat.rows) {
      const at = h.perMerchant
        ? `one merchant: ${Math.round(h.unitsPerCheckout * r.heat.merchantMaxRate)} WCU/s at ${r.heat.merchantMaxRate} checkouts/s`
        : h.shared
          ? `${Math.round(h.unitsPerCheckout * 10_000)} WCU/s`
          : 'one payment\'s writes';
      const whose = h.perMerchant ? ' (one merchant\'s)' : h.shared ? '' : ' (one payment\'s)';
      out.push(`| ${r.flow} | ${r.path} | ${h.target} | \`${h.partition}\`${whose} | ${h.shards} | ${n1(h.unitsPerCheckout)} | ${n1(h.targetUnitsPerCheckout)} | ${at} |`);
    }
    out.push(
      `| ${r.flow} | ${r.path} | **all** | | | | **${n1(r.heat.unitsPerCheckout)}** (≤ ${TARGETS.writeUnits[r.flow]}: ${wruPass(r) ? 'pass' : '**FAIL**'}) | ` +
        `**${Number.isFinite(r.heat.maxRate) ? Math.floor(r.heat.maxRate) : '∞'} checkouts/s** before a shared partition passes ${r.heat.limit} WCU/s; one merchant at most ${Math.round(r.heat.merchantPeakWcu)} WCU/s (${ratePass(r) ? 'pass' : '**FAIL**'}) |`,
    );
  }
  out.push(
    '',
    `Write units by command (plain flow): ${Object.entries(plain.heat.byCommand).map(([c, u]) => `${c.replace('Command', '')} ${n1(u)}`).join(', ')}.`,
    '',
    `### Cost per million completed checkouts (${PRICES.region} on-demand prices as published on ${PRICES.asOf})`,
    '',
    `Prices: HTTP API $${PRICES.httpApiMillion.toFixed(2)} per million requests; Lambda on Arm $${PRICES.lambdaGbSecond} per GB-s and $${PRICES.lambdaRequestMillion.toFixed(2)} per million requests; DynamoDB on-demand $${PRICES.dynamodbWriteMillion} per million write units and $${PRICES.dynamodbReadMillion} per million read units; Secrets Manager $${PRICES.secretsTenThousand} per 10,000 calls.`,
    'Lambda time is the handler time measured here (HTTP included), billed at each function\'s configured memory; the callback',
    'dispatcher\'s time grows with the merchant\'s answer time (about $0.003 per million checkouts for every millisecond the',
    'endpoint takes, at 256 MB). Reads: every read is a consistent read of one item under 4 KB or a query of a few index keys,',
    'counted as one read unit each. This table is the request-driven part; the all-in model below adds logs, X-Ray, NAT,',
    'data transfer and the gateway\'s wait, and the idle cost of each stage.',
    '',
    '| flow | API requests | Lambda invocations | GB-s | DynamoDB WRU | RRU | Secrets Manager calls | API | Lambda | DynamoDB writes | DynamoDB reads | Secrets Manager | **total** |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  // The cost is the cloud's: the stream dispatcher's path.
  for (const r of rows.filter((x) => x.path === 'stream')) {
    const m = r.measured;
    out.push(
      `| ${r.flow} | ${n1(m.apiRequests)} | ${n1(m.invocations)} | ${m.gbSeconds.toFixed(4)} | ${n1(r.heat.unitsPerCheckout)} | ${n1(m.reads)} | ${n1(m.secretsCalls)} | ${money(r.dollars.api)} | ${money(r.dollars.lambda)} | ${money(r.dollars.dynamodbWrites)} | ${money(r.dollars.dynamodbReads)} | ${money(r.dollars.secrets)} | **${money(r.dollars.total)}** |`,
    );
  }
  return out;
}

export const KEYS_SECTION_START = '<!-- keys:start -->';
export const KEYS_SECTION_END = '<!-- keys:end -->';

/** The report with its keys section replaced (or appended), for `npm run bench -- --only keys`. */
export function spliceKeysSection(report: string, section: readonly string[]): string {
  const block = [KEYS_SECTION_START, ...section, KEYS_SECTION_END].join('\n');
  const start = report.indexOf(KEYS_SECTION_START);
  const end = report.indexOf(KEYS_SECTION_END);
  if (start >= 0 && end > start) return `${report.slice(0, start)}${block}${report.slice(end + KEYS_SECTION_END.length)}`;
  return `${report.trimEnd()}\n\n${block}\n`;
}

export interface BacklogResult {
  readonly backlog: number;
  readonly report: { readonly examined: number; readonly captured: number; readonly failed: number };
  readonly seconds: number;
  readonly budgetSeconds: number;
  readonly setupSeconds: number;
}

/**
 * A backlog of `n` authorizations, all due for automatic capture, cleared by one run of the capture
 * job with a Lambda's budget (its 60 s timeout less the job's margin): the drain logic on the local
 * engine, every shard read in rounds, DRAIN_DEFAULTS.concurrency payments at a time.
 */
export async function measureBacklog(service: TestService, n: number): Promise<BacklogResult> {
  const setupStarted = performance.now();
  const shop = await service.createMerchant({ name: 'Backlog Shop' });
  await updateMerchantSettings(service.deps, shop.merchant_key, { dms: true, autoCaptureDelayMinutes: 0 });
  let made = 0;
  await inParallel(Array.from({ length: n }, (_, i) => i), 16, async () => {
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    if (paid.status.status !== 'pending') throw new Error(`backlog: an authorization answered ${paid.status.status}`);
    made++;
  });
  const setupSeconds = (performance.now() - setupStarted) / 1000;
  const budgetSeconds = 60 - JOB_END_MARGIN_MS / 1000;
  const started = performance.now();
  const report = await runCaptureJob(service.deps, { stopAt: Date.now() + budgetSeconds * 1000 });
  return { backlog: made, report, seconds: (performance.now() - started) / 1000, budgetSeconds, setupSeconds };
}

/** Acquirer answer times the capacity model is worked out for. */
const ACQUIRER_LATENCIES_MS = [100, 300] as const;

export function renderBacklogSection(b: BacklogResult): string[] {
  const perSecond = b.report.examined / b.seconds;
  const perWorkerSlots = DRAIN_DEFAULTS.concurrency;
  return [
    '## Background work: a backlog drained in one run',
    '',
    `${b.backlog} authorizations due for automatic capture at once (made in ${b.setupSeconds.toFixed(0)} s through the page, 16 at a time), then one`,
    `run of the capture job with a Lambda's budget (${b.budgetSeconds} s: the 60 s timeout less the job's margin), as \`runCaptureJob\` drains: every`,
    `shard of the work index read in rounds of ${DRAIN_DEFAULTS.pageSize} entries, ${perWorkerSlots} payments handled at once.`,
    '',
    '| backlog | examined | captured | failed | run | payments/s (local engine, sandbox acquirer in the same table) |',
    '|---:|---:|---:|---:|---:|---:|',
    `| ${b.backlog} | ${b.report.examined} | ${b.report.captured} | ${b.report.failed} | ${b.seconds.toFixed(1)} s | ${perSecond.toFixed(0)} |`,
    '',
    ...(b.report.examined < b.backlog
      ? [`Not drained in one run on this machine: ${b.backlog - b.report.examined} were left for the next run (a minute later), one local process holding the engine, the sandbox acquirer and the job.`, '']
      : []),
    `In the cloud each job runs ${JOB_WORKERS} invocations per tick, each draining its part of the work index's shards (the relay: of the outbox's), each`,
    `handling ${perWorkerSlots} payments at once until its budget: ${JOB_WORKERS * perWorkerSlots} payments in flight per job. What that keeps up with`,
    'depends on the acquirer\'s answer time, which dominates a capture, a reconciliation or a callback POST:',
    '',
    '| acquirer (or merchant endpoint) answer time | payments/s per job, all workers |',
    '|---:|---:|',
    ...ACQUIRER_LATENCIES_MS.map((ms) => `| ${ms} ms | ${Math.floor((JOB_WORKERS * perWorkerSlots * 1000) / ms)} |`),
  ];
}
