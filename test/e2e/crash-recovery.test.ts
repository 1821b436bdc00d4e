import { crashRunForFile, expectLiveRunnerHealthy } from '../support/crash-suite';

/**
 * The local runner under a mixed concurrent load (card and wallet payments among it) is killed
 * with SIGKILL at random moments and restarted on the same data and port
 * (test/support/crash-run.ts). After its jobs ran, our records
 * agree with the sandbox acquirer's ledger with nothing in flight, no live runner answered 5xx, and
 * every callback arrived in order. CRASH_RUN_SEED replays a run's decisions; SOAK=1 or
 * CRASH_RUN_KILLS runs a longer variant; CRASH_RUN_VERBOSE prints its progress.
 */
const { result, kills } = crashRunForFile({
  name: 'crash run',
  summary: (run, seed) =>
    `reconciled after crash in ${run.reconcileMs} ms (seed ${seed}; ${run.kills} kills cutting off ${run.interrupted} requests and leaving ${run.orphanedIntents} intents in flight; ` +
    `${run.payments} payments, ${run.requests} requests, ${run.connectionErrors} connection errors, ${run.fiveXx} 5xx; ` +
    `${run.callbacksReceived} callbacks received for ${run.callbacksExpected} transactions, ${run.callbackRepeats} of them immediate repeats; ${run.wallets.payments} wallet payments, ${run.wallets.paid} paid; transactions ${JSON.stringify(result.transactions)})`,
});

it('the kills hit a runner busy with requests', () => {
  expect(result.kills).toBe(kills);
  expect(result.requests).toBeGreaterThan(100);
  expect(result.interrupted).toBeGreaterThan(0);
  // The mix happened: captures of the two-stage merchant, refunds and recurring charges went through.
  for (const done of ['capture/success', 'refund/success', 'recurring/success']) expect({ [done]: result.transactions[done] ?? 0 }).not.toEqual({ [done]: 0 });
  // Wallet payments (Apple Pay, Google Pay) were paid among them.
  expect(result.wallets.paid).toBeGreaterThan(0);
});

it('no HTTP 5xx, no dropped request and no exit of its own from a live runner', () => expectLiveRunnerHealthy(result));

it('after the jobs ran, every payment agrees with the acquirer ledger and nothing is in flight', () => {
  expect(result.payments).toBeGreaterThan(20);
  expect(result.divergences).toEqual([]);
  expect(result.reconcileMs).toBeGreaterThanOrEqual(0);
});

it('every callback arrived, in order per payment; a crash may only resend the one just sent', () => {
  expect(result.callbackProblems).toEqual([]);
  expect(result.callbacksExpected).toBeGreaterThan(20);
});
