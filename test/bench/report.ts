import { secretsRead, type RouteDefinition } from '../../lib/routes';
import { flowTotals, type AwsCall, type OperationCalls } from './aws-calls';
import type { BundleCheckResult } from './bundle-check';
import type { Bundle, PackageBytes } from './bundles';
import type { Bytes, PageWeight, RenderTimings, Timing } from './checkout-page';
import type { WalletPageTimings } from './wallet-page';
import type { ImportTiming } from './cold-import';
import type { LoadPlan, LoadResult } from './load-generator';
import type { Machine } from './machine';
import { kib } from './stats';
import { bundleTargetKib, TARGETS } from './targets';
import { latencyLines, renderLatencySection, type LatencyRow } from './latency';

export const COMMAND = 'npm run bench';

export interface BundleRow {
  readonly bundle: Bundle;
  readonly route?: RouteDefinition;
  readonly cold: ImportTiming;
}

export interface ThroughputRow {
  readonly name: string;
  readonly result: LoadResult;
}

export interface BenchResults {
  readonly machine: Machine;
  readonly runSeconds: number;
  readonly bundles: readonly BundleRow[];
  /** One handler imported with --enable-source-maps, as when NODE_OPTIONS sets it. */
  readonly sourceMaps: { readonly bundle: string; readonly cold: ImportTiming };
  readonly awsCalls: readonly OperationCalls[];
  readonly bundleChecks: readonly BundleCheckResult[];
  readonly load: Omit<LoadPlan, 'url' | 'merchant'>;
  readonly throughput: readonly ThroughputRow[];
  readonly render: RenderTimings;
  readonly renderPlan: { readonly samples: number; readonly warmup: number };
  /** The card form with the wallets on and their scripts blocked, against no wallets (test/bench/wallet-page.ts). */
  readonly walletPage?: WalletPageTimings;
  readonly walletPagePlan?: { readonly samples: number; readonly warmup: number };
  readonly pageWeights: readonly PageWeight[];
  readonly money: MoneyResults;
  readonly latency: readonly LatencyRow[];
  /** What a part of the run could not measure (it is reported, and the run goes on). */
  readonly failures: readonly string[];
}

/** The money model and the crash run: how much was tried against the acquirer's ledger, and what diverged. */
export interface MoneyModelFigures {
  readonly runs: number;
  readonly operations: number;
  readonly faults: number;
  readonly divergences: number;
  readonly seconds: number;
  readonly seed: number;
  /** S2S CARD: the gateway's misbehaviour by kind. */
  readonly gatewayFaults?: Readonly<Record<string, number>>;
  /** Wallet payments: submissions with a wallet's token, faults that hit one (ours and the gateway's), payments a wallet paid. */
  readonly wallets?: { readonly operations: number; readonly faults: number; readonly paid: number };
}
export interface CrashFigures {
  readonly seed?: number;
  readonly payments: number;
  readonly requests: number;
  readonly kills: number;
  readonly fiveXx: number;
  readonly divergences: number;
  readonly reconcileMs: number;
  readonly callbackRepeats: number;
  /** S2S CARD: the gateway's misbehaviour, callbacks it sent while the runner was down, refunds accepted and not done at the kills. */
  readonly gateway?: { readonly faults: Readonly<Record<string, number>>; readonly callbacksUnreachable: number; readonly waitingAtKills: number };
  /** Payments a wallet's token paid for (its last attempt), and those of them paid. */
  readonly wallets?: { readonly payments: number; readonly paid: number };
}
export interface MoneyResults {
  readonly model: MoneyModelFigures;
  readonly crash?: CrashFigures;
  /** The same over the S2S CARD connector against the fake gateway (test/support/s2s-card-gateway.ts). */
  readonly s2s?: { readonly model: MoneyModelFigures; readonly crash?: CrashFigures };
}

function moneySection(r: Pick<BenchResults, 'money'>): string[] {
  const { model, crash, s2s } = r.money;
  const both = (label: string, f: (m: MoneyModelFigures) => string) => `| ${label} | ${f(model)} | ${s2s ? f(s2s.model) : '—'} |`;
  const crashes = (label: string, f: (c: CrashFigures) => string) => `| ${label} | ${crash ? f(crash) : '—'} | ${s2s?.crash ? f(s2s.crash) : '—'} |`;
  const pass = (n: number) => `${n} ${n === 0 ? '(pass)' : '**FAIL**'}`;
  const reconciled = (c: CrashFigures) => (c.reconcileMs < 0 ? 'never (**FAIL**)' : `${(c.reconcileMs / 1000).toFixed(1)} s`);
  const faultsOf = (f: Readonly<Record<string, number>> | undefined) => (f ? Object.entries(f).sort().map(([k, v]) => `${k} ${v}`).join(', ') : '');
  return [
    '## Money integrity: our records against the acquirer\'s ledger',
    '',
    'The money model (test/support/money-model.ts) drives the real use cases through random interleavings of pay',
    '(a card, or an Apple Pay or Google Pay token), second submissions of the link, 3-D Secure answers and',
    'abandonment, void, partial and full refunds, capture, release, recurring, retry, status and the',
    'jobs, with a fault injected at a random step boundary (a crash before or after a write, a request the acquirer',
    'never got, a reply it sent that was lost) and pairs of operations racing; after each run the reconciler runs',
    'and the ledger checker (test/support/ledger-checker.ts) compares every payment with the acquirer\'s own',
    'ledger. It runs on both connectors: the sandbox acquirer, and the S2S CARD connector against the fake gateway',
    '(test/support/s2s-card-gateway.ts) over HTTP, which in each run also misbehaves as drawn (requests dropped,',
    'answers lost after the work was done, answers past the timeout, callbacks lost, repeated, early, late, held',
    'and delivered at once, refunds carried out later). The crash run kills the local runner with SIGKILL under',
    'load three times (test/support/crash-run.ts); on S2S CARD the gateway keeps running and sends its callbacks',
    'while the runner is down. Goal: 0 divergences on both.',
    '',
    '| | sandbox | S2S CARD |',
    '|---|---|---|',
    both('Model runs (seed)', (m) => `${m.runs} (${m.seed})`),
    both('Operations run', (m) => String(m.operations)),
    both('Faults injected (step boundaries, and the gateway\'s)', (m) => String(m.faults)),
    both('Wallet payments: submissions / faults that hit one / paid', (m) => (m.wallets ? `${m.wallets.operations} / ${m.wallets.faults} / ${m.wallets.paid}` : '—')),
    both('Divergences found', (m) => pass(m.divergences)),
    both('Time', (m) => `${m.seconds.toFixed(1)} s`),
    ...(crash || s2s?.crash
      ? [
          crashes('Crash run: payments / requests', (c) => `${c.payments} / ${c.requests}`),
          crashes('Crash run: SIGKILLs of the local runner', (c) => String(c.kills)),
          crashes('Crash run: wallet payments / paid', (c) => (c.wallets ? `${c.wallets.payments} / ${c.wallets.paid}` : '—')),
          crashes('Crash run: HTTP 5xx from a live runner', (c) => String(c.fiveXx)),
          crashes('Crash run: divergences after reconcile', (c) => pass(c.divergences)),
          crashes('Time to reconcile after the last crash (reconcile delay 2 s, job every 10 s locally)', reconciled),
          crashes('Callbacks to the merchant re-sent after a crash (at-least-once)', (c) => String(c.callbackRepeats)),
          crashes('Gateway callbacks sent while the runner was down (lost)', (c) => (c.gateway ? String(c.gateway.callbacksUnreachable) : '—')),
          crashes('Refunds accepted by the gateway and not done at the kills', (c) => (c.gateway ? String(c.gateway.waitingAtKills) : '—')),
        ]
      : []),
    ...(s2s?.model.gatewayFaults ? ['', `The S2S CARD gateway's misbehaviour in the model runs: ${faultsOf(s2s.model.gatewayFaults)}.`] : []),
    ...(s2s?.crash?.gateway ? ['', `In the S2S CARD crash run (seed ${s2s.crash.seed}): ${faultsOf(s2s.crash.gateway.faults)}.`] : []),
  ];
}

