import { WALLET_PAGE_PLAN, measureWalletPageOf } from './wallet-page';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { FALLBACK_ROUTE, FALLBACK_ROUTE_KEY, ROUTES } from '../../lib/routes';
import { backendEnvironment } from '../../local/backend';
import { startTestService } from '../support/service';
import { quietServiceLogs } from '../support/quiet-logs';
import { JOBS, RECEIPT_FEEDBACK } from '../../lib/jobs';
import fc from 'fast-check';
import { scenarioArbOf, startMoneyModel, type Connector } from '../support/money-model';
import { runCrashScenario } from '../support/crash-run';
import { OPERATIONS, countAwsCalls, countCallsOf } from './aws-calls';
import { measureRandomMerchantKeys, randomKeysLine, renderRandomKeysSection, spliceRandomKeysSection, type RandomKeysResult } from './merchant-keys';
import { checkBundles } from './bundle-check';
import { buildBundles, esbuildApiOptions, projectPath, sandboxBundles, type Bundle, type BundleSpec } from './bundles';
import { RENDER_PLAN, measurePageWeights, measureRender } from './checkout-page';
import { measureColdImports, type ImportProbe } from './cold-import';
import { describeMachine, loadAverage } from './machine';
import { moneyLines, renderBeforeAfter, renderReport, renderSummary, spliceMoneySection, type BenchResults, type BundleRow, type ThroughputRow } from './report';
import { closeServer, generateLoad, helloWorldServer, listenOnFreePort } from './throughput';
import { COST_SECTION_END, COST_SECTION_START, buildCostModel, costLines, renderCostSection, spliceCostSection } from './cost-model';
import { DEFAULT_MEMORY_MB } from '../../lib/constructs/checkout-function';
import { KEYS_SECTION_END, KEYS_SECTION_START, keysLine, measureBacklog, measureCheckouts, renderBacklogSection, renderKeysSection, spliceKeysSection, type CostRow } from './keys';
import { LATENCY_PLAN, measureLatency } from './latency';

/**
 * Samples per cold-import row (each a fresh Node process): 11, fewer only if the rows would overrun
 * the budget. With 5–7 a row's median moved by 10–20 ms from one run to the next on two cores.
 */
const IMPORT_PLAN = { maxRuns: 11, minRuns: 5, budgetMs: 90_000 } as const;
const LOAD = { concurrency: 16, warmupMs: 1000, durationMs: 5000 } as const;
const WORK_DIR = projectPath('.bench');
const REPORT = projectPath('docs', 'benchmarks.md');

/** What a part of the run could not measure: reported in the report and the summary; the run goes on. */
const failures: string[] = [];

/** Runs one part of the benchmark; a part that fails is recorded with why, and the run goes on with `fallback`. */
async function attempt<T>(what: string, fn: () => Promise<T>, fallback: T): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const why = (e as Error).message.split('\n')[0] ?? String(e);
    failures.push(`${what}: ${why}`);
    console.log(`  ${what} could not be measured: ${why}`);
    return fallback;
  }
}

