import fc from 'fast-check';
import { ManualClock } from '../../lambdas/ports/clock';
import type { Payment } from '../../lambdas/domain/payment';
import type { Deps } from '../../lambdas/container';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { completeAction, pay } from '../../lambdas/use-cases/checkout';
import { capture, release } from '../../lambdas/use-cases/capture-payment';
import { runCaptureJob } from '../../lambdas/use-cases/capture-job';
import { createSession, validateCreateSession } from '../../lambdas/use-cases/create-session';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { chargeRecurring } from '../../lambdas/use-cases/recurring-payment';
import { refundPayment } from '../../lambdas/use-cases/refund-payment';
import { retryPayment } from '../../lambdas/use-cases/retry-payment';
import { voidPayment } from '../../lambdas/use-cases/void-payment';
import { SANDBOX_OTP } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { checkPayment, type Divergence } from './ledger-checker';
import { withFault, withoutClose, type Fault } from './faults';
import { validSessionBody } from './fixtures';
import { TEST_PAN } from './payments';
import { SHARDS, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import type { ShardPart } from '../../lambdas/ports/payments';
import { startTestService, type TestService } from './service';

/**
 * The money model: random interleavings of every operation that moves money — pay (approved,
 * declined, 3-D Secure, no answer), the customer's challenge answer or abandonment, void, partial
 * and full refunds, capture, release, recurring charges and their retries, the reconcile and capture
 * jobs — with a fault injected at a random step boundary of any of them (a crash before or right
 * after a write, a request the acquirer never got, a reply it sent that we lost), pairs of them
 * racing, time moved across the void window, the link's expiry and the authorization's validity,
 * and acquirers that can or cannot close what they were asked. After each run the reconciler runs
 * and the ledger checker must find our records and the sandbox acquirer's ledger in agreement, with
 * nothing left in flight. A failing run prints its seed and path; fast-check shrinks it.
 *
 */
const T0 = new Date('2031-05-05T06:00:00Z');
const MINUTE = 60_000;

type Op =
  | 'pay' | 'pay-again' | 'answer' | 'refuse-answer' | 'return' | 'void' | 'refund-part' | 'refund-all' | 'capture-part' | 'capture-all'
  | 'release' | 'recurring' | 'retry' | 'reconcile' | 'capture-job' | 'minutes' | 'hours' | 'day';

const OPS: readonly Op[] = [
  'pay', 'pay-again', 'answer', 'refuse-answer', 'return', 'void', 'refund-part', 'refund-all', 'capture-part', 'capture-all',
  'release', 'recurring', 'retry', 'reconcile', 'capture-job', 'minutes', 'hours', 'day',
];
/** Money-moving operations weigh more than clock moves and jobs. */
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<Op>('pay', 'void', 'refund-part', 'refund-all', 'capture-part', 'capture-all', 'release', 'recurring', 'retry') },
  { weight: 1, arbitrary: fc.constantFrom(...OPS) },
);

/** The test cards a run pays with (docs/sandbox.md). */
const CARDS = { approve: '01/38', decline: '02/38', threeDs: '05/38', redirect: '12/38', noAnswer: '08/38', voidDeclined: '04/38', refundDeclined: '07/38' } as const;

interface Step {
  readonly op: Op;
  readonly fault?: Fault;
  /** Another operation racing this one. */
  readonly racing?: Op;
  readonly racingFault?: Fault;
}

// Most operations make one or two writes and one acquirer call: faults are aimed there, and most
// steps carry one (a fault aimed past an operation's last step does not fire).
const faultArb: fc.Arbitrary<Fault | undefined> = fc.option(
  fc.record({ at: fc.constantFrom<'write' | 'acquirer'>('write', 'acquirer'), nth: fc.constantFrom(1, 1, 1, 2, 2, 3), when: fc.constantFrom<'before' | 'after'>('before', 'after') }),
  { freq: 5 },
);
const stepArb: fc.Arbitrary<Step> = fc.record(
  { op: opArb, fault: faultArb, racing: fc.option(opArb, { freq: 3 }), racingFault: faultArb },
).map((s) => ({ op: s.op, ...(s.fault ? { fault: s.fault } : {}), ...(s.racing ? { racing: s.racing, ...(s.racingFault ? { racingFault: s.racingFault } : {}) } : {}) }));

export const scenarioArb = fc.record({
  dms: fc.boolean(),
  card: fc.constantFrom(...(Object.keys(CARDS) as (keyof typeof CARDS)[])),
  recurringInit: fc.boolean(),
  canClose: fc.boolean(),
  recurringAmount: fc.constantFrom('5.00', '5.52', '5.51'),
  /** Every run starts with the customer paying (perhaps hit by a fault), then random steps. */
  firstFault: faultArb,
  steps: fc.array(stepArb, { minLength: 1, maxLength: 14 }),
});
export type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

export interface ModelStats {
  runs: number;
  operations: number;
  faults: number;
  divergences: number;
}

export interface MoneyModel {
  readonly stats: ModelStats;
  /** One run: a payment (and its recurring children) through the steps, then the jobs, then the check. */
  run(s: Scenario): Promise<Divergence[]>;
  close(): Promise<void>;
}

/** The service in this process on a manual clock, with an SMS and a DMS merchant. */
export async function startMoneyModel(): Promise<MoneyModel> {
  const clock = new ManualClock(T0);
  const service = await startTestService({ clock });
  const sms = await service.createMerchant({ name: 'Model Shop' });
  const dms = await service.createMerchant({ name: 'Model DMS Shop', settings: { dms: true, autoCaptureDelayMinutes: 90 } });
  const stats: ModelStats = { runs: 0, operations: 0, faults: 0, divergences: 0 };
  return { stats, run: (s) => runScenario({ service, clock, sms, dms, stats }, s), close: () => service.close() };
}

