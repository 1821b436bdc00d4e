import { runCrashScenario, stopCrashRuns, type CrashRunResult } from '../support/crash-run';
import { soakCount } from '../support/soak';

/**
 * The local runner under a mixed concurrent load is killed with SIGKILL at random moments and
 * restarted on the same data and port (test/support/crash-run.ts). After its jobs ran, our records
 * agree with the sandbox acquirer's ledger with nothing in flight, no live runner answered 5xx, and
 * every callback arrived in order. CRASH_RUN_SEED replays a run's decisions; SOAK=1 or
 * CRASH_RUN_KILLS runs a longer variant; CRASH_RUN_VERBOSE prints its progress.
 */
const TIMEOUT_MS = 240_000;
jest.setTimeout(TIMEOUT_MS);

const seed = Number(process.env.CRASH_RUN_SEED ?? Date.now() % 2 ** 31);
/** Three kills by default (the thresholds below are sized for them), six under SOAK=1 (test/support/soak.ts). */
const kills = soakCount({ fast: 3, soak: 6, override: 'CRASH_RUN_KILLS' });
let result: CrashRunResult;

beforeAll(async () => {
  const progress: string[] = [];
  try {
    result = await runCrashScenario({ kills, seed, log: (line) => (process.env.CRASH_RUN_VERBOSE ? console.log(`[seed ${seed}] ${line}`) : progress.push(line)) });
  } catch (e) {
    throw new Error(`crash run with seed ${seed} failed: ${(e as Error).stack}\n${progress.join('\n')}`);
  }
  console.log(
    `reconciled after crash in ${result.reconcileMs} ms (seed ${seed}; ${result.kills} kills cutting off ${result.interrupted} requests and leaving ${result.orphanedIntents} intents in flight; ` +
      `${result.payments} payments, ${result.requests} requests, ${result.connectionErrors} connection errors, ${result.fiveXx} 5xx; ` +
      `${result.callbacksReceived} callbacks received for ${result.callbacksExpected} transactions, ${result.callbackRepeats} of them immediate repeats; transactions ${JSON.stringify(result.transactions)})`,
  );
}, TIMEOUT_MS);

afterAll(() => stopCrashRuns());

it('the kills hit a runner busy with requests', () => {
  expect(result.kills).toBe(kills);
  expect(result.requests).toBeGreaterThan(100);
  expect(result.interrupted).toBeGreaterThan(0);
  // The mix happened: captures of the two-stage merchant, refunds and recurring charges went through.
  for (const done of ['capture/success', 'refund/success', 'recurring/success']) expect({ [done]: result.transactions[done] ?? 0 }).not.toEqual({ [done]: 0 });
});

it('no HTTP 5xx, no dropped request and no exit of its own from a live runner', () => {
  expect(result.failures).toEqual([]);
  expect(result.fiveXx).toBe(0);
  expect(result.unanswered).toBe(0);
  expect(result.unexpectedExits).toBe(0);
});

it('after the jobs ran, every payment agrees with the acquirer ledger and nothing is in flight', () => {
  expect(result.payments).toBeGreaterThan(20);
  expect(result.divergences).toEqual([]);
  expect(result.reconcileMs).toBeGreaterThanOrEqual(0);
});

it('every callback arrived, in order per payment; a crash may only resend the one just sent', () => {
  expect(result.callbackProblems).toEqual([]);
  expect(result.callbacksExpected).toBeGreaterThan(20);
});
