import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { SHARDS, key, searchShardsOf, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import { migrateIndexKeys, migratedKeys } from '../../lambdas/adapters/dynamodb/index-migration';
import { openSession } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Items of the layout before the sharded indexes (queuePk, outboxPk, gsi2pk, whole items in four
 * indexes) get their new keys from the backfill the local runner runs at start and the merchant CLI
 * runs against a stage (`migrate-indexes`), and the jobs, the relay and the admin search find them.
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.close());

const table = () => service.backend.tableName;
const get = async (pk: string, sk: string) => (await service.deps.db.send(new GetCommand({ TableName: table(), Key: { pk, sk }, ConsistentRead: true }))).Item!;

it('moves an old payment into its shards of the work queue, the outbox and the search, and an audit entry into the lookup index', async () => {
  const merchant = await service.createMerchant({ name: 'Old Layout Shop' });
  // A payment as this release writes it, then taken back to the old layout's keys.
  const session = await openSession(service, merchant);
  const id = session.paymentId;
  const item = await get(`PAYMENT#${id}`, 'PAYMENT');
  const { searchPk: _a, searchSk: _b, ...rest } = item;
  const createdAt = String(item.createdAt);
  const old = {
    ...rest,
    queuePk: 'reconcile',
    queueSk: `2020-01-01T00:00:00.000Z#${id}`,
    // A leased outbox entry: `<lease end>#<id>#<tag>`.
    outboxPk: 'CALLBACKS',
    outboxSk: `2020-01-01T00:01:00.000Z#${id}#abcd1234`,
    gsi2pk: `DAY#${createdAt.slice(0, 10)}`,
    gsi2sk: `${createdAt}#${id}`,
    transactions: [{ transId: 't1', type: 'sale', status: 'success', amountMinor: 100, at: createdAt, orderStatus: 'settled' }],
  };
  await service.deps.db.send(new PutCommand({ TableName: table(), Item: old }));
  const audit = { pk: 'AUDIT#2020-01-01', sk: 'SEQ#000001', kind: 'audit', id: 'a1', at: '2020-01-01T00:00:00.000Z', target: id, gsi2pk: `AUDITOF#${id}`, gsi2sk: '2020-01-01T00:00:00.000Z#a1' };
  await service.deps.db.send(new PutCommand({ TableName: table(), Item: audit }));

  // Not found through the new indexes before.
  expect(await service.deps.callbacks.due(new Date(), 1000)).not.toContain(id);

  const report = await migrateIndexKeys(service.deps.db, table());
  expect(report).toMatchObject({ written: 2, reread: 0 });
  const migrated = await get(`PAYMENT#${id}`, 'PAYMENT');
  expect(migrated).toMatchObject({
    workPk: key.work('reconcile', shardOf(id, SHARDS.work)),
    workSk: `2020-01-01T00:00:00.000Z#${id}`,
    sendPk: key.outbox(shardOf(id, SHARDS.outbox)),
    sendSk: `2020-01-01T00:01:00.000Z#${id}`,
    searchPk: key.search(merchant.merchant_key, createdAt.slice(0, 10), shardOf(id, searchShardsOf(createdAt.slice(0, 10)))),
    searchSk: `${createdAt}#${id}`,
  });
  for (const gone of ['queuePk', 'queueSk', 'outboxPk', 'outboxSk', 'gsi2pk', 'gsi2sk']) expect(migrated[gone]).toBeUndefined();
  expect(await get('AUDIT#2020-01-01', 'SEQ#000001')).toMatchObject({ gsi1pk: `AUDITOF#${id}`, gsi1sk: '2020-01-01T00:00:00.000Z#a1' });

  // The readers of the new layout find all of it.
  expect((await service.deps.store.due('reconcile', new Date(), 1000)).map((q) => q.paymentId)).toContain(id);
  expect(await service.deps.callbacks.due(new Date(), 1000)).toContain(id);
  const day = await service.deps.store.paymentsOfDay({ merchantKey: merchant.merchant_key, day: createdAt.slice(0, 10), limit: 25 });
  expect(day.payments.map((p) => p.paymentId)).toContain(id);
  expect((await service.deps.audit.forTarget(id, 10)).map((e) => e.id)).toEqual(['a1']);

  // Run again: nothing left to do.
  expect(await migrateIndexKeys(service.deps.db, table())).toEqual({ found: 0, written: 0, reread: 0 });
});

it('never overwrites a change made between its read and its write: it reads the item again', async () => {
  const id = 'race-payment';
  const base = { pk: `PAYMENT#${id}`, sk: 'PAYMENT', kind: 'payment', paymentId: id, merchantKey: 'm', createdAt: '2020-01-02T00:00:00.000Z' };
  await service.deps.db.send(new PutCommand({ TableName: table(), Item: { ...base, queuePk: 'capture', queueSk: `2020-01-02T00:00:00.000Z#${id}` } }));
  // A job moved it in the queue after the backfill read it: the conditional write fails, the backfill reads again.
  let moved = false;
  const realSend = service.deps.db.send.bind(service.deps.db);
  const spy = jest.spyOn(service.deps.db, 'send').mockImplementation((async (command: { constructor: { name: string } }) => {
    if (!moved && command.constructor.name === 'UpdateCommand') {
      moved = true;
      await realSend(new PutCommand({ TableName: table(), Item: { ...base, queuePk: 'capture', queueSk: `2020-01-09T00:00:00.000Z#${id}` } }) as never);
    }
    return realSend(command as never);
  }) as never);
  try {
    const report = await migrateIndexKeys(service.deps.db, table());
    expect(report).toMatchObject({ written: 1, reread: 1 });
  } finally {
    spy.mockRestore();
  }
  expect(await get(`PAYMENT#${id}`, 'PAYMENT')).toMatchObject({ workPk: key.work('capture', shardOf(id, SHARDS.work)), workSk: `2020-01-09T00:00:00.000Z#${id}` });
});

it('leaves items of the new layout alone', () => {
  expect(migratedKeys({ pk: 'PAYMENT#x', sk: 'PAYMENT', workPk: 'reconcile#1', workSk: 'a#x' })).toBeUndefined();
  expect(migratedKeys({ pk: 'MERCHANT#x', sk: 'PROFILE', gsi1pk: 'MERCHANTS' })).toBeUndefined();
});
