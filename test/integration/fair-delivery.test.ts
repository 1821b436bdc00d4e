import { SLOW_ANSWER_MS } from '../../lambdas/domain/callback';
import { CALLBACKS_PER_LANE, RELAY_POLL_MS, runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { paidPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';
import { startAll } from '../support/lifecycle';

/**
 * One merchant's endpoint answers slowly (under the timeout, so every callback succeeds), another's
 * at once. Delivery runs in lanes per merchant: the slow one holds at most CALLBACKS_PER_LANE
 * workers, so the fast merchant's callbacks go out as fast as they would alone, whether they were
 * due when the relay started or became due while it was busy with the slow ones; the stream's fast
 * path leaves an endpoint known to be slow to the relay.
 */
const SLOW_MS = SLOW_ANSWER_MS + 500;
let service: TestService;
let slow: CallbackReceiver;
let fast: CallbackReceiver;

beforeAll(async () => {
  service = await startTestService({ env: { CALLBACK_TIMEOUT_MS: String(SLOW_MS + 3000) } });
  [slow, fast] = await startAll([startCallbackReceiver(), startCallbackReceiver()]);
  slow.delayMs = SLOW_MS;
});
afterAll(async () => {
  await Promise.all([slow?.close(), fast?.close()]);
  await service?.close();
});

const shop = (name: string, receiver: CallbackReceiver) => service.createMerchant({ name, settings: { notificationUrl: receiver.url } });

/** Milliseconds from `since` to the arrival of each of the receiver's callbacks of these payments. */
const arrivals = (receiver: CallbackReceiver, ids: readonly string[], since: number) =>
  receiver.received.filter((cb) => ids.includes(cb.fields.id ?? '')).map((cb) => cb.at - since);

it('a slow merchant does not hold up a fast one: the fast callbacks arrive as they would alone', async () => {
  const [slowShop, fastShop] = await Promise.all([shop('Slow Endpoint Shop', slow), shop('Fast Endpoint Shop', fast)]);
  // Alone: the fast merchant's callbacks, and how long the relay takes to deliver them.
  const alone = await Promise.all(Array.from({ length: 4 }, () => paidPayment(service, fastShop)));
  let started = Date.now();
  await runCallbackJob(service.deps, { drain: true, stopAt: Date.now() + 30_000 });
  const aloneMs = Math.max(...arrivals(fast, alone.map((p) => p.paymentId), started));

  // Beside 8 slow callbacks: 4 fast ones due at the start, 2 more paid once the slow ones are under way.
  const slowPaid = await Promise.all(Array.from({ length: 8 }, () => paidPayment(service, slowShop)));
  const fastPaid = await Promise.all(Array.from({ length: 4 }, () => paidPayment(service, fastShop)));
  started = Date.now();
  const relay = runCallbackJob(service.deps, { drain: true, stopAt: Date.now() + 60_000 });
  await new Promise((r) => setTimeout(r, 300));
  const lateStart = Date.now();
  const latePaid = await Promise.all(Array.from({ length: 2 }, () => paidPayment(service, fastShop)));
  const report = await relay;

  expect(report).toMatchObject({ delivered: 14, failed: 0 });
  const fastMs = Math.max(...arrivals(fast, fastPaid.map((p) => p.paymentId), started));
  const lateMs = Math.max(...arrivals(fast, latePaid.map((p) => p.paymentId), lateStart));
  const slowMs = Math.max(...arrivals(slow, slowPaid.map((p) => p.paymentId), started));
  // The slow merchant needs 8 / CALLBACKS_PER_LANE rounds of SLOW_MS (the last round starts after the others); the fast ones none of them.
  expect(slowMs).toBeGreaterThanOrEqual((8 / CALLBACKS_PER_LANE - 1) * SLOW_MS - 100);
  // Within 2 s of their time alone (the machine's load moves both; the relay also serves the slow lane),
  // and before any slow answer could have come back: never behind a slow merchant's answer.
  expect(fastMs).toBeLessThan(aloneMs + 2000);
  expect(fastMs).toBeLessThan(SLOW_MS);
  // Paid while the slow deliveries were in progress: picked up at the relay's next look, not after them.
  expect(lateMs).toBeLessThan(RELAY_POLL_MS + 1500);
  // At most CALLBACKS_PER_LANE slow deliveries were ever in flight at once.
  const slowStarts = slow.received.filter((cb) => slowPaid.some((p) => p.paymentId === cb.fields.id)).map((cb) => cb.at).sort((a, b) => a - b);
  for (let i = CALLBACKS_PER_LANE; i < slowStarts.length; i++) expect(slowStarts[i]! - slowStarts[i - CALLBACKS_PER_LANE]!).toBeGreaterThanOrEqual(SLOW_MS - 100);
}, 90_000);

it('the stream fast path leaves an endpoint it knows to be slow to the relay, and delivers the fast one', async () => {
  const [slowShop, fastShop] = await Promise.all([shop('Slow Stream Shop', slow), shop('Fast Stream Shop', fast)]);
  // The slow endpoint was marked slow by the deliveries above; a fresh one is marked by its first slow answer.
  const first = await paidPayment(service, slowShop);
  await runCallbackJob(service.deps, { payments: [{ paymentId: first.paymentId, merchantKey: slowShop.merchant_key }], deferSlow: true });
  const [s, f] = await Promise.all([paidPayment(service, slowShop), paidPayment(service, fastShop)]);
  const before = slow.received.length;
  const started = Date.now();
  const report = await runCallbackJob(service.deps, {
    payments: [
      { paymentId: s.paymentId, merchantKey: slowShop.merchant_key },
      { paymentId: f.paymentId, merchantKey: fastShop.merchant_key },
    ],
    deferSlow: true,
  });
  expect(Date.now() - started).toBeLessThan(SLOW_MS);
  expect(report).toMatchObject({ delivered: 1, deferred: 1, failed: 0 });
  expect(slow.received.length).toBe(before);
  // Still in the outbox, due now: the relay's lane delivers it.
  expect(await service.deps.callbacks.due(new Date(), 1000)).toContain(s.paymentId);
  expect(await runCallbackJob(service.deps, { paymentIds: [s.paymentId] })).toMatchObject({ delivered: 1 });
}, 60_000);
