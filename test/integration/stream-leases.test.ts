import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { STREAM_LEASE_MS, STREAM_LEASE_TAG } from '../../lambdas/adapters/dynamodb/payment-store';
import { ManualClock } from '../../lambdas/ports/clock';
import { callbackLog, resendCallback } from '../../lambdas/use-cases/callback-log';
import { callbackView } from '../../lambdas/protocol/admin/callbacks';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { RECONCILE_AFTER_MS } from '../../lambdas/domain/payment/queues';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { paidPayment, refundOf } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Where the table's stream dispatcher delivers new callbacks (CALLBACK_STREAM=1, as the stack sets
 * it), a write that makes a callback due leaves the dispatcher its lease: the dispatcher delivers
 * without a lease write, the relay keeps off until that lease ends, and a callback delivered at its
 * first attempt is recorded by the write that releases it (no record item). Time is a ManualClock;
 * the relay and the dispatcher run when a test calls them.
 */
const START = new Date('2030-04-01T06:00:00Z');
const clock = new ManualClock(START);
let service: TestService;
const receivers: CallbackReceiver[] = [];
/** Every write command the service sends, with the sort key of the item it addresses. */
const writes: string[] = [];

beforeAll(async () => {
  service = await startTestService({ clock, env: { CALLBACK_STREAM: '1' } });
  service.deps.db.middlewareStack.add(
    (next, context) => async (args) => {
      const input = (args as { input?: { Key?: { sk?: string }; Item?: { sk?: string } } }).input;
      const sk = input?.Key?.sk ?? input?.Item?.sk;
      if (/^(Put|Update|Delete)Item/.test(context.commandName ?? '')) writes.push(`${context.commandName?.replace('Command', '')} ${sk}`);
      return next(args);
    },
    { step: 'initialize', name: 'recordWrites' },
  );
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await service.close();
});
beforeEach(() => clock.set(START));

async function shopWithReceiver(): Promise<{ shop: MerchantCredentials; receiver: CallbackReceiver }> {
  const receiver = await startCallbackReceiver();
  receivers.push(receiver);
  return { shop: await service.createMerchant({ name: 'Stream Shop', settings: { notificationUrl: receiver.url } }), receiver };
}

const stateOf = async (paymentId: string) =>
  (await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: key.payment(paymentId), ConsistentRead: true }))).Item!;
const dispatcher = (paymentId: string) => runCallbackJob(service.deps, { paymentIds: [paymentId], deferSlow: true, fromStream: true });
const relay = () => runCallbackJob(service.deps);
const ofPayment = (receiver: CallbackReceiver, paymentId: string) => receiver.received.filter((c) => c.fields.id === paymentId);

test('the write that records the sale leaves the dispatcher its lease; the dispatcher delivers with one write, the release', async () => {
  const { shop, receiver } = await shopWithReceiver();
  const paid = await paidPayment(service, shop);
  const state = await stateOf(paid.paymentId);
  expect(state.sendLease).toBe(`${new Date(Date.parse(String(state.updatedAt)) + STREAM_LEASE_MS).toISOString()}#${STREAM_LEASE_TAG}`);

  writes.splice(0);
  expect(await dispatcher(paid.paymentId)).toMatchObject({ delivered: 1, failed: 0 });
  expect(ofPayment(receiver, paid.paymentId).map((c) => `${c.fields.type}:${c.fields.status}`)).toEqual(['sale:success']);
  // No lease write, no delivery record: the release (callback done, outbox left, the attempt kept,
  // the work entry that was its safety net removed) is the one write.
  expect(writes).toEqual(['UpdateItem PAYMENT']);
  const after = await stateOf(paid.paymentId);
  for (const attribute of ['sendLease', 'sendPk', 'sendSk', 'callbackNet', 'workPk', 'workSk']) expect(after).not.toHaveProperty(attribute);
  expect(after.callbacksDone).toBe(1);
});

test('the answer leaves the callback to the stream alone: no outbox entry, the attempt\'s work entry kept and marked as its net', async () => {
  const { shop } = await shopWithReceiver();
  const paid = await paidPayment(service, shop);
  const state = await stateOf(paid.paymentId);
  // A due time without the outbox's partition: the sending index takes no entry (and removes none later).
  expect(state).not.toHaveProperty('sendPk');
  expect(state.sendSk).toBe(state.updatedAt);
  // The claim's work entry, due a reconcile interval after the attempt started, stays: the callback's safety net.
  expect(state.callbackNet).toBe(true);
  expect(String(state.workSk) < new Date(Date.parse(String(state.updatedAt)) + RECONCILE_AFTER_MS + 1000).toISOString()).toBe(true);
  expect(await service.deps.callbacks.dueEntries(new Date(Date.parse(String(state.updatedAt)) + 3600_000), 100)).not.toContainEqual(expect.objectContaining({ paymentId: paid.paymentId }));
});