async function runScenario(
  { service, clock, sms, dms, stats }: { service: TestService; clock: ManualClock; sms: MerchantCredentials; dms: MerchantCredentials; stats: ModelStats },
  s: Scenario,
): Promise<Divergence[]> {
  const merchant = s.dms ? dms : sms;
  const recurringInit = s.recurringInit && !s.dms;
  const body = validateCreateSession(validSessionBody(merchant.merchant_key, {
    order: { number: `model-${stats.runs}`, amount: '10.00', currency: 'USD', description: 'Model order' },
    ...(recurringInit ? { recurring_init: true } : {}),
    session_expiry: 30,
    hash: 'signed-at-the-edge',
  }));
  const base = service.deps as Deps;
  const acquirer = s.canClose ? base.acquirer : withoutClose(base.acquirer);
  const session = await createSession(base, merchant.merchant_key, body);
  const token = session.linkToken;
  const paymentIds = new Set([session.paymentId]);
  let recurringCount = 0;

  const read = async (id = session.paymentId): Promise<Payment> => (await base.store.findPayment(id)) as Payment;
  const depsWith = (fault: Fault | undefined) => {
    const parts = withFault(base.store, acquirer, fault);
    return { deps: { ...base, store: parts.store, acquirer: parts.acquirer } as Deps, parts };
  };

  const perform = async (op: Op, fault: Fault | undefined): Promise<void> => {
    const { deps, parts } = depsWith(fault);
    const mk = merchant.merchant_key;
    const p = await read();
    const card = op === 'pay-again' ? CARDS.approve : CARDS[s.card];
    try {
      switch (op) {
        case 'pay':
        case 'pay-again':
          await pay(deps, token, { number: TEST_PAN, expiry: card, cvv: '123', holder: 'Model Customer' }, { baseUrl: 'http://checkout.test', browser: {} });
          break;
        case 'answer':
        case 'refuse-answer':
          if (p.action) await base.sandbox.answerChallenge(p.action.idempotencyKey, { code: SANDBOX_OTP, confirm: op === 'answer' });
          break;
        case 'return':
          await completeAction(deps, token);
          break;
        case 'void':
          await voidPayment(deps, mk, { payment_id: p.paymentId });
          break;
        case 'refund-part':
          await refundPayment(deps, mk, { payment_id: p.paymentId, amount: '3.00' });
          break;
        case 'refund-all':
          await refundPayment(deps, mk, { payment_id: p.paymentId, amount: '10.00' });
          break;
        case 'capture-part':
          await capture(deps, p, 600, 'merchant:model');
          break;
        case 'capture-all':
          await capture(deps, p, 1000, 'merchant:model');
          break;
        case 'release':
          await release(deps, p, 'operator:model');
          break;
        case 'recurring': {
          if (!p.recurringToken || !p.recurringInitTransId) break;
          const number = `model-${stats.runs}-r${recurringCount++ % 2}`;
          const answer = await chargeRecurring(deps, mk, {
            merchant_key: mk,
            recurring_init_trans_id: p.recurringInitTransId,
            recurring_token: p.recurringToken,
            hash: '',
            order: { number, amount: s.recurringAmount, description: 'Model renewal' },
          });
          paymentIds.add(answer.payment_id);
          break;
        }
        case 'retry':
          for (const id of [...paymentIds].filter((id) => id !== session.paymentId)) await retryPayment(deps, mk, { merchant_key: mk, payment_id: id, hash: '' });
          break;
        case 'reconcile':
          await reconcileDue(deps);
          break;
        case 'capture-job':
          await runCaptureJob(deps);
          break;
        case 'minutes':
          clock.advance(7 * MINUTE);
          break;
        case 'hours':
          clock.advance(6 * 60 * MINUTE);
          break;
        case 'day':
          clock.advance(25 * 60 * MINUTE);
          break;
      }
    } catch {
      // A refusal (4xx), or the simulated crash: the request is over either way.
    } finally {
      stats.operations++;
      if (parts.fired()) stats.faults++;
    }
  };

  const steps: Step[] = [{ op: 'pay', ...(s.firstFault ? { fault: s.firstFault } : {}) }, ...s.steps];
  for (const step of steps) {
    if (step.racing) await Promise.all([perform(step.op, step.fault), perform(step.racing, step.racingFault)]);
    else await perform(step.op, step.fault);
  }

  // The customer is gone and the jobs run (with the run's acquirer, no more faults) until nothing is
  // due: time moves past every timeout, the watch period of late approvals and the auto-capture.
  // Each job reads only the work index shards this run's payments are in (a worker's part, as a
  // deployed job's workers split them): every due item of theirs, without 32 queries per job run.
  const shards = [...new Set([...paymentIds].map((id) => shardOf(id, SHARDS.work)))];
  const jobsDrain = async <T>(job: (part: ShardPart) => Promise<T>) => {
    for (const index of shards) await job({ index, of: SHARDS.work });
  };
  for (let round = 0; round < 12; round++) {
    clock.advance(round < 6 ? 16 * MINUTE : 6 * 60 * MINUTE);
    const deps = { ...base, acquirer } as Deps;
    await jobsDrain((part) => reconcileDue(deps, { part }));
    await jobsDrain((part) => runCaptureJob(deps, { part }));
    await jobsDrain((part) => reconcileDue(deps, { part }));
  }

  const divergences: Divergence[] = [];
  for (const id of paymentIds) {
    const p = await read(id);
    if (!p) continue;
    divergences.push(...checkPayment(p, await sandboxLedger(base.db, service.backend.tableName, id), { settled: true }));
  }
  stats.runs++;
  stats.divergences += divergences.length;
  return divergences;
}

