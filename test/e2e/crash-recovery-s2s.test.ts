import { runCrashScenario, stopCrashRuns, type CrashRunResult } from '../support/crash-run';
import { soakCount } from '../support/soak';

/**
 * The crash test over the S2S CARD connector: the local runner with ACQUIRER=s2s-card under the
 * mixed concurrent load of test/support/crash-run.ts (captures racing, partial refunds racing,
 * voids, recurring charges, Idempotency-Key replays) is killed with SIGKILL and restarted on the same
 * data and port, while the fake gateway keeps running: it carries out refunds 0.4 s after accepting
 * them, loses some answers after doing the work, and sends its callbacks (lost, repeated, early,
 * late) also while the runner is down, where they are lost for good. After the restarts and the
 * runner's own reconciling, every payment's status, refunded amount, captured amount and money
 * transactions equal the gateway's ledger, nothing is in flight, no live runner answered 5xx.
 * CRASH_RUN_SEED replays a run's decisions (and the gateway's draws); SOAK=1 or CRASH_RUN_KILLS
 * runs longer.
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
    result = await runCrashScenario({
      acquirer: 's2s-card',
      kills,
      seed,
      log: (line) => (process.env.CRASH_RUN_VERBOSE ? console.log(`[seed ${seed}] ${line}`) : progress.push(line)),
    });
  } catch (e) {
    throw new Error(`S2S crash run with seed ${seed} failed: ${(e as Error).stack}\n${progress.join('\n')}`);
  }
  console.log(
    `S2S CARD: reconciled after crash in ${result.reconcileMs} ms (seed ${seed}; ${result.kills} kills cutting off ${result.interrupted} requests, leaving ${result.orphanedIntents} intents in flight ` +
      `and ${result.gateway?.waitingAtKills} refunds accepted and not done at the gateway; ${result.gateway?.callbacksUnreachable} gateway callbacks sent while the runner was down; ` +
      `gateway faults ${JSON.stringify(result.gateway?.faults)}; ${result.payments} payments, ${result.requests} requests, ${result.fiveXx} 5xx; transactions ${JSON.stringify(result.transactions)}; failed ${JSON.stringify(result.failuresByReason)})`,
  );
  if (result.divergences.length) console.log(`divergences (seed ${seed}):\n${result.divergences.map((d) => `  ${d.paymentId}: ${d.problem}`).join('\n')}\n${progress.join('\n')}`);
}, TIMEOUT_MS);

afterAll(() => stopCrashRuns());

it('the kills hit a runner busy with requests, with captures and refunds going through the gateway', () => {
  expect(result.kills).toBe(kills);
  expect(result.requests).toBeGreaterThan(80);
  expect(result.interrupted).toBeGreaterThan(0);
  // Recurring chains are in the mix too, but a kill may decline every one of their first payments
  // (interrupted before the gateway got them): only captures and refunds are required.
  for (const done of ['capture/success', 'refund/success']) expect({ [done]: result.transactions[done] ?? 0 }).not.toEqual({ [done]: 0 });
  // The gateway misbehaved: answers lost after the work, callbacks lost.
  expect(Object.keys(result.gateway?.faults ?? {}).length).toBeGreaterThan(0);
});

it('no HTTP 5xx, no dropped request and no exit of its own from a live runner', () => {
  expect(result.failures).toEqual([]);
  expect(result.fiveXx).toBe(0);
  expect(result.unanswered).toBe(0);
  expect(result.unexpectedExits).toBe(0);
});

it('after the reconciler ran, every payment equals the gateway ledger and nothing is in flight', () => {
  expect(result.payments).toBeGreaterThan(15);
  expect(result.divergences).toEqual([]);
  expect(result.reconcileMs).toBeGreaterThanOrEqual(0);
});

it('every callback to the merchant arrived, in order per payment; a crash may only resend the one just sent', () => {
  expect(result.callbackProblems).toEqual([]);
  expect(result.callbacksExpected).toBeGreaterThan(20);
});