/** `npm run bench -- --only money`: the money section of an existing report replaced by a new measurement. */
export function spliceMoneySection(report: string, money: MoneyResults): string {
  const section = moneySection({ money }).join('\n');
  const start = report.indexOf('## Money integrity');
  if (start < 0) return `${report.trimEnd()}\n\n${section}\n`;
  const next = report.indexOf('\n## ', start + 1);
  return `${report.slice(0, start)}${section}\n${next < 0 ? '' : report.slice(next)}`;
}

/** The money lines of the summary. */
export function moneyLines(money: MoneyResults): string[] {
  const out: string[] = [];
  const { model, crash, s2s } = money;
  const wallets = (m: MoneyModelFigures) => (m.wallets ? `, wallet payments ${m.wallets.operations} submissions / ${m.wallets.faults} faults / ${m.wallets.paid} paid` : '');
  out.push(`money model: ${model.runs} runs, ${model.operations} operations, ${model.faults} faults injected${wallets(model)}, ${model.divergences} divergences (seed ${model.seed})`);
  if (crash) out.push(`crash run: ${crash.kills} SIGKILLs, ${crash.requests} requests, ${crash.fiveXx} 5xx, ${crash.divergences} divergences, reconciled ${(crash.reconcileMs / 1000).toFixed(1)} s after the last restart`);
  if (s2s) out.push(`money model (S2S CARD): ${s2s.model.runs} runs, ${s2s.model.operations} operations, ${s2s.model.faults} faults injected${wallets(s2s.model)}, ${s2s.model.divergences} divergences (seed ${s2s.model.seed})`);
  if (s2s?.crash) out.push(`crash run (S2S CARD): ${s2s.crash.kills} SIGKILLs, ${s2s.crash.requests} requests, ${s2s.crash.fiveXx} 5xx, ${s2s.crash.divergences} divergences, ${s2s.crash.reconcileMs < 0 ? 'not reconciled' : `reconciled ${(s2s.crash.reconcileMs / 1000).toFixed(1)} s after the last restart`}`);
  return out;
}

const kb = (bytes: number) => kib(bytes).toFixed(1);
const ms = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '—' : n.toFixed(1));
const verdict = (pass: boolean | undefined) => (pass === undefined ? '—' : pass ? 'pass' : '**FAIL**');

const sampleCounts = (r: BenchResults): string => {
  const counts = [...new Set(r.bundles.filter((b) => !b.cold.error).map((b) => b.cold.samplesMs.length))].sort();
  return counts.join('–') || '0';
};

/** A function the stack deploys (not a reference row): held to the targets. */
const held = (row: BundleRow): boolean => row.bundle.spec.kind === 'handler';
export const sizeTargetKib = (row: BundleRow): number => bundleTargetKib(row.bundle.spec.group ?? 'customer');
export const sizePass = (row: BundleRow): boolean | undefined => (held(row) ? kib(row.bundle.bytes) <= sizeTargetKib(row) : undefined);
/** The cold-import limit of this run: the SDK-only row's median plus the allowance. */
export const importLimitMs = (rows: readonly BundleRow[]): number => {
  const sdk = rows.find((b) => b.bundle.spec.name === 'AWS SDK clients only');
  return (sdk && !sdk.cold.error ? sdk.cold.medianMs : NaN) + TARGETS.coldImportOverSdkMs;
};
export const importPass = (row: BundleRow, limitMs: number): boolean | undefined =>
  held(row) ? row.cold.error === undefined && row.cold.medianMs <= limitMs : undefined;
const coldCell = (row: BundleRow) => (row.cold.error ? `**import fails**: ${row.cold.error.replace(/\|/g, '\\|')}` : `${ms(row.cold.medianMs)} / ${ms(row.cold.minMs)}`);