async function bundleRows(phase: (what: string) => void): Promise<{ rows: BundleRow[]; sourceMaps: BenchResults['sourceMaps'] }> {
  const outDir = projectPath('.bench', 'bundles');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const createSession = ROUTES.find((r) => r.id === 'CreateSession');
  const specs: BundleSpec[] = [
    // The merchant API, the customer's pages and the acquirer's callbacks, held to 300 KB; the portal's routes to 200 KB.
    // As prod deploys them: bundled for its acquirer (S2S CARD); the sandbox's own pages, deployed on sandbox stages only, for the sandbox.
    ...ROUTES.map((r): BundleSpec => ({
      name: r.id,
      kind: 'handler',
      group: r.auth === 'operator' || r.path.startsWith('/admin') ? 'other' : 'customer',
      entry: projectPath(r.entry),
      acquirer: r.acquirer ?? 's2s-card',
    })),
    // The $default route: every request no route takes (a mistyped path answers as fast as a real one).
    {
      name: `${FALLBACK_ROUTE.id} (${FALLBACK_ROUTE_KEY})`,
      kind: 'handler',
      group: 'other',
      entry: projectPath(FALLBACK_ROUTE.entry),
      note: 'the function of the `$default` route (lib/routes.ts FALLBACK_ROUTE): the 404/405 envelope for any path or method no route takes; no table, no secret, no AWS SDK client.',
    },
    // Background functions: every Lambda is measured, but no customer waits on these cold starts.
    ...JOBS.map((j): BundleSpec => ({ name: `job ${j.id}`, kind: 'handler', group: 'other', acquirer: 's2s-card', entry: projectPath(j.entry), note: `scheduled job (${j.description}); no customer waits on it.` })),
    {
      name: 'stream CallbackDispatcher',
      kind: 'handler',
      group: 'other',
      acquirer: 's2s-card',
      entry: projectPath('lambdas/handlers/callback-dispatch.ts'),
      note: 'the DynamoDB stream consumer that delivers new callbacks (lib/constructs/callback-delivery.ts); no customer waits on it.',
    },
    {
      name: 'events ReceiptFeedback',
      kind: 'handler',
      group: 'other',
      acquirer: 's2s-card',
      entry: projectPath(RECEIPT_FEEDBACK.entry),
      note: 'SES\'s bounces and complaints through EventBridge, suppressing the addresses (lib/constructs/receipt-mail.ts); no customer waits on it.',
    },
    {
      name: 'naive',
      kind: 'reference',
      entry: projectPath('test/bench/fixtures/naive-handler.ts'),
      alias: {},
      note: 'the "before": DynamoDB client + lib-dynamodb + Secrets Manager client + classic `zod` + @middy/core + Powertools Logger, wired the usual way and bundled with the same options but no aliases (test/bench/fixtures/naive-handler.ts).',
    },
    {
      name: 'AWS SDK clients only',
      kind: 'reference',
      entry: projectPath('test/bench/fixtures/aws-sdk-only.ts'),
      note: 'only the SDK parts the merchant API uses (DynamoDB client, lib-dynamodb Get/Put/Query, Secrets Manager GetSecretValue) with the project\'s options and aliases: the part of every handler that neither bundling options nor project code can shrink, short of dropping a client.',
    },
    {
      name: 'required libraries only',
      kind: 'reference',
      entry: projectPath('test/bench/fixtures/libraries-only.ts'),
      note: 'the SDK row plus what the brief requires or prefers in every handler, constructed as a handler constructs them: zod/mini with one schema, the Powertools Logger and Metrics, and Middy\'s core (test/bench/fixtures/libraries-only.ts): the floor of every function that reads the table, before any project code.',
    },
    {
      name: 'AWS SDK clients from node_modules',
      kind: 'reference',
      entry: projectPath('test/bench/fixtures/aws-sdk-only.ts'),
      external: ['@aws-sdk/*', '@smithy/*', '@aws/*'],
      note: 'the SDK row\'s clients left out of the bundle and loaded from node_modules, as a function that takes the runtime\'s SDK (CDK\'s default) loads them: the same version, unbundled.',
    },
    {
      name: 'empty module',
      kind: 'reference',
      entry: projectPath('test/bench/fixtures/empty-handler.ts'),
      note: 'a module that does nothing: the floor of the cold-import method on this machine.',
    },
  ];
  const bundles = await buildBundles(specs, outDir);
  phase(`built ${bundles.length} bundles; importing each in fresh processes…`);
  // Source maps cost import time only when NODE_OPTIONS has --enable-source-maps; the largest handler shows how much.
  const largest = bundles.filter((b) => b.spec.kind === 'handler').reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const probes: ImportProbe[] = [...bundles.map((b) => ({ file: b.file })), { file: largest.file, nodeFlags: ['--enable-source-maps'] }];
  const timings = await measureColdImports(probes, IMPORT_PLAN);
  const rows = bundles.map((bundle, i): BundleRow => {
    const route = bundle.spec.kind === 'handler' ? ROUTES.find((r) => r.id === bundle.spec.name) : undefined;
    return { bundle, cold: timings[i]!, ...(route ? { route } : {}) };
  });
  return { rows, sourceMaps: { bundle: largest.spec.name, cold: timings[bundles.length]! } };
}

const MONEY_RUNS = Number(process.env.MONEY_MODEL_RUNS ?? 300);

