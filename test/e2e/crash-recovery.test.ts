import { runCrashScenario, type CrashRunResult } from '../support/crash-run';

/**
 * The local runner under a mixed concurrent load is killed with SIGKILL several times and restarted
 * on the same data (test/support/crash-run.ts). After the jobs run, our records agree with the
 * sandbox acquirer's ledger, nothing is left in flight, no live runner answered 5xx, and every
 * callback arrived in order. CRASH_RUN_KILLS runs a longer variant.
 */
jest.setTimeout(240_000);

let result: CrashRunResult;

beforeAll(async () => {
  const seed = Number(process.env.CRASH_RUN_SEED ?? Date.now() % 2 ** 31);
  result = await runCrashScenario({ kills: Number(process.env.CRASH_RUN_KILLS ?? 3), seed, log: (line) => console.log(`[seed ${seed}] ${line}`) });
});

it('no HTTP 5xx from a live runner', () => {
  expect(result.requests).toBeGreaterThan(50);
  expect(result.fiveXx).toBe(0);
});

it('after the jobs ran, every payment agrees with the acquirer ledger and nothing is in flight', () => {
  expect(result.payments).toBeGreaterThan(10);
  expect(result.divergences).toEqual([]);
});

it('every callback was delivered, in order per payment (a crash may only resend the one just sent)', () => {
  expect(result.callbackProblems).toEqual([]);
});