/** Coarse groups of packages, to say what a bundle is made of. */
const FAMILIES: readonly (readonly [string, (pkg: string) => boolean])[] = [
  ['AWS SDK', (p) => /^(@aws-sdk|@smithy|@aws)\//.test(p) || ['mnemonist', 'obliterator', 'bowser', 'fast-xml-parser', 'strnum', 'tslib'].includes(p)],
  ['zod', (p) => p === 'zod'],
  ['Powertools logger & Middy', (p) => /^(@aws-lambda-powertools|@middy)\//.test(p)],
  ['project code', (p) => p === '(project)'],
];

export function families(packages: readonly PackageBytes[]): { name: string; bytes: number }[] {
  const totals = new Map<string, number>();
  for (const { name, bytes } of packages) {
    const family = FAMILIES.find(([, test]) => test(name))?.[0] ?? 'other';
    totals.set(family, (totals.get(family) ?? 0) + bytes);
  }
  return [...totals].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** Below this, a difference of cold-import medians between two rows of one run is not a finding. */
const NOISE_MS = 10;

const secretsClientBytes = (rows: readonly BundleRow[]) => rows.reduce((n, r) => Math.max(n, bytesOf(r.bundle, '@aws-sdk/client-secrets-manager')), 0);

const bytesOf = (bundle: Bundle, pkg: string) => bundle.packages.find((p) => p.name === pkg)?.bytes ?? 0;
const label = (row: BundleRow) => (row.route ? `${row.route.id} (${row.route.method} ${row.route.path})` : row.bundle.spec.name);

function bundleSection(r: BenchResults): string[] {
  const lines = [
    '## 1. Lambda bundles and cold import',
    '',
    'Every entry of `ROUTES` (lib/routes.ts) is bundled with esbuild\'s JS API and exactly `ESBUILD_OPTIONS` from',
    'lib/bundling.ts (the banner passed as `{ js }`, the only shape difference from CDK\'s string), plus',
    '`metafile: true`, into `.bench/bundles/`, each for prod\'s acquirer as prod deploys it (`acquirerDefine(\'s2s-card\')`: no',
    'sandbox code; the sandbox\'s own pages, deployed on sandbox stages only, for the sandbox). Size is the minified `.mjs`',
    'without its `.map`; KB = 1024 bytes;',
    'gzip is level 9. Cold import: a fresh `node` process per sample runs',
    '`const t = performance.now(); await import(bundle); print(performance.now() - t)` with only',
    '`TABLE_NAME`, `MERCHANT_SECRET_PREFIX` and `AWS_REGION` set (nothing touches the network at import);',
    `${sampleCounts(r)} samples per row (up to 11; fewer only when many rows would overrun the time budget), taken`,
    'round-robin across rows after one unrecorded warm-up import.',
    `Targets: a bundle of the merchant API, the customer's pages or the acquirer's callbacks ≤ ${TARGETS.bundleKib} KB; every other`,
    `function's (the portal's routes, the \`$default\` route, the jobs, the stream dispatcher) ≤ ${TARGETS.otherBundleKib} KB; median cold import`,
    `≤ the "AWS SDK clients only" row's median + ${TARGETS.coldImportOverSdkMs} ms (this run: ≤ ${ms(importLimitMs(r.bundles))} ms).`,
    '',
    `| Bundle | Minified KB | gzip KB | Cold import median / min (ms) | Size target | Size | Import ≤ ${ms(importLimitMs(r.bundles))} ms |`,
    '|---|---:|---:|---:|---:|:-:|:-:|',
  ];
  for (const row of r.bundles) {
    lines.push(
      `| ${label(row)} | ${kb(row.bundle.bytes)} | ${kb(row.bundle.gzipBytes)} | ${coldCell(row)} | ${held(row) ? `${sizeTargetKib(row)} KB` : '—'} | ${verdict(sizePass(row))} | ${verdict(importPass(row, importLimitMs(r.bundles)))} |`,
    );
  }
  const mapped = r.bundles.find((b) => b.bundle.spec.name === r.sourceMaps.bundle);
  lines.push(
    '',
    `With \`--enable-source-maps\` (what \`NODE_OPTIONS\` would add to read stack traces), ${r.sourceMaps.bundle} imports in ` +
      `${ms(r.sourceMaps.cold.medianMs)} ms median / ${ms(r.sourceMaps.cold.minMs)} ms min` +
      (mapped ? ` instead of ${ms(mapped.cold.medianMs)} / ${ms(mapped.cold.minMs)} ms.` : '.'),
  );
  lines.push('', 'Rows that are not routes:', '');
  for (const row of r.bundles.filter((b) => !b.route)) lines.push(`- **${row.bundle.spec.name}**: ${row.bundle.spec.note ?? ''}`);
  lines.push('', '### Top 5 packages by bytes in the bundle (KB, from the metafile)', '', '| Bundle | 1 | 2 | 3 | 4 | 5 |', '|---|---|---|---|---|---|');
  for (const row of r.bundles) {
    const top = row.bundle.packages.slice(0, 5).map((p) => `${p.name} ${kb(p.bytes)}`);
    lines.push(`| ${row.route?.id ?? row.bundle.spec.name} | ${[...top, '', '', '', '', ''].slice(0, 5).join(' | ')} |`);
  }
  lines.push('', '### By kind of code (KB)', '');
  const names = FAMILIES.map(([n]) => n).concat('other');
  lines.push(`| Bundle | ${names.join(' | ')} |`, `|---|${names.map(() => '---:').join('|')}|`);
  for (const row of r.bundles) {
    const f = families(row.bundle.packages);
    lines.push(`| ${row.route?.id ?? row.bundle.spec.name} | ${names.map((n) => kb(f.find((x) => x.name === n)?.bytes ?? 0)).join(' | ')} |`);
  }
  return lines;
}

/** "GetItem", "UpdateItem (conditional)", "GetSecretValue (Secrets Manager)". */
const callLabel = (c: AwsCall) =>
  `${c.command.replace(/Command$/, '')}${c.conditional ? ' (conditional)' : ''}${c.service === 'SecretsManager' ? ' (Secrets Manager)' : ''}`;
const callSequence = (calls: readonly AwsCall[]) => calls.map(callLabel).join(' → ') || '—';

function awsCallsSection(r: BenchResults): string[] {
  const lines = [
    '## 2. AWS calls per operation',
    '',
    'The service as the integration tests run it (`startTestService()` from test/support/service.ts: the local',
    'runner\'s `createApp()` on port 0, dynalite and the local Secrets Manager in memory, `localDeps()` + `setDeps()`),',
    'merchants made with `createMerchant()`. An SDK middleware on `deps.db.middlewareStack` and',
    '`deps.secretsClient.middlewareStack` (initialize step) records every command of one request; a retried command',
    'counts once. Each row is exactly one HTTP request; its set-up (a paid payment, a recurring chain, a fresh',
    'merchant) is made before the count by the same helpers the integration tests use (test/support/payments.ts),',
    'and answers that only say "accepted" are confirmed by a status request after it.',
    '',
    '- **Service vs acquirer.** The sandbox acquirer keeps its own records in the same table. Every method of',
    '  `deps.acquirer` / `deps.sandbox` is wrapped so that a command sent while one of them runs',
    '  (`AsyncLocalStorage`) is counted as the acquirer\'s; the partition key of every single-item command',
    '  (`SANDBOX#…`, `SANDBOX-CREDENTIAL#…` for the acquirer) cross-checks it, and the run stops if they disagree.',
    '  The DynamoDB column and the targets are the service\'s own calls; in production the acquirer\'s calls are',
    '  HTTP requests to the acquirer instead.',
    '- **Conditional** = a write with a `ConditionExpression`.',
    '- **Void** runs with the service\'s clock set to 12:00 UTC+3 of the run\'s day (moving with real time),',
    '  for the payment and the void, so the payment is inside its void window whatever the hour of the run.',
    '- **Replayed recurring** sends the first charge\'s request again, byte for byte; **retry** retries a',
    '  recurring charge the sandbox soft-declined (amount ending .52); **capture** is on a merchant switched to',
    '  DMS with `updateMerchantSettings(deps, key, { dms: true })`.',
    '',
    `Targets: create-session and status with a warm secret cache, exactly ${TARGETS.warmDynamoDbCalls} DynamoDB call and ` +
      `${TARGETS.warmSecretsManagerCalls} Secrets Manager calls; void, one conditional write plus at most one read. The cold row uses a merchant no request has used yet.`,
    '',
    '| Operation | DynamoDB (service) | Secrets Manager | DynamoDB (acquirer) | Service calls, in order | Acquirer calls, in order | Target | Result |',
    '|---|---:|---:|---:|---|---|---|:-:|',
  ];
  for (const { operation, calls, pass } of r.awsCalls) {
    const own = callSequence(calls.sequence.filter((c) => c.side === 'service'));
    const acquirer = callSequence(calls.sequence.filter((c) => c.side === 'acquirer'));
    lines.push(
      `| ${operation.name} | ${calls.dynamodb} | ${calls.secretsManager} | ${calls.acquirerDynamodb} | ${own} | ${acquirer} | ${operation.target?.label ?? '—'} | ${verdict(pass)} |`,
    );
  }
  const flows = flowTotals(r.awsCalls);
  if (flows.length) {
    lines.push('', 'The customer flows above, added up:', '', '| Flow | Requests | DynamoDB (service) | Secrets Manager | DynamoDB (acquirer) |', '|---|---:|---:|---:|---:|');
    for (const f of flows) lines.push(`| ${f.flow} | ${f.steps} | ${f.dynamodb} | ${f.secretsManager} | ${f.acquirerDynamodb} |`);
  }
  return lines;
}

function bundleCheckSection(r: BenchResults): string[] {
  const lines = [
    '## 3. Bundled handlers against the local backend',
    '',
    'Each of these bundles, built as in section 1 but for the sandbox (the local backend\'s acquirer, `.bench/bundles-sandbox/`),',
    'is imported in a fresh `node` process (no TypeScript loader) with the local',
    'backend\'s environment and invoked once with a signed API Gateway event; its effect is then confirmed',
    'through the source handlers. This is what proves the aliases in lib/bundling.ts keep runtime behaviour.',
    'Import and first invocation are informative (the first invocation includes the Secrets Manager fetch and',
    'new connections to the local stand-ins).',
    '',
    '| Route | Result | Checked | Import (ms) | First invocation (ms) |',
    '|---|:-:|---|---:|---:|',
  ];
  for (const c of r.bundleChecks.filter((x) => x.outcome !== 'not checked')) {
    const result = c.outcome === 'works' ? 'works' : '**FAILED**';
    lines.push(`| ${c.route.id} | ${result} | ${c.detail.replace(/\|/g, '\\|')} | ${ms(c.importMs)} | ${ms(c.invokeMs)} |`);
  }
  const unchecked = r.bundleChecks.filter((x) => x.outcome === 'not checked').map((x) => x.route.id);
  if (unchecked.length) {
    lines.push(
      '',
      `Not invoked (no sample request in test/bench/bundle-check.ts yet; section 1 still shows each of them imports): ${unchecked.join(', ')}.`,
    );
  }
  return lines;
}

function throughputSection(r: BenchResults): string[] {
  const lines = [
    '## 4. Local throughput',
    '',
    `A closed-loop load generator (test/bench/load-generator.ts, \`node:http\` with a keep-alive agent) in its own`,
    `process keeps ${r.load.concurrency} requests in flight for ${(r.load.durationMs / 1000).toFixed(0)} s after a ${(r.load.warmupMs / 1000).toFixed(0)} s warm-up. Every request is a`,
    'freshly signed create-session body with a unique order number, for both servers. Both servers run in the',
    'benchmark process; the local runner shares it with dynalite and the local Secrets Manager, so its figure',
    'is a property of this laptop setup, not of Lambda.',
    '',
    '| Server | Requests | Requests/s | p50 (ms) | p99 (ms) | max (ms) | non-2xx | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const { name, result } of r.throughput) {
    lines.push(`| ${name} | ${result.requests} | ${result.requestsPerSecond.toFixed(0)} | ${ms(result.p50Ms)} | ${ms(result.p99Ms)} | ${ms(result.maxMs)} | ${result.non2xx} | ${result.errors} |`);
  }
  return lines;
}

const timingRow = (what: string, t: Timing) => `| ${what} | ${t.samples} | ${ms(t.medianMs)} | ${ms(t.p99Ms)} | ${ms(t.minMs)} | ${ms(t.maxMs)} |`;

function renderSection(r: BenchResults): string[] {
  return [
    '## 5. Checkout page render time',
    '',
    'One fresh checkout link (a session of a merchant with default settings; the page shows the card form) is',
    `rendered ${r.renderPlan.samples} times by each of three methods after ${r.renderPlan.warmup} unrecorded warm-up rounds; the methods take turns,`,
    'so other work on the machine hits them alike. Times are wall-clock `performance.now()` around one call, in the',
    'benchmark process, which also runs dynalite and the local Secrets Manager:',
    '',
    '- **handler**: the server time. The CheckoutPage handler (lib/routes.ts entry, the TypeScript source as the',
    '  local runner loads it) is called in-process with an API Gateway event; it includes the Middy chain and the',
    '  page\'s two DynamoDB reads (payment, merchant; section 2) against dynalite in this process.',
    '- **HTML only**: `respond()` on the view `openLink()` returned once: template, nonce, CSP and headers, no I/O.',
    '- **HTTP round trip**: `fetch` GET /auth/{token} through the local runner over a keep-alive connection',
    '  (adds the runner\'s event building and the socket).',
    '',
    '| Method | Samples | Median (ms) | p99 (ms) | min (ms) | max (ms) |',
    '|---|---:|---:|---:|---:|---:|',
    timingRow('handler (event → response)', r.render.handler),
    timingRow('HTML only (`respond()`)', r.render.htmlOnly),
    timingRow('HTTP round trip (local runner)', r.render.http),
    ...walletPageLines(r),
  ];
}

/** Issue 27: the card form's readiness with the wallets' scripts blocked, beside a page without wallets. */
export function walletPageLines(r: Pick<BenchResults, 'walletPage' | 'walletPagePlan'>): string[] {
  if (!r.walletPage || !r.walletPagePlan) return [];
  const w = r.walletPage;
  return [
    '',
    '### The card form with the wallets\' scripts blocked',
    '',
    `In Chromium (headless, 390 × 844), ${r.walletPagePlan.samples} fresh links of each kind after ${r.walletPagePlan.warmup} unrecorded rounds, taking turns:`,
    'from navigation until the card number takes typing and the page\'s script has formatted it. Blocked: the wallets\'',
    'script requests refused at once; hanging: never answered (test/bench/wallet-page.ts).',
    '',
    '| Page | Samples | Median (ms) | p99 (ms) | min (ms) | max (ms) |',
    '|---|---:|---:|---:|---:|---:|',
    timingRow('no wallets', w.withoutWallets),
    timingRow('wallets on, scripts blocked', w.walletScriptsBlocked),
    timingRow('wallets on, scripts never answering', w.walletScriptsHanging),
  ];
}

export const PAGE_TARGET_KIB = 30;
// Judged on what a browser downloads (the page chain compresses it as the browser asks).
const pagePass = (w: PageWeight): boolean | undefined => (w.heldToTarget ? kib(w.wire.bytes) < PAGE_TARGET_KIB : undefined);
const bytesCells = (b: Bytes) => `${b.raw} | ${kb(b.raw)} | ${kb(b.gzip)} | ${kb(b.brotli)}`;

function pageWeightSection(r: BenchResults): string[] {
  const lines = [
    '## 6. Page weight',
    '',
    'The response body of each page as the local runner serves it (GET through `createApp()`; headers not',
    'counted). The CSS and JavaScript are inline: the contents of the `<style>` elements and of the executable',
    '`<script>` elements (not `type="application/json"` data blocks) are cut out with a regular expression, which',
    'is reliable on pages we render ourselves; "markup & data" is the rest of the document. Compressed with',
    '`node:zlib` at its defaults (gzip level 6, brotli quality 11); each part is compressed on its own, so the',
    'parts\' compressed sizes do not add up to the page\'s. KB = 1024 bytes.',
    `Target: the checkout page under ${PAGE_TARGET_KIB} KB on the wire (the body a browser sending \`Accept-Encoding: gzip, deflate, br\` downloads); the operators\' portal is shown for comparison.`,
    '',
    '| Page | Part | Bytes | KB | gzip KB | brotli KB | On the wire KB | Result |',
    '|---|---|---:|---:|---:|---:|---:|:-:|',
  ];
  for (const w of r.pageWeights) {
    lines.push(`| ${w.page} (${w.request}) | **whole page** | ${bytesCells(w.total)} | ${kb(w.wire.bytes)} (${w.wire.encoding}) | ${verdict(pagePass(w))} |`);
    lines.push(`| | \`<style>\` CSS | ${bytesCells(w.style)} | | |`);
    lines.push(`| | \`<script>\` JS | ${bytesCells(w.script)} | | |`);
    lines.push(`| | markup & data | ${bytesCells(w.markup)} | | |`);
  }
  lines.push(
    '',
    'Compression on the wire: the HTTP API passes bodies through as they are, so the page chain compresses them',
    '(lambdas/middleware/compress-pages.ts: brotli at quality 5, else gzip, as `Accept-Encoding` asks; `Vary:',
    'Accept-Encoding`). "On the wire" is the body a browser downloads; the gzip and brotli columns are `node:zlib` at',
    'its defaults, for comparison.',
  );
  return lines;
}

function callFindings(r: BenchResults): string[] {
  const out: string[] = [];
  const voidRow = r.awsCalls.find((c) => c.operation.name.startsWith('void'));
  if (voidRow) {
    const own = callSequence(voidRow.calls.sequence.filter((c) => c.side === 'service'));
    out.push(
      `- **Void** ${voidRow.pass ? 'meets' : '**misses**'} its target (one conditional write plus at most one read): ${own}` +
        ` for the service; the sandbox acquirer adds ${voidRow.calls.acquirerDynamodb} of its own (${callSequence(voidRow.calls.sequence.filter((c) => c.side === 'acquirer'))}), which a real acquirer would answer over HTTP.`,
    );
  }
  const flows = flowTotals(r.awsCalls);
  const heavy = r.awsCalls.filter((c) => c.calls.dynamodb > 3).map((c) => `${c.operation.name} (${c.calls.dynamodb})`);
  if (flows.length || heavy.length) {
    out.push(
      '- **Calls per flow**: ' +
        flows.map((f) => `${f.flow} takes ${f.dynamodb} service DynamoDB calls over ${f.steps} requests (+${f.acquirerDynamodb} in the sandbox acquirer)`).join('; ') +
        (heavy.length ? `. Requests with more than 3 service calls: ${heavy.join('; ')}. Section 2 lists each call in order.` : '.'),
    );
  }
  return out;
}

function pageFindings(r: BenchResults): string[] {
  const out: string[] = [];
  const pages = r.pageWeights.filter((w) => w.heldToTarget);
  const heaviest = pages.reduce<PageWeight | undefined>((a, b) => (!a || b.total.raw > a.total.raw ? b : a), undefined);
  if (heaviest) {
    const parts = [['CSS', heaviest.style], ['JS', heaviest.script], ['markup & data', heaviest.markup]] as const;
    const biggest = [...parts].sort((a, b) => b[1].raw - a[1].raw)[0];
    out.push(
      `- **Page weight**: the heaviest checkout page (${heaviest.page}) is ${kb(heaviest.total.raw)} KB raw, ${kb(heaviest.total.gzip)} KB gzip, ` +
        `${kb(heaviest.total.brotli)} KB brotli: ${pagePass(heaviest) ? 'under' : '**over**'} the ${PAGE_TARGET_KIB} KB compressed target. ` +
        (biggest ? `Its largest part is ${biggest[0]} (${kb(biggest[1].raw)} KB raw). ` : '') +
        `A browser downloads ${kb(heaviest.wire.bytes)} KB of it (${heaviest.wire.encoding}: the page chain compresses it as asked, section 6).`,
    );
  }
  const io = r.render.handler.medianMs - r.render.htmlOnly.medianMs;
  out.push(
    `- **Render time**: GET /auth/{token} takes ${ms(r.render.handler.medianMs)} ms median / ${ms(r.render.handler.p99Ms)} ms p99 in the handler; ` +
      `the HTML itself ${ms(r.render.htmlOnly.medianMs)} ms median, so ${ms(io)} ms of the median is the two DynamoDB reads and the Middy chain ` +
      '(here against dynalite in the same process; DynamoDB\'s latency in AWS is not measured by this run).',
  );
  return out;
}

/** A reference row of section 1 by its name. */
const referenceRow = (r: BenchResults, name: string): BundleRow | undefined => r.bundles.find((b) => b.bundle.spec.name === name);

/**
 * What the targets leave to project code once the libraries every handler carries are in: the
 * "required libraries only" row against both size targets and the import limit, and the runtime's
 * own SDK (loaded from node_modules) against the bundled one.
 */
function floorFindings(r: BenchResults, limit: number): string[] {
  const sdk = referenceRow(r, 'AWS SDK clients only');
  const libraries = referenceRow(r, 'required libraries only');
  const unbundled = referenceRow(r, 'AWS SDK clients from node_modules');
  const out: string[] = [];
  const over = (d: number) =>
    Math.abs(d) <= NOISE_MS
      ? `${ms(d)} ms against the SDK row, inside this machine's ${NOISE_MS} ms run-to-run noise`
      : `${ms(d)} ms of the ${TARGETS.coldImportOverSdkMs} ms the import target allows over the SDK row`;
  if (sdk && libraries) {
    const room = (target: number) => target * 1024 - libraries.bundle.bytes;
    const left = (target: number) => (room(target) >= 0 ? `leaves ${kb(room(target))} KB of the ${target} KB target to project code` : `is ${kb(-room(target))} KB over the ${target} KB target before any project code`);
    out.push(
      `- **The required libraries' floor**: the SDK clients with zod/mini, the Powertools Logger and Metrics and Middy's core, as a handler constructs them ` +
        `and with no project code, are ${kb(libraries.bundle.bytes)} KB: that ${left(TARGETS.bundleKib)}, and ${left(TARGETS.otherBundleKib)}. ` +
        `They import in ${ms(libraries.cold.medianMs)} ms median: ${over(libraries.cold.medianMs - sdk.cold.medianMs)} ` +
        `(limit ${ms(limit)} ms), leaving ${ms(Math.max(0, limit - libraries.cold.medianMs))} ms for the project's own code.`,
    );
  }
  if (sdk && unbundled) {
    out.push(
      `- **The runtime's SDK instead of a bundled one**: the same clients left out of the bundle (CDK's default) and loaded from node_modules import in ` +
        `${ms(unbundled.cold.medianMs)} ms median against ${ms(sdk.cold.medianMs)} ms bundled: it would take ${kb(sdk.bundle.bytes)} KB off every zip and ` +
        `${ms(unbundled.cold.medianMs - sdk.cold.medianMs)} ms on every cold start, so the bundles keep the SDK (ADR 0044).`,
    );
  }
  return out;
}

function whatDominatesSection(r: BenchResults): string[] {
  const handlers = r.bundles.filter(held);
  const limit = importLimitMs(r.bundles);
  const floor = referenceRow(r, 'empty module');
  const sdk = referenceRow(r, 'AWS SDK clients only');
  const naive = referenceRow(r, 'naive');
  const lines = ['## What dominates', ''];
  const oversized = handlers.filter((h) => sizePass(h) === false);
  const slow = handlers.filter((h) => importPass(h, limit) === false);
  if (!oversized.length && !slow.length) lines.push('Every handler meets both targets in this run.', '');
  if (r.machine.loadAverage.start > r.machine.cores || r.machine.loadAverage.end > r.machine.cores) {
    lines.push(
      `- **A busy machine**: the load average (${r.machine.loadAverage.start.toFixed(1)} → ${r.machine.loadAverage.end.toFixed(1)}) exceeded the ${r.machine.cores} cores, ` +
        'so other work inflated every timing in this run (see the empty-module row). Rows are still comparable with each other (samples are interleaved); absolute milliseconds are not.',
    );
  }

  for (const h of handlers.filter((x) => x.cold.error)) {
    lines.push(`- **${h.route?.id} cannot be imported** (\`${h.cold.error}\`): deployed as built, this Lambda would fail at init.`);
  }
  if (oversized.length) {
    const familyBytes = (family: string) => handlers.map((h) => families(h.bundle.packages).find((f) => f.name === family)?.bytes ?? 0);
    const sdkShare = Math.round((Math.max(...familyBytes('AWS SDK')) / (TARGETS.bundleKib * 1024)) * 100);
    const otherShare = Math.round((Math.max(...familyBytes('AWS SDK')) / (TARGETS.otherBundleKib * 1024)) * 100);
    const range = (family: string) => {
      const values = familyBytes(family);
      const [lo, hi] = [Math.min(...values), Math.max(...values)];
      return lo === hi ? `${kb(lo)} KB` : `${kb(lo)}–${kb(hi)} KB`;
    };
    lines.push(
      `- **Size**: ${oversized.length} of ${handlers.length} functions exceed their target (` +
        oversized.map((h) => `${h.route?.id ?? h.bundle.spec.name} +${kb(h.bundle.bytes - sizeTargetKib(h) * 1024)}`).join(', ') +
        `). ${handlers.filter((h) => bytesOf(h.bundle, '@aws-sdk/client-dynamodb') > 0).length} of ${handlers.length} functions carry the AWS SDK (${range('AWS SDK')}: DynamoDB and Secrets Manager clients, @smithy/core), ` +
        `${sdkShare}% of the ${TARGETS.bundleKib} KB budget and ${otherShare}% of the ${TARGETS.otherBundleKib} KB one before any project code. The rest: ` +
        `project code ${range('project code')}, zod ${range('zod')}, Powertools logger & Middy ${range('Powertools logger & Middy')}.`,
    );
  }
  const reference = handlers.find((h) => h.route?.id === 'CreateSession' && !h.cold.error) ?? handlers.find((h) => !h.cold.error);
  const both = (row: BundleRow) => `${ms(row.cold.medianMs)} ms median / ${ms(row.cold.minMs)} ms min`;
  if (floor && sdk && reference && slow.length) {
    lines.push(
      `- **Cold import**: importing an empty module in a fresh process already takes ${both(floor)} (the ESM loader itself). ` +
        `The AWS SDK clients alone (DynamoDB + lib-dynamodb + Secrets Manager, ${kb(sdk.bundle.bytes)} KB with the project's options) take ` +
        `${both(sdk)}, so the limit of this run is ${ms(limit)} ms. ${reference.route?.id} takes ${both(reference)}; the rest of the handler (validation, data tables, ` +
        `logger, Middy, project code) adds ${ms(reference.cold.medianMs - sdk.cold.medianMs)} ms on the medians. ` +
        'Import time follows the bytes V8 must parse and compile plus module-level work (SDK error-class registration, ' +
        'schema construction, building lookup tables), and the Node built-ins the SDK loads (`https`, `crypto`, `stream`). ' +
        `Differences of ${NOISE_MS} ms or less between rows are within this machine's run-to-run noise; the targets are judged on the median as specified.`,
    );
  }
  const comparable = reference;
  if (naive && comparable) {
    lines.push(
      `- **Before/after**: the naive bundle is ${kb(naive.bundle.bytes)} KB and imports in ${both(naive)}; ${comparable.route?.id} is ` +
        `${kb(comparable.bundle.bytes)} KB and ${both(comparable)} while doing far more (full validation, signatures, error envelope). ` +
        'The naive bundle\'s bulk is classic zod (all locales) and the SDK\'s full default credential chain (SSO, STS, INI files).',
    );
  }
  lines.push(...floorFindings(r, limit));
  const needlessSecrets = handlers.filter((h) => h.route && secretsRead(h.route).length === 0 && bytesOf(h.bundle, '@aws-sdk/client-secrets-manager') > 0);
  if (needlessSecrets.length) {
    lines.push(
      `- **Secrets Manager client in routes that never read secrets**: ${needlessSecrets.map((h) => h.route?.id).join(', ')} bundle it ` +
        `(${kb(bytesOf(needlessSecrets[0]!.bundle, '@aws-sdk/client-secrets-manager'))} KB of its own): their handlers import a part of lambdas/wiring/ they do not need.`,
    );
  }

  lines.push(...callFindings(r), ...pageFindings(r));

  lines.push('', '### Applied in lib/bundling.ts', '');
  lines.push(
    '- `@smithy/core/event-streams` is aliased to lib/bundle-stubs/event-streams.ts. The SDK reaches it only through a',
    '  dynamic `import()` for event-stream operations, which DynamoDB and Secrets Manager do not have; esbuild inlines',
    '  dynamic imports, so every handler carried about 19 KB of event-stream codecs (and their CRC32 and lazy-init',
    '  wrappers). The stub throws a clear error if a future client ever needs event streams; section 3 shows the',
    '  bundled handlers still work.',
    '- `@aws-sdk/middleware-endpoint-discovery` is aliased to lib/bundle-stubs/endpoint-discovery.ts. The DynamoDB client',
    '  resolved its endpoint-discovery configuration when built and made an endpoint cache (mnemonist\'s LRU and',
    '  obliterator, about 8 KB), yet no DynamoDB command of this SDK version applies the discovery middleware: the',
    '  regional endpoint is the endpoint. The stub keeps the configuration\'s shape, says discovery is off, and throws if',
    '  a client is asked to turn it on.',
    '- `@smithy/core/retry` is aliased to lib/bundle-stubs/retry.ts: the SDK\'s module with its `resolveRetryConfig`',
    '  replaced by the same function without the adaptive branch. Adaptive retries (AdaptiveRetryStrategy and its',
    '  client-side rate limiter, about 3 KB in every handler) run only when the retry mode is \'adaptive\', and no',
    '  function\'s is: no client sets `retryMode`, the stack sets no AWS_RETRY_MODE, Lambda has no shared config file,',
    '  and every SDK defaults mode says \'standard\'. A client asked for adaptive retries fails its first call, saying why.',
    '- `@smithy/core/checksum` is aliased to lib/bundle-stubs/checksum.ts: the SDK\'s module with its `Sha256` replaced by',
    '  its Node class alone (`node:crypto`, which SigV4 signs with). The SDK kept a SHA-256 written in JavaScript (about',
    '  3 KB in every handler) for a Node whose crypto has none, which Lambda\'s never is; such a Node would fail the first',
    '  hash, saying why. test/unit/bundle-stubs.test.ts holds both replacements to the SDK\'s own functions.',
    '- The SDK parts still bundled for nothing are out of an alias\'s reach: esbuild aliases package paths, and the',
    '  clients\' `package.json` (inlined whole for the version in the user agent), the instance-metadata region lookup,',
    '  the S3 endpoint customizations and the other partitions are imported by relative paths inside the SDK.',
    '- `charset: \'utf8\'`: esbuild wrote every non-ASCII character as a `\\uXXXX` escape, so the page\'s Arabic, Russian and',
    '  Ukrainian texts took six bytes a letter instead of two (about 30 KB of each page route).',
    '- Source maps stay outside prod\'s zips (lib/constructs/checkout-function.ts `bundlingOptions`): prod runs without',
    '  `--enable-source-maps`, and its maps go to `cdk.out/source-maps/`, archived with the deploy.',
  );

  lines.push(
    '',
    '### Applied in lambdas/',
    '',
    '- **Compact ISO tables.** lambdas/domain/generated/iso-data.ts holds only the ISO 4217 exponents and ISO 3166',
    '  alpha-2 codes, generated from the maintained packages by `npm run data:iso` (test/unit/iso-data.test.ts keeps it',
    '  current); the checkout page names countries with `Intl.DisplayNames`. This took about 34 KB out of every handler.',
    '- **No ICU data built at import.** The session\'s `language` was checked against `Intl.DisplayNames` built at load,',
    '  which made ICU load its language names: about 30 ms of CreateSession\'s cold import (CPU profile, ADR 0036). It reads',
    '  the generated ISO 639-1 table now.',
    '- **A static page without the SDK.** The admin portal page uses the page chain without the service container, so its',
    '  bundle carries no AWS SDK; and an error page of its own (English, for operators), so it carries none of the customer\'s',
    '  eight languages and their renderer (about 55 KB, which the page chain\'s one error page brought into it).',
    '- **Traces without the X-Ray SDK** (ADR 0036). The Powertools Tracer brought the X-Ray SDK into every bundle (about',
    '  96 KB, with `cls-hooked`, `semver` and the tracer itself about 120 KB) and an async hook on every promise in Lambda.',
    '  lambdas/observability/xray.ts writes the same subsegments (handler, each AWS SDK call, each remote call) as UDP',
    '  datagrams to the daemon Lambda runs, only for sampled invocations.',
    `- **Dependencies built per route.** lambdas/wiring/ builds each capability (stores, merchant secrets, acquirer, cursor key)`,
    `  on its own and each handler takes the part it uses: ${handlers.filter((h) => bytesOf(h.bundle, '@aws-sdk/client-secrets-manager') === 0).length} of ${handlers.length} handlers carry no Secrets Manager client`,
    `  (about ${kb(secretsClientBytes(handlers))} KB each; test/unit/route-bundles.test.ts holds every route that reads no secret to it).`,
  );

  lines.push('', '### Proposed in lambdas/ (not changed by the benchmark)', '');
  const create = handlers.find((h) => h.route?.id === 'CreateSession');
  lines.push(
    `1. **Powertools Logger** (${kb(create ? bytesOf(create.bundle, '@aws-lambda-powertools/logger') + bytesOf(create.bundle, '@aws-lambda-powertools/commons') : 0)} KB with commons): a 60-line JSON logger`,
    '   with the same keys and the redactor would save that much, but Powertools is the house standard; not recommended on size alone.',
    '2. **The page routes** carry the renderer and all eight languages\' texts (about 57 KB): the pay path could answer',
    '   with a redirect to the page instead of rendering it (a change of what a refused form shows, with its typed fields).',
    `3. **The targets themselves** (ADR 0044, proposed): the ${TARGETS.otherBundleKib} KB one is under the "required libraries only" row, and`,
    `   the ${TARGETS.bundleKib} KB one leaves the project about 70 KB. The ADR proposes targets on the project's own code (≤ 120 KB`,
    '   for the merchant, customer and callback functions, ≤ 100 KB for the rest) and cold import ≤ that row + 15 ms; it',
    '   keeps the SDK bundled (the runtime\'s SDK would cost every cold start the difference shown above).',
    '4. **Write units per checkout** (built, ADR 0043): the answer leaves its callback to the stream with the intent\'s work entry',
    '   as its net, the chargeback rate\'s denominator is counted from the payments, the search entry lives on the details item',
    '   (keys only), and the state item stays under 1 KB; the "Key heat" section below has the figures on both paths.',
  );
  return lines;
}

export function renderReport(r: BenchResults): string {
  const m = r.machine;
  return [
    '# Benchmarks',
    '',
    `Generated by \`${COMMAND}\` (test/bench/run.ts), which overwrites this file on every run. Figures come from one`,
    'run on one machine: compare rows of the same run, not runs on different machines.',
    '',
    '| | |',
    '|---|---|',
    `| Command | \`${COMMAND}\` |`,
    `| Date | ${m.date} |`,
    `| Node | ${m.node} (Lambda runs \`nodejs24.x\`; bundles target node24) |`,
    `| CPU | ${m.cpu}, ${m.cores} cores |`,
    `| Load average (1 min) | ${m.loadAverage.start.toFixed(2)} at start, ${m.loadAverage.end.toFixed(2)} at end |`,
    `| Run time | ${r.runSeconds.toFixed(0)} s |`,
    '',
    ...bundleSection(r),
    '',
    ...awsCallsSection(r),
    '',
    ...bundleCheckSection(r),
    '',
    ...throughputSection(r),
    '',
    ...renderSection(r),
    '',
    ...pageWeightSection(r),
    '',
    ...renderLatencySection(r.latency),
    '',
    ...(r.failures.length ? ['## Parts of this run that could not measure', '', ...r.failures.map((f) => `- ${f}`), ''] : []),
    ...moneySection(r),
    '',
    ...whatDominatesSection(r),
    '',
  ].join('\n');
}

/** The few lines a terminal needs; the full tables are in the report. */
export function renderSummary(r: BenchResults): string {
  const m = r.machine;
  const busy = m.loadAverage.start > m.cores || m.loadAverage.end > m.cores;
  const out = [
    `benchmarks on Node ${m.node}, ${m.cpu}, ${m.cores} cores (${r.runSeconds.toFixed(0)} s; load average ${m.loadAverage.start.toFixed(1)} → ${m.loadAverage.end.toFixed(1)}${busy ? ': busy machine, timings inflated' : ''})`,
    '',
  ];
  const limit = importLimitMs(r.bundles);
  for (const row of r.bundles) {
    const targets = held(row) ? `  size ≤ ${sizeTargetKib(row)} ${verdict(sizePass(row)).replace(/\*/g, '')}, import ≤ ${ms(limit)} ${verdict(importPass(row, limit)).replace(/\*/g, '')}` : '';
    const cold = row.cold.error ? `import FAILS: ${row.cold.error}` : `import ${ms(row.cold.medianMs).padStart(6)} ms (min ${ms(row.cold.minMs)})`;
    out.push(`${(row.route?.id ?? row.bundle.spec.name).padEnd(46)} ${kb(row.bundle.bytes).padStart(7)} KB  gzip ${kb(row.bundle.gzipBytes).padStart(6)} KB  ${cold}${targets}`);
  }
  out.push('');
  for (const { operation, calls, pass } of r.awsCalls) {
    out.push(
      `${operation.name.padEnd(46)} DynamoDB ${calls.dynamodb}  Secrets Manager ${calls.secretsManager}  acquirer DynamoDB ${calls.acquirerDynamodb}${pass === undefined ? '' : `  ${pass ? 'pass' : 'FAIL'}`}`,
    );
  }
  for (const f of flowTotals(r.awsCalls)) out.push(`${`flow: ${f.flow}`.padEnd(46)} DynamoDB ${f.dynamodb}  Secrets Manager ${f.secretsManager}  acquirer DynamoDB ${f.acquirerDynamodb}`);
  out.push('');
  const t = (name: string, x: Timing) => out.push(`${name.padEnd(46)} median ${ms(x.medianMs)} ms  p99 ${ms(x.p99Ms)} ms  (${x.samples} samples)`);
  t('render GET /auth/{token}: handler', r.render.handler);
  t('render GET /auth/{token}: HTML only', r.render.htmlOnly);
  t('render GET /auth/{token}: HTTP round trip', r.render.http);
  out.push('');
  for (const w of r.pageWeights) {
    out.push(`${w.page.padEnd(46)} ${kb(w.total.raw).padStart(6)} KB  on the wire ${kb(w.wire.bytes)} KB ${w.wire.encoding}  (CSS ${kb(w.style.raw)}, JS ${kb(w.script.raw)} KB raw)  ${verdict(pagePass(w)).replace(/\*/g, '')}`);
  }
  out.push('');
  for (const c of r.bundleChecks.filter((x) => x.outcome !== 'not checked')) {
    out.push(`bundled ${c.route.id.padEnd(38)} ${c.outcome}${c.outcome === 'failed' ? `: ${c.detail}` : ''}`);
  }
  const unchecked = r.bundleChecks.filter((x) => x.outcome === 'not checked').length;
  if (unchecked) out.push(`(${unchecked} more bundles not invoked: no sample request yet)`);
  out.push('');
  for (const { name, result } of r.throughput) {
    out.push(`${name.padEnd(46)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s  p50 ${ms(result.p50Ms)} ms  p99 ${ms(result.p99Ms)} ms  non-2xx ${result.non2xx}  errors ${result.errors}`);
  }
  out.push('', ...latencyLines(r.latency));
  out.push('', ...moneyLines(r.money));
  for (const f of r.failures) out.push(`NOT MEASURED: ${f}`);
  return out.join('\n');
}

/**
 * The run before the lean-Lambda work (docs/benchmarks.md of 2026-11-27T01:02:22Z, same machine):
 * the "before" of the before/after table. Bundle KB minified and cold import median (ms).
 */
export const BEFORE_LEAN = {
  date: '2026-11-27T01:02:22Z',
  bundles: {
    CreateSession: [467.6, 100.8],
    PaymentStatus: [451.8, 70.2],
    RefundPayment: [492.6, 75.6],
    CheckoutPage: [563.5, 76.2],
    CheckoutPay: [577.2, 80.6],
    AdminPayments: [461.7, 69.5],
    'NotFound ($default)': [192.0, 36.8],
    'job ReconcileAttempts': [489.9, 72.6],
    'AWS SDK clients only': [198.0, 44.5],
  } as Record<string, readonly [number, number]>,
  /** The checkout page (first form) body a browser downloaded, KB: uncompressed then. */
  pageWireKib: 14.2,
  /** Write units per checkout on the stream path, and checkouts/s before the hottest partition (one merchant's request counter then) passed 1,000 WCU/s. */
  writeUnits: { plain: 14, '3ds': 27 },
  checkoutsPerSecond: 500,
} as const;

/** Before and after, for the rows the lean-Lambda issue names. */
export function renderBeforeAfter(r: BenchResults, keys: readonly { flow: 'plain' | '3ds'; path: string; heat: { unitsPerCheckout: number; maxRate: number } }[]): string[] {
  const row = (name: string) => r.bundles.find((b) => (b.route?.id ?? b.bundle.spec.name) === name);
  const lines = [
    '## Before and after (lean Lambdas)',
    '',
    `Before: the run of ${BEFORE_LEAN.date} on this machine (the X-Ray SDK in every bundle, no compression, a write per merchant request); after: this run.`,
    '',
    '| What | Before | After |',
    '|---|---:|---:|',
  ];
  for (const [name, [kbBefore, msBefore]] of Object.entries(BEFORE_LEAN.bundles)) {
    const now = row(name);
    if (!now) continue;
    lines.push(`| ${name}: bundle KB / cold import median ms | ${kbBefore.toFixed(1)} / ${msBefore.toFixed(1)} | ${kb(now.bundle.bytes)} / ${ms(now.cold.medianMs)} |`);
  }
  const page = r.pageWeights.find((w) => w.heldToTarget);
  if (page) lines.push(`| checkout form, KB a browser downloads | ${BEFORE_LEAN.pageWireKib.toFixed(1)} | ${kb(page.wire.bytes)} (${page.wire.encoding}) |`);
  for (const flow of ['plain', '3ds'] as const) {
    const stream = keys.find((k) => k.flow === flow && k.path === 'stream');
    const local = keys.find((k) => k.flow === flow && k.path === 'local');
    if (stream) lines.push(`| write units per ${flow} checkout (stream / local runner) | ${BEFORE_LEAN.writeUnits[flow]} | ${stream.heat.unitsPerCheckout.toFixed(1)} / ${local ? local.heat.unitsPerCheckout.toFixed(1) : '—'} |`);
  }
  const rate = Math.min(...keys.map((k) => k.heat.maxRate));
  if (keys.length) lines.push(`| checkouts/s before a partition passes 1,000 WCU/s | ${BEFORE_LEAN.checkoutsPerSecond} (one merchant's counter) | ${Number.isFinite(rate) ? Math.floor(rate) : '∞'} (one merchant's partitions bounded by its request ceiling) |`);
  for (const l of r.latency) lines.push(`| ${l.operation} p50 / p99 ms (bundled, in-process) | not measured | ${l.p50Ms.toFixed(1)} / ${l.p99Ms.toFixed(1)} |`);
  return lines;
}