test('a callback the stream never delivers: the relay keeps off until the lease ends; the net brings the reconciler, which hands it to the relay', async () => {
  const { shop, receiver } = await shopWithReceiver();
  const paid = await paidPayment(service, shop);
  await relay();
  expect(ofPayment(receiver, paid.paymentId)).toEqual([]);
  // The dispatcher never came (its stream lost the record): the lease ends, and the relay still has no entry to find.
  clock.advance(STREAM_LEASE_MS + 1000);
  await relay();
  expect(ofPayment(receiver, paid.paymentId)).toEqual([]);
  // The net comes due: the reconciler finds the payment at rest and files it out of the queue, handing the callback to the relay.
  clock.advance(RECONCILE_AFTER_MS);
  await reconcileDue(service.deps);
  const handed = await stateOf(paid.paymentId);
  expect(handed.sendPk).toEqual(expect.any(String));
  expect(handed).not.toHaveProperty('callbackNet');
  expect(handed).not.toHaveProperty('workPk');
  await relay();
  expect(ofPayment(receiver, paid.paymentId).map((c) => c.fields.type)).toEqual(['sale']);
  // The relay took a lease of its own: after its delivery the dispatcher has nothing left to send.
  expect(await dispatcher(paid.paymentId)).toMatchObject({ delivered: 0 });
  expect(ofPayment(receiver, paid.paymentId)).toHaveLength(1);
});

test('a write that makes another callback due leaves a worker\'s live lease as it is: no second deliverer', async () => {
  const { shop, receiver } = await shopWithReceiver();
  const paid = await paidPayment(service, shop);
  // The relay holds the payment (the dispatcher's lease had ended), its delivery in progress.
  clock.advance(STREAM_LEASE_MS + 1000);
  const now = clock.now();
  const claim = await service.deps.callbacks.claim(paid.paymentId, now, new Date(now.getTime() + 30_000));
  expect(claim).toBeDefined();
  // Meanwhile a refund appends a transaction (its callback due).
  expect((await refundOf(service, shop, paid.paymentId, '1.00')).status).toBe(200);
  expect((await stateOf(paid.paymentId)).sendLease).toBe(claim!.lease);
  // The dispatcher, handed the refund's record, finds the payment held and leaves it.
  expect(await dispatcher(paid.paymentId)).toMatchObject({ delivered: 0 });
  expect(ofPayment(receiver, paid.paymentId)).toEqual([]);
  // The holder finishes (its release gives the lease back), and the rest goes out in order.
  await service.deps.callbacks.release(claim!, { done: false, dueAt: clock.now() });
  await relay();
  expect(ofPayment(receiver, paid.paymentId).map((c) => `${c.fields.type}:${c.fields.status}`)).toEqual(['sale:success', 'refund:waiting', 'refund:success']);
});

test('a callback delivered at its first attempt has no record item; its log comes from the payment, and a resend starts one', async () => {
  const { shop, receiver } = await shopWithReceiver();
  const paid = await paidPayment(service, shop);
  await dispatcher(paid.paymentId);
  const items = await service.tableItems();
  expect(items.filter((i) => i.pk === key.payment(paid.paymentId).pk && String(i.sk).startsWith(key.callbackPrefix))).toEqual([]);

  const deps = { ...service.deps };
  const [log] = (await callbackLog(deps, paid.paymentId)).map(callbackView);
  expect(log).toMatchObject({ index: 0, type: 'sale', state: 'delivered', attempt_count: 1, delivered_at: START.toISOString(), resendable: true });
  expect(log!.attempts).toEqual([{ at: START.toISOString(), url: receiver.url, httpStatus: 200, latencyMs: expect.any(Number) }]);

  // Sent again at an operator's request: the record item starts from the summary, counting both attempts.
  clock.advance(60_000);
  expect(await resendCallback(deps, 'operator:test', paid.paymentId, 0)).toMatchObject({ outcome: 'queued' });
  clock.advance(STREAM_LEASE_MS + 1000);
  await relay();
  expect(ofPayment(receiver, paid.paymentId).map((c) => c.fields.type)).toEqual(['sale', 'sale']);
  const [again] = (await callbackLog(deps, paid.paymentId)).map(callbackView);
  expect(again).toMatchObject({ state: 'delivered', attempt_count: 2 });
  expect(items.length).toBeLessThan((await service.tableItems()).length);
});

