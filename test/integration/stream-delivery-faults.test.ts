import fc from 'fast-check';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { STREAM_LEASE_MS } from '../../lambdas/adapters/dynamodb/payment-store';
import { ManualClock } from '../../lambdas/ports/clock';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { paidPayment, refundOf } from '../support/payments';
import { seeded } from '../support/seeded-random';
import { soakCount } from '../support/soak';
import { startTestService, type TestService } from '../support/service';

/**
 * The cloud's callback path on its worst days. With CALLBACK_STREAM=1 (as the stack sets it) the
 * write that makes a callback due leaves the table's stream dispatcher a lease, and the relay keeps
 * off until it ends. A DynamoDB stream delivers a record at least once, and a Lambda batch may be
 * retried: here each record of a write that appended transactions is lost, delivered once, or
 * delivered again later (up to three times), batched with other payments' records in any order,
 * sometimes while another dispatcher or the relay is at the same payment, while the merchant's
 * endpoint refuses some answers and the clock moves past leases. The answer to an intent leaves its
 * callback to the stream alone, the intent's work entry as its safety net (transition-expression.ts
 * `net`): a lost record is found by the reconciler, which hands the callback to the relay. Whatever
 * the draw, once the reconciler and the relay have run their course every payment's callbacks have
 * reached the merchant, each at least once and the first of each in the order of the payment's
 * transactions, and nothing is left in the outbox or the work queue.
 */
const RUNS = soakCount({ fast: 12, soak: 80, override: 'STREAM_FAULT_RUNS' });
const START = new Date('2030-05-01T06:00:00Z');
const clock = new ManualClock(START);
let service: TestService;
const receivers: CallbackReceiver[] = [];

beforeAll(async () => {
  service = await startTestService({ clock, env: { CALLBACK_STREAM: '1', CALLBACK_FIRST_RETRY_MS: '1000' } });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await service.close();
});


const dispatcher = (paymentIds: readonly string[]) => runCallbackJob(service.deps, { paymentIds: [...paymentIds], deferSlow: true, fromStream: true });
const relay = () => runCallbackJob(service.deps);
const reconciler = () => reconcileDue(service.deps);
const stateOf = async (paymentId: string) =>
  (await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: key.payment(paymentId), ConsistentRead: true }))).Item!;

/** How many times the stream hands over one record: lost, once, or again later. */
const copiesOf = (r: number): number => (r < 0.15 ? 0 : r < 0.75 ? 1 : r < 0.95 ? 2 : 3);

it(`every callback reaches the merchant in order whatever the stream loses, repeats, reorders or delays (${RUNS} runs)`, async () => {
  const stats = { records: 0, lost: 0, repeated: 0, refused: 0, relayRuns: 0 };
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (seed) => {
      const rnd = seeded(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      clock.set(START);
      const receiver = await startCallbackReceiver();
      receivers.push(receiver);
      const refusals = Array.from({ length: Math.floor(rnd() * 4) }, () => (rnd() < 0.5 ? 500 : 503));
      receiver.script(...refusals);
      stats.refused += refusals.length;
      const shop = await service.createMerchant({ name: `Stream Faults ${seed}`, settings: { notificationUrl: receiver.url } });

      // Each payment: paid, then up to two partial refunds (each appends its own transactions).
      const plans = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => 1 + Math.floor(rnd() * 3));
      const paymentIds: (string | undefined)[] = plans.map(() => undefined);
      const stepsLeft = [...plans];
      /** Stream records not yet handed over: a payment's id, one entry per copy. */
      const stream: string[] = [];
      const record = (paymentId: string) => {
        const copies = copiesOf(rnd());
        stats.records++;
        if (copies === 0) stats.lost++;
        if (copies > 1) stats.repeated++;
        for (let c = 0; c < copies; c++) stream.splice(Math.floor(rnd() * (stream.length + 1)), 0, paymentId);
      };

      while (stepsLeft.some((n) => n > 0) || stream.length) {
        const roll = rnd();
        const open = stepsLeft.map((n, i) => (n > 0 ? i : -1)).filter((i) => i >= 0);
        if (open.length && (roll < 0.45 || !stream.length)) {
          const i = pick(open);
          const id = paymentIds[i];
          if (id === undefined) paymentIds[i] = (await paidPayment(service, shop)).paymentId;
          else expect((await refundOf(service, shop, id, '1.00')).status).toBe(200);
          stepsLeft[i]!--;
          record(paymentIds[i]!);
        } else if (roll < 0.8 && stream.length) {
          // A batch of records, as the stream hands them to one invocation; sometimes two at once.
          const batch = stream.splice(0, 1 + Math.floor(rnd() * Math.min(3, stream.length)));
          const second = rnd() < 0.25 && stream.length ? stream.splice(0, 1) : [];
          await Promise.all([dispatcher(batch), ...(second.length ? [dispatcher(second)] : []), ...(rnd() < 0.15 ? [relay().then(() => stats.relayRuns++)] : [])]);
        } else {
          // Time passes: a lease may end (the relay may take over), a retry may come due.
          clock.advance(Math.floor(rnd() * (STREAM_LEASE_MS + 30_000)));
          if (rnd() < 0.5) {
            await relay();
            stats.relayRuns++;
          }
          if (rnd() < 0.3) await reconciler();
        }
      }

      // The reconciler and the relay run their course: every lease ends, every net and retry comes due.
      const ids = paymentIds.filter((id): id is string => id !== undefined);
      for (let round = 0; round < 12; round++) {
        clock.advance(STREAM_LEASE_MS + 60 * 60_000);
        await reconciler();
        await relay();
        stats.relayRuns++;
      }
      for (const id of ids) {
        const payment = (await service.deps.store.findPayment(id))!;
        const expected = payment.transactions.map((t) => `${t.type}:${t.status}`);
        const firsts: string[] = [];
        const seen = new Set<string>();
        for (const c of receiver.received.filter((r) => r.fields.id === id && r.answer === 200)) {
          const k = `${c.fields.type}:${c.fields.status}#${c.fields.trans_id}`;
          if (!seen.has(k)) {
            seen.add(k);
            firsts.push(`${c.fields.type}:${c.fields.status}`);
          }
        }
        expect({ seed, id, delivered: firsts }).toEqual({ seed, id, delivered: expected });
        const state = await stateOf(id);
        // A partition key alone is no outbox entry (the index needs both keys).
        const left = [state.sendSk, state.sendLease, state.callbackNet, state.workPk].filter((v) => v !== undefined);
        expect({ seed, id, left, done: state.callbacksDone }).toEqual({ seed, id, left: [], done: expected.length });
      }
    }),
    { numRuns: RUNS },
  );
  // The faults were drawn, not only possible: records lost and repeated, answers refused.
  expect(stats.lost).toBeGreaterThan(0);
  expect(stats.repeated).toBeGreaterThan(0);
  expect(stats.refused).toBeGreaterThan(0);
  console.log(`stream faults: ${RUNS} runs, ${stats.records} records (${stats.lost} lost, ${stats.repeated} repeated), ${stats.refused} answers refused, ${stats.relayRuns} relay runs`);
}, 240_000);
