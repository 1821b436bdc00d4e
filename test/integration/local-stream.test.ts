import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { ManualClock } from '../../lambdas/ports/clock';
import { RECONCILE_AFTER_MS } from '../../lambdas/domain/payment/queues';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { LocalStream, streamingWrites, withLocalStream } from '../../local/local-stream';
import { setDeps } from '../../lambdas/container';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { paidPayment, voidOf } from '../support/payments';
import { startTestService, type TestService } from '../support/service';
import { CALLBACK_DISPATCHER_ID, asFunction } from '../support/table-access';

/**
 * The local runner's stand-in for the table's stream (local/local-stream.ts): the runner writes what
 * the cloud writes (the answer's callback left to the stream, its work entry the net), its stream
 * delivers in process, and what a killed runner left to it is handed over when the next one starts,
 * as a stream consumer resumes from its checkpoint. Time is a ManualClock.
 */
const START = new Date('2030-06-01T06:00:00Z');
const clock = new ManualClock(START);
let service: TestService;
let receiver: CallbackReceiver;
/** Every write command the service sends, with the sort key of the item it addresses. */
const writes: string[] = [];

beforeAll(async () => {
  service = await startTestService({ clock, localStream: true });
  receiver = await startCallbackReceiver();
  service.deps.db.middlewareStack.add(
    (next, context) => async (args) => {
      const input = (args as { input?: { Key?: { sk?: string }; Item?: { sk?: string } } }).input;
      if (/^(Put|Update|Delete)Item/.test(context.commandName ?? '')) writes.push(`${context.commandName?.replace('Command', '')} ${input?.Key?.sk ?? input?.Item?.sk}`);
      return next(args);
    },
    { step: 'initialize', name: 'recordWrites' },
  );
});
afterAll(async () => {
  await receiver.close();
  await service.close();
});

const stateOf = async (paymentId: string) =>
  (await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: key.payment(paymentId), ConsistentRead: true }))).Item!;
const delivered = (paymentId: string) => receiver.received.filter((c) => c.fields.id === paymentId && c.answer === 200).map((c) => `${c.fields.type}:${c.fields.status}`);

test('a paid checkout\'s callback leaves by the local stream: no outbox entry, no lease write, the release the one write after the answer', async () => {
  const shop = await service.createMerchant({ name: 'Local Stream Shop', settings: { notificationUrl: receiver.url } });
  writes.splice(0);
  const paid = await paidPayment(service, shop);
  await service.localStream!.idle();
  expect(delivered(paid.paymentId)).toEqual(['sale:success']);
  const after = await stateOf(paid.paymentId);
  for (const attribute of ['sendPk', 'sendSk', 'sendLease', 'callbackNet', 'workPk']) expect(after).not.toHaveProperty(attribute);
  // The last write is the release of the delivered callback (it took the net with it); none of the outbox's before it.
  expect(writes[writes.length - 1]).toBe('UpdateItem PAYMENT');
  expect(service.localStream!.stats.failed).toBe(0);
});

test('what a killed runner left to its stream is delivered by the next one: a callback with no outbox entry, and one under the stream\'s lease', async () => {
  const shop = await service.createMerchant({ name: 'Killed Runner Shop', settings: { notificationUrl: receiver.url } });
  // The runner dies with its stream's records: stopped, the stream takes none.
  await service.localStream!.stop();
  const netted = await paidPayment(service, shop);
  const leased = await paidPayment(service, shop);
  // A void of the other meanwhile: its writes hand the payment to the outbox, the stream's lease left on it.
  expect((await voidOf(service, shop, leased.paymentId)).status).toBe(200);
  expect(await stateOf(netted.paymentId)).not.toHaveProperty('sendPk');
  expect(String((await stateOf(leased.paymentId)).sendLease)).toMatch(/#stream$/);
  expect([...delivered(netted.paymentId), ...delivered(leased.paymentId)]).toEqual([]);

  // The next runner: a new stream over the same table, resumed at start.
  const next = withLocalStream(service.deps, (run) => asFunction(CALLBACK_DISPATCHER_ID, run));
  try {
    expect(await next.localStream.resume(service.deps.db, service.backend.tableName)).toBe(2);
    await next.localStream.idle();
    expect(delivered(netted.paymentId)).toEqual(['sale:success']);
    expect(delivered(leased.paymentId)).toEqual(['sale:success', 'void:success']);
    for (const id of [netted.paymentId, leased.paymentId]) expect(await stateOf(id)).not.toHaveProperty('sendSk');
  } finally {
    await next.localStream.stop();
  }
});

test('a batch that fails leaves its callback to the net: the reconciler hands it to the relay', async () => {
  const shop = await service.createMerchant({ name: 'Failed Batch Shop', settings: { notificationUrl: receiver.url } });
  const failing = new LocalStream(() => Promise.reject(new Error('the dispatcher failed')));
  // The handlers' store records on a stream whose every batch fails.
  setDeps({ ...service.deps, store: streamingWrites(service.deps.store, failing) });
  try {
    const paid = await paidPayment(service, shop);
    await failing.idle();
    expect(failing.stats).toMatchObject({ records: 1, runs: 1, failed: 1 });
    expect(delivered(paid.paymentId)).toEqual([]);
    clock.advance(RECONCILE_AFTER_MS + 1000);
    await reconcileDue(service.deps);
    await runCallbackJob(service.deps);
    expect(delivered(paid.paymentId)).toEqual(['sale:success']);
  } finally {
    setDeps(service.deps);
    await failing.stop();
  }
});