describe('one lease for a payment\'s callbacks in a row', () => {
  test('the dispatcher delivers three due callbacks in order with three writes, one release each and no lease write', async () => {
    const { shop, receiver } = await shopWithReceiver();
    const paid = await paidPayment(service, shop);
    // The sale's callback and two refunds' (each a waiting and a success): all due, the stream's lease on the payment.
    expect((await refundOf(service, shop, paid.paymentId, '1.00')).status).toBe(200);
    writes.splice(0);
    const report = await dispatcher(paid.paymentId);
    expect(report).toMatchObject({ failed: 0 });
    const sent = ofPayment(receiver, paid.paymentId).map((c) => `${c.fields.type}:${c.fields.status}`);
    expect(sent).toEqual(['sale:success', 'refund:waiting', 'refund:success']);
    // One write per callback (the release that moves past it, the last one leaving the outbox): the lease is never taken again.
    expect(writes).toEqual(['UpdateItem PAYMENT', 'UpdateItem PAYMENT', 'UpdateItem PAYMENT']);
    const after = await stateOf(paid.paymentId);
    expect(after).not.toHaveProperty('sendLease');
    expect(after).not.toHaveProperty('sendPk');
    expect(after.callbacksDone).toBe(3);
  });

  test('the relay takes one lease for the run, not one per callback', async () => {
    const { shop, receiver } = await shopWithReceiver();
    const paid = await paidPayment(service, shop);
    expect((await refundOf(service, shop, paid.paymentId, '1.00')).status).toBe(200);
    clock.advance(STREAM_LEASE_MS + 1000);
    writes.splice(0);
    await relay();
    expect(ofPayment(receiver, paid.paymentId).map((c) => `${c.fields.type}:${c.fields.status}`)).toEqual(['sale:success', 'refund:waiting', 'refund:success']);
    // One lease write, then one release per callback.
    expect(writes.filter((w) => w === 'UpdateItem PAYMENT')).toHaveLength(4);
  });

  test('a kept lease is its worker\'s only: another worker cannot claim meanwhile, and once it ended and was taken over the first worker posts nothing more', async () => {
    const { shop, receiver } = await shopWithReceiver();
    const paid = await paidPayment(service, shop);
    expect((await refundOf(service, shop, paid.paymentId, '1.00')).status).toBe(200);
    clock.advance(STREAM_LEASE_MS + 1000);
    const now = clock.now();
    const first = await service.deps.callbacks.claim(paid.paymentId, now, new Date(now.getTime() + 30_000));
    expect(first?.index).toBe(0);
    expect(await service.deps.callbacks.release(first!, { done: true, dueAt: now }, { keepLease: true })).toBe('released');
    expect((await stateOf(paid.paymentId)).sendLease).toBe(first!.lease);
    // Another worker finds the payment held.
    expect(await service.deps.callbacks.claim(paid.paymentId, clock.now(), new Date(clock.now().getTime() + 30_000))).toBeUndefined();
    // The holder, with its kept lease: the next callback, no write.
    writes.splice(0);
    const second = await service.deps.callbacks.claim(paid.paymentId, clock.now(), new Date(clock.now().getTime() + 30_000), { keptLease: { lease: first!.lease, until: new Date(clock.now().getTime() + 10_000) } });
    expect(second?.index).toBe(1);
    expect(second?.lease).toBe(first!.lease);
    expect(writes).toEqual([]);
    // A kept lease too short for one more POST is not taken as it is.
    expect(await service.deps.callbacks.claim(paid.paymentId, clock.now(), new Date(clock.now().getTime() + 30_000), { keptLease: { lease: first!.lease, until: new Date(clock.now().getTime() + 60_000) } })).toBeUndefined();
    // The holder stalls past its lease; the relay takes over and delivers the rest.
    clock.advance(31_000);
    await relay();
    expect(ofPayment(receiver, paid.paymentId).map((c) => `${c.fields.type}:${c.fields.status}`)).toEqual(['refund:waiting', 'refund:success']);
    // The stalled holder's release of what it claimed is refused: its lease is gone.
    expect(await service.deps.callbacks.release(second!, { done: true, dueAt: clock.now() }, { keepLease: true })).toBe('lost');
    expect(await service.deps.callbacks.claim(paid.paymentId, clock.now(), new Date(clock.now().getTime() + 30_000), { keptLease: { lease: first!.lease, until: clock.now() } })).toBeUndefined();
    expect(ofPayment(receiver, paid.paymentId)).toHaveLength(2);
  });
});

test('a write made while a retry waits leaves the dispatcher a lease it cannot use: the dispatcher gives it back, and the relay delivers at the retry\'s time', async () => {
  const { shop, receiver } = await shopWithReceiver();
  receiver.script(503);
  const paid = await paidPayment(service, shop);
  // The sale's first attempt is refused: its retry waits (the relay's from now on).
  expect(await dispatcher(paid.paymentId)).toMatchObject({ retrying: 1 });
  const waiting = await stateOf(paid.paymentId);
  expect(waiting.sendSk > clock.now().toISOString()).toBe(true);
  // A refund meanwhile leaves the dispatcher a lease; handed its record, the dispatcher has nothing due.
  expect((await refundOf(service, shop, paid.paymentId, '1.00')).status).toBe(200);
  expect(String((await stateOf(paid.paymentId)).sendLease)).toMatch(new RegExp(`#${STREAM_LEASE_TAG}$`));
  expect(await dispatcher(paid.paymentId)).toMatchObject({ delivered: 0, retrying: 0 });
  const handedBack = await stateOf(paid.paymentId);
  expect(handedBack).not.toHaveProperty('sendLease');
  expect(handedBack.sendSk).toBe(waiting.sendSk);
  // At the retry's time (well inside the lease it was left), the relay delivers all three, in order.
  clock.set(new Date(Date.parse(String(waiting.sendSk)) + 1));
  await relay();
  expect(ofPayment(receiver, paid.paymentId).filter((c) => c.answer === 200).map((c) => `${c.fields.type}:${c.fields.status}`)).toEqual(['sale:success', 'refund:waiting', 'refund:success']);
});