/** One connector's money model runs, then one crash run of the local runner on it. */
async function measureMoneyOn(connector: Connector, seed: number) {
  const model = await startMoneyModel({ connector });
  const started = performance.now();
  try {
    await fc.assert(fc.asyncProperty(scenarioArbOf(connector), async (s) => void (await model.run(s))), { numRuns: MONEY_RUNS, seed, endOnFailure: true });
  } finally {
    await model.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const crash = await runCrashScenario({ acquirer: connector });
  return {
    model: { ...model.stats, seconds, seed },
    crash: {
      seed: crash.seed,
      payments: crash.payments,
      requests: crash.requests,
      kills: crash.kills,
      fiveXx: crash.fiveXx,
      divergences: crash.divergences.length,
      reconcileMs: crash.reconcileMs,
      callbackRepeats: crash.callbackRepeats,
      wallets: crash.wallets,
      ...(crash.gateway ? { gateway: crash.gateway } : {}),
    },
  };
}

/** The money model's random runs and a crash run, on the sandbox and on the S2S CARD connector (its fake gateway). */
async function measureMoney(): Promise<BenchResults['money']> {
  const seed = Number(process.env.MONEY_MODEL_SEED ?? Date.now() % 2 ** 31);
  const sandbox = await measureMoneyOn('sandbox', seed);
  const s2s = await measureMoneyOn('s2s-card', seed);
  return { ...sandbox, s2s };
}

/** Checkouts per flow in the key-heat run (each one recorded write by write). */
const KEY_HEAT_CHECKOUTS = Number(process.env.KEY_HEAT_CHECKOUTS ?? 100);

/** Due captures in the backlog run. */
const BACKLOG = Number(process.env.BACKLOG_CAPTURES ?? 5000);

/** The key-heat and cost runs (both flows, both callback paths) and the backlog run, each on a service of its own. */
async function measureKeys(phase: (what: string) => void, withBacklog = true): Promise<{ rows: CostRow[]; section: string[] }> {
  const rows: CostRow[] = [];
  for (const path of ['stream', 'local'] as const) {
    for (const flow of ['plain', '3ds'] as const) {
      phase(`key heat: ${KEY_HEAT_CHECKOUTS} ${flow} checkouts, callbacks by the ${path === 'stream' ? "stream dispatcher (the cloud's path)" : "local runner's in-process stream (its path)"}, every write recorded…`);
      await attempt(
        `key heat, ${flow} checkouts, ${path}`,
        async () => {
          // As deployed: the table's stream dispatcher delivers new callbacks (the stack sets CALLBACK_STREAM); locally, the runner's stand-in for it.
          const service = await withEnv({ CALLBACK_STREAM: '1' }, () => startTestService({ localStream: path === 'local' }));
          try {
            rows.push(await measureCheckouts(service, flow, KEY_HEAT_CHECKOUTS, path));
          } finally {
            await service.close();
          }
        },
        undefined,
      );
    }
  }
  if (!withBacklog) return { rows, section: renderKeysSection(rows) };
  phase(`backlog: ${BACKLOG} due captures, then one capture run…`);
  const backlog = await attempt(
    'backlog',
    async () => {
      const service = await startTestService();
      try {
        return await measureBacklog(service, BACKLOG);
      } finally {
        await service.close();
      }
    },
    undefined,
  );
  // A failed capture is a fault, recorded; a backlog larger than one local run drains is a figure (the section says what was left).
  if (backlog?.report.failed) failures.push(`the capture run failed ${backlog.report.failed} captures: ${JSON.stringify(backlog.report)}`);
  return { rows, section: [...renderKeysSection(rows), ...(backlog ? ['', ...renderBacklogSection(backlog)] : [])] };
}

/** Runs `fn` with these environment variables set, then puts them back. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** `--only keys`: the key-heat section alone, spliced into the report; its last line is the verdict. */
async function keysOnly(costOnly = false): Promise<void> {
  quietServiceLogs();
  const started = performance.now();
  const phase = (what: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${what}`);
  const { rows, section } = await measureKeys(phase, !costOnly);
  const report = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : '# Benchmarks\n';
  phase('cost: synthesizing every stage to count what it bills…');
  const cost = await attempt('cost model', async () => costModelOf(rows), undefined);
  const costSection = cost ? renderCostSection(cost) : [];
  // `--only cost` measures the checkouts without the backlog run and replaces the cost section only.
  const keysSpliced = costOnly ? report : spliceKeysSection(report, [...section, ...(failures.length ? ['', ...failures.map((f) => `Not measured: ${f}`)] : [])]);
  writeFileSync(REPORT, cost ? spliceCostSection(keysSpliced, costSection) : keysSpliced);
  console.log(`\n${section.join('\n')}\n\n${costSection.join('\n')}\n\nwrote ${REPORT}`);
  if (cost) for (const line of costLines(cost)) console.log(line);
  for (const f of failures) console.log(`NOT MEASURED: ${f}`);
  console.log(rows.length ? keysLine(rows) : 'keys: nothing measured');
}

/** The all-in cost model (test/bench/cost-model.ts) on the key-heat run's measurements. */
function costModelOf(rows: readonly CostRow[]) {
  const pay = ROUTES.find((r) => r.id === 'CheckoutPay');
  // The cloud's bill: the stream dispatcher's path.
  return buildCostModel(rows.filter((r) => r.path === 'stream'), { payMemoryGb: (pay?.memoryMb ?? DEFAULT_MEMORY_MB) / 1024, jobMemoryGb: DEFAULT_MEMORY_MB / 1024 });
}

async function main(): Promise<void> {
  quietServiceLogs();
  const started = performance.now();
  const startedAt = new Date();
  const loadAtStart = loadAverage();
  mkdirSync(WORK_DIR, { recursive: true });

  const phase = (what: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(1)} s] ${what}`);
  phase('bundling and timing cold imports…');
  const { rows: bundles, sourceMaps } = await bundleRows(phase);

  phase('starting the local backend…');
  // The service exactly as the integration tests run it; the bench reuses their payment flows.
  const service = await startTestService();
  const environment = backendEnvironment(service.backend);
  const counter = countCallsOf(service);
  const hello = helloWorldServer();
  const noTiming = { samples: 0, medianMs: NaN, p99Ms: NaN, minMs: NaN, maxMs: NaN };
  try {
    const { baseUrl } = service;
    const newMerchant = () => service.createMerchant({ name: 'Benchmark Shop' });

    phase('counting AWS calls…');
    const awsCalls = await attempt('AWS calls per operation', () => countAwsCalls(OPERATIONS, service, counter), []);
    phase('requests with random merchant keys…');
    const randomKeys = await attempt('requests with random merchant keys', () => measureRandomMerchantKeys(service), undefined);

    const checkoutPage = ROUTES.find((r) => r.id === 'CheckoutPage');
    if (!checkoutPage) throw new Error('no CheckoutPage route in lib/routes.ts');
    phase(`checkout page: ${RENDER_PLAN.samples} renders per method, page weights…`);
    const pageMerchant = await newMerchant();
    const render = await attempt('checkout page render time', () => measureRender(service, pageMerchant, checkoutPage), { handler: noTiming, htmlOnly: noTiming, http: noTiming });
    const pageWeights = await attempt('page weights', () => measurePageWeights(service, pageMerchant), []);
    phase(`checkout page with the wallets' scripts blocked: ${WALLET_PAGE_PLAN.samples} loads of each kind in Chromium…`);
    const walletPage = await attempt('card form with the wallets\' scripts blocked', () => measureWalletPageOf(service), undefined);

    phase('invoking the bundled handlers…');
    const invocable = await attempt('bundles for the local backend\'s acquirer', () => sandboxBundles(projectPath('.bench', 'bundles-sandbox')), []);
    const bundleChecks = await attempt('bundled handlers against the local backend', async () => checkBundles(ROUTES, invocable, { baseUrl, environment, merchant: await newMerchant() }), []);

    phase(`latency budget: ${LATENCY_PLAN.samples} rounds of session, status, pay and refund through the bundled handlers…`);
    const latency = await attempt('latency budget', async () => measureLatency(invocable, environment, await newMerchant()), []);

    phase(`load: ${LOAD.concurrency} concurrent requests, ${LOAD.durationMs / 1000} s per server…`);
    const helloUrl = await listenOnFreePort(hello);
    const merchant = await newMerchant();
    const throughput: ThroughputRow[] = [];
    for (const [name, url] of [['bare node:http hello world', `${helloUrl}/`], ['POST /api/v1/session (local runner)', `${baseUrl}/api/v1/session`]] as const) {
      const result = await attempt(`load on ${name}`, () => generateLoad({ ...LOAD, url, merchant }), undefined);
      if (result) throughput.push({ name, result });
    }

    phase(`money model: ${MONEY_RUNS} runs and a crash run against the sandbox ledger, then the same against the S2S CARD gateway's…`);
    const money = await attempt('money model and crash runs', () => measureMoney(), undefined);
    const keys = await measureKeys(phase);

    const results: BenchResults = {
      machine: describeMachine(startedAt, loadAtStart),
      runSeconds: (performance.now() - started) / 1000,
      bundles,
      sourceMaps,
      awsCalls,
      bundleChecks,
      load: LOAD,
      throughput,
      render,
      ...(walletPage ? { walletPage, walletPagePlan: WALLET_PAGE_PLAN } : {}),
      renderPlan: RENDER_PLAN,
      pageWeights,
      money: money ?? { model: { runs: 0, operations: 0, faults: 0, divergences: 0, seconds: 0, seed: 0 } },
      latency,
      failures,
    };
    phase('cost: synthesizing every stage to count what it bills…');
    const cost = await attempt('cost model', async () => costModelOf(keys.rows), undefined);
    const report =
      `${renderReport(results).trimEnd()}\n\n${renderBeforeAfter(results, keys.rows).join('\n')}\n\n${[KEYS_SECTION_START, ...keys.section, KEYS_SECTION_END].join('\n')}\n\n` +
      (cost ? `${[COST_SECTION_START, ...renderCostSection(cost), COST_SECTION_END].join('\n')}\n` : '');
    writeFileSync(REPORT, randomKeys ? spliceRandomKeysSection(report, renderRandomKeysSection(randomKeys)) : report);
    console.log(`\n${renderSummary(results)}\n\nwrote ${REPORT}`);
    if (cost) for (const line of costLines(cost)) console.log(line);
    if (randomKeys) console.log(randomKeysLine(randomKeys));
    console.log(keys.rows.length ? keysLine(keys.rows) : 'keys: nothing measured');
    const unimportable = bundles.filter((b) => b.cold.error !== undefined);
    const broken = bundleChecks.filter((c) => c.outcome === 'failed');
    const problems = [
      ...(money?.model.divergences ? [`the money model found ${money.model.divergences} divergences`] : []),
      ...(money?.crash?.divergences ? [`the crash run found ${money.crash.divergences} divergences`] : []),
      ...(money?.s2s?.model.divergences ? [`the money model over the S2S CARD connector found ${money.s2s.model.divergences} divergences`] : []),
      ...(money?.s2s?.crash?.divergences ? [`the crash run over the S2S CARD connector found ${money.s2s.crash.divergences} divergences`] : []),
      ...(randomKeys ? randomKeysProblems(randomKeys) : []),
      ...unimportable.map((b) => `${b.bundle.spec.name} cannot be imported: ${b.cold.error}`),
      ...broken.map((c) => `bundled ${c.route.id} is broken: ${c.detail}`),
    ];
    // Everything is written and printed; a fault (not a missed goal) still fails the command.
    if (problems.length) {
      console.error(`\nfaults (not goals):\n  ${problems.join('\n  ')}`);
      process.exitCode = 1;
    }
  } finally {
    await closeServer(hello);
    await service.close();
  }
}

/** `--only money`: the money model and crash runs on both connectors, their section replaced in the report. */
async function moneyOnly(): Promise<void> {
  const money = await measureMoney();
  const report = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : '# Benchmarks\n';
  writeFileSync(REPORT, spliceMoneySection(report, money));
  console.log(`${moneyLines(money).join('\n')}\n\nwrote ${REPORT}`);
  const divergences = money.model.divergences + (money.crash?.divergences ?? 0) + (money.s2s?.model.divergences ?? 0) + (money.s2s?.crash?.divergences ?? 0);
  if (divergences) throw new Error(`${divergences} divergences between our records and an acquirer's ledger`);
}

/** What a random-key run must show: every request refused at the hash, none reaching Secrets Manager. */
const randomKeysProblems = (r: RandomKeysResult): string[] => [
  ...(r.secretsManagerCalls || r.repeat.secretsManagerCalls ? [`requests with random merchant keys made ${r.secretsManagerCalls + r.repeat.secretsManagerCalls} Secrets Manager calls (goal 0)`] : []),
  ...(r.unexpectedAnswers ? [`${r.unexpectedAnswers} requests with random merchant keys were not refused at the hash`] : []),
];

/** `--only merchant-keys`: the random merchant keys run alone, its section replaced in the report. */
async function randomKeysOnly(): Promise<void> {
  const service = await startTestService();
  let result: RandomKeysResult;
  try {
    result = await measureRandomMerchantKeys(service);
  } finally {
    await service.close();
  }
  const report = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : '# Benchmarks\n';
  const section = renderRandomKeysSection(result);
  writeFileSync(REPORT, spliceRandomKeysSection(report, section));
  console.log(`${section.join('\n')}\n\nwrote ${REPORT}`);
  console.log(randomKeysLine(result));
  const problems = randomKeysProblems(result);
  if (problems.length) throw new Error(problems.join('; '));
}

const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined;
// `--only cost` runs the key-heat checkouts (not the backlog): the all-in cost model prices what they measure.
if (only !== undefined && only !== 'keys' && only !== 'cost' && only !== 'money' && only !== 'merchant-keys') {
  console.error(
    `unknown --only ${only}: the parts that run alone are "keys" and "cost" (the key-heat run and the cost model on it), "money" (the money models and crash runs) and "merchant-keys" (requests with random merchant keys)`,
  );
  process.exit(2);
}

(only === 'merchant-keys' ? randomKeysOnly() : only === 'money' ? moneyOnly() : only === 'keys' || only === 'cost' ? keysOnly(only === 'cost') : main()).then(
  // Keep-alive sockets of fetch may linger; the run is over.
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error('benchmark crashed:', e);
    process.exit(1);
  },
);
