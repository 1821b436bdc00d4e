import { crashRunForFile, expectLiveRunnerHealthy } from '../support/crash-suite';

/**
 * The crash test over the S2S CARD connector: the local runner with ACQUIRER=s2s-card under the
 * mixed concurrent load of test/support/crash-run.ts (captures racing, partial refunds racing,
 * voids, recurring charges, Apple Pay and Google Pay SALEs, Idempotency-Key replays) is killed with
 * SIGKILL and restarted on the same data and port, while the fake gateway keeps running: it
 * carries out refunds 0.4 s after accepting them, loses some answers after doing the work (a
 * wallet SALE's too), and sends its callbacks (lost, repeated, early, late) also while the runner
 * is down, where they are lost for good. After the restarts and the
 * runner's own reconciling, every payment's status, refunded amount, captured amount and money
 * transactions equal the gateway's ledger, nothing is in flight, no live runner answered 5xx.
 * CRASH_RUN_SEED replays a run's decisions (and the gateway's draws); SOAK=1 or CRASH_RUN_KILLS
 * runs longer.
 */
const { result, kills } = crashRunForFile({
  name: 'S2S crash run',
  acquirer: 's2s-card',
  summary: (run, seed) =>
    `S2S CARD: reconciled after crash in ${run.reconcileMs} ms (seed ${seed}; ${run.kills} kills cutting off ${run.interrupted} requests, leaving ${run.orphanedIntents} intents in flight ` +
    `and ${run.gateway?.waitingAtKills} refunds accepted and not done at the gateway; ${run.gateway?.callbacksUnreachable} gateway callbacks sent while the runner was down; ` +
    `gateway faults ${JSON.stringify(result.gateway?.faults)}; ${run.payments} payments (${run.wallets.payments} by a wallet, ${run.wallets.paid} of them paid), ${run.requests} requests, ${run.fiveXx} 5xx; transactions ${JSON.stringify(result.transactions)}; failed ${JSON.stringify(result.failuresByReason)})`,
});

it('the kills hit a runner busy with requests, with captures and refunds going through the gateway', () => {
  expect(result.kills).toBe(kills);
  expect(result.requests).toBeGreaterThan(80);
  expect(result.interrupted).toBeGreaterThan(0);
  // Recurring chains are in the mix too, but a kill may decline every one of their first payments
  // (interrupted before the gateway got them): only captures and refunds are required.
  for (const done of ['capture/success', 'refund/success']) expect({ [done]: result.transactions[done] ?? 0 }).not.toEqual({ [done]: 0 });
  // Wallet SALEs (digital_wallet, payment_token) went through the gateway and were paid.
  expect(result.wallets.paid).toBeGreaterThan(0);
  // The gateway misbehaved: answers lost after the work, callbacks lost.
  expect(Object.keys(result.gateway?.faults ?? {}).length).toBeGreaterThan(0);
});

it('no HTTP 5xx, no dropped request and no exit of its own from a live runner', () => expectLiveRunnerHealthy(result));

it('after the reconciler ran, every payment equals the gateway ledger and nothing is in flight', () => {
  expect(result.payments).toBeGreaterThan(15);
  expect(result.divergences).toEqual([]);
  expect(result.reconcileMs).toBeGreaterThanOrEqual(0);
});

it('every callback to the merchant arrived, in order per payment; a crash may only resend the one just sent', () => {
  expect(result.callbackProblems).toEqual([]);
  expect(result.callbacksExpected).toBeGreaterThan(20);
});
