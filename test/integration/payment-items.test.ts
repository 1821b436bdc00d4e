import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { LOCAL_SHARDS, key, searchShardsOf, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import { DETAIL_FIELDS } from '../../lambdas/adapters/dynamodb/payment-store';
import type { Payment } from '../../lambdas/domain/payment';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { itemSize } from '../bench/write-heat';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { merchantCall, openSession, paidPayment, refundOf, statusOf, storedPayment, submitPage } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * A payment is two items (docs/architecture.md, "Keys and heat"): its state, which every change
 * rewrites, and its details, written once before it. What that must not break: payments written
 * whole before the split keep working; a crash between the two writes leaves nothing a reader
 * trips on; nothing changes the details; and the state item of a completed page payment stays
 * under 1 KB, so each of its writes costs one write unit.
 */
let service: TestService;
let shop: MerchantCredentials;
let receiver: CallbackReceiver;

beforeAll(async () => {
  // As deployed: writes that make a callback due leave the stream dispatcher its lease.
  service = await startTestService({ env: { CALLBACK_STREAM: '1' } });
  receiver = await startCallbackReceiver();
  shop = await service.createMerchant({ name: 'Split Shop', settings: { notificationUrl: receiver.url } });
});
afterAll(async () => {
  await receiver.close();
  await service.close();
});

const table = () => service.backend.tableName;
const get = async (k: { pk: string; sk: string }) => (await service.deps.db.send(new GetCommand({ TableName: table(), Key: k, ConsistentRead: true }))).Item;

test('the state item of a page payment, paid and its callback delivered, is under 1 KB at every step', async () => {
  // The customer of the session fixture (John Doe, john@example.com): a name and an e-mail some 40
  // characters longer together take the writes after the payment to two units (docs/architecture.md).
  const session = await openSession(service, shop);
  const sizes: number[] = [itemSize(marshall((await get(key.payment(session.paymentId)))!))];
  expect((await submitPage(service, session, {})).status).toBe(303);
  sizes.push(itemSize(marshall((await get(key.payment(session.paymentId)))!)));
  // Delivered as the stream dispatcher does, handed the payment by the stream (taking the lease the write left it).
  await runCallbackJob(service.deps, { paymentIds: [session.paymentId], fromStream: true, deferSlow: true });
  sizes.push(itemSize(marshall((await get(key.payment(session.paymentId)))!)));
  for (const size of sizes) expect(size).toBeLessThan(1024);
  expect(receiver.received.filter((c) => c.fields.id === session.paymentId)).toHaveLength(1);
});

test('nothing changes the details: a change naming one of their fields is refused before it is sent', async () => {
  const paid = await paidPayment(service, shop);
  for (const field of DETAIL_FIELDS) {
    await expect(
      service.deps.store.apply(paid.paymentId, { guard: {}, change: { set: { [field]: {}, updatedAt: new Date().toISOString() } as never } }),
    ).rejects.toThrow(`${field} is written once, with the payment`);
  }
});

test('a crash between the two writes of a new payment leaves details nothing reads: the order still finds its payment', async () => {
  const paid = await paidPayment(service, shop);
  // The details of a newer payment of the same order, whose state item was never written.
  const orphan = 'b3a2c1d0-0000-4000-8000-000000000000';
  await service.deps.db.send(
    new PutCommand({
      TableName: table(),
      Item: { ...key.paymentDetails(orphan), kind: 'payment-details', order: paid.order, gsi1pk: key.orderIndex(shop.merchant_key, paid.order.number), gsi1sk: '2999-01-01T00:00:00.000Z' },
    }),
  );
  expect(await service.deps.store.findPayment(orphan)).toBeUndefined();
  const byOrder = await merchantCall<{ payment_id: string; status: string }>(service, shop, '/api/v1/payment/status', { order_id: paid.order.number });
  expect(byOrder.status).toBe(200);
  expect(byOrder.json).toMatchObject({ payment_id: paid.paymentId, status: 'settled' });
  expect((await service.deps.store.paymentsByOrder(shop.merchant_key, paid.order.number, 10)).map((p) => p.paymentId)).toEqual([paid.paymentId]);
});

/** Rewrites a payment as the layout before the split stored it: one item, the order lookup on it, the id in it. */
async function asWholeItem(paymentId: string): Promise<Payment> {
  const state = (await get(key.payment(paymentId)))!;
  const details = (await get(key.paymentDetails(paymentId)))!;
  const { linkEnds: _ends, ...rest } = state;
  const { pk: _pk, sk: _sk, kind: _kind, ...asked } = details;
  await service.deps.db.send(new PutCommand({ TableName: table(), Item: { ...rest, ...asked, paymentId, gsi1sk: `${state.createdAt}#${paymentId}` } }));
  await service.deps.db.send(new DeleteCommand({ TableName: table(), Key: key.paymentDetails(paymentId) }));
  return (await service.deps.store.findPayment(paymentId))!;
}

test('a payment written whole before the split is read, paid on its link, refunded and reported as before', async () => {
  const session = await openSession(service, shop);
  const whole = await asWholeItem(session.paymentId);
  expect(whole).toMatchObject({ paymentId: session.paymentId, status: 'prepare', order: { number: session.order.number } });
  expect(whole.checkout?.expiresAt).toBeDefined();

  // The attempt's condition reads the link's expiry where that layout kept it.
  expect((await submitPage(service, session, {})).status).toBe(303);
  expect((await statusOf(service, shop, session.paymentId)).status).toBe('settled');
  expect((await refundOf(service, shop, session.paymentId, '1.00')).status).toBe(200);
  await runCallbackJob(service.deps, { fromStream: true });
  const sent = receiver.received.filter((c) => c.fields.id === session.paymentId).map((c) => `${c.fields.type}:${c.fields.status}:${c.fields.order_number}`);
  expect(sent).toEqual([`sale:success:${session.order.number}`, `refund:waiting:${session.order.number}`, `refund:success:${session.order.number}`]);
  // Still one item: nothing wrote details for it.
  expect(await get(key.paymentDetails(session.paymentId))).toBeUndefined();
  expect((await storedPayment(service, session.paymentId)).order.number).toBe(session.order.number);
  expect((await get(key.payment(session.paymentId)))?.searchPk).toBe(key.search(shop.merchant_key, whole.createdAt.slice(0, 10), shardOf(session.paymentId, searchShardsOf(whole.createdAt.slice(0, 10), LOCAL_SHARDS))));
});
