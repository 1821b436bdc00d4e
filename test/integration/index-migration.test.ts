import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { startLocalBackend } from '../../local/backend';
import { LOCAL_SHARDS, SHARDS, key, searchShardsOf, shardOf, workPartitionOf } from '../../lambdas/adapters/dynamodb/keys';
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

  const report = await migrateIndexKeys(service.deps.db, table(), LOCAL_SHARDS);
  expect(report).toMatchObject({ written: 2, reread: 0 });
  const migrated = await get(`PAYMENT#${id}`, 'PAYMENT');
  expect(migrated).toMatchObject({
    workPk: key.work('reconcile', shardOf(id, LOCAL_SHARDS.work)),
    workSk: `2020-01-01T00:00:00.000Z#${id}`,
    sendPk: key.outbox(shardOf(id, LOCAL_SHARDS.outbox)),
    sendSk: `2020-01-01T00:01:00.000Z#${id}`,
    searchPk: key.search(merchant.merchant_key, createdAt.slice(0, 10), shardOf(id, searchShardsOf(createdAt.slice(0, 10), LOCAL_SHARDS))),
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
  expect(await migrateIndexKeys(service.deps.db, table(), LOCAL_SHARDS)).toEqual({ found: 0, written: 0, reread: 0 });
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
    const report = await migrateIndexKeys(service.deps.db, table(), LOCAL_SHARDS);
    expect(report).toMatchObject({ written: 1, reread: 1 });
  } finally {
    spy.mockRestore();
  }
  expect(await get(`PAYMENT#${id}`, 'PAYMENT')).toMatchObject({ workPk: key.work('capture', shardOf(id, LOCAL_SHARDS.work)), workSk: `2020-01-09T00:00:00.000Z#${id}` });
});

it('leaves items of the new layout in their shards alone', () => {
  for (const shards of [SHARDS, LOCAL_SHARDS]) {
    expect(migratedKeys({ pk: 'PAYMENT#x', sk: 'PAYMENT', workPk: workPartitionOf('reconcile', 'x', shards), workSk: 'a#x' }, shards)).toBeUndefined();
    expect(migratedKeys({ pk: 'MERCHANT#x', sk: 'PROFILE', gsi1pk: 'MERCHANTS' }, shards)).toBeUndefined();
  }
});

it('moves entries written under other shard counts to their shards under the table\'s, only when asked to reshard', async () => {
  const merchant = await service.createMerchant({ name: 'Recounted Shop' });
  // Payments as a table of the cloud's counts wrote them (the work, outbox and search entries),
  // until three sit in shards the local counts do not read.
  const moved: { id: string; day: string }[] = [];
  while (moved.filter(({ id }) => shardOf(id, SHARDS.work) >= LOCAL_SHARDS.work).length < 3 || moved.length < 4) {
    const id = (await openSession(service, merchant)).paymentId;
    const day = String((await get(`PAYMENT#${id}`, 'PAYMENT')).createdAt).slice(0, 10);
    moved.push({ id, day });
    await service.deps.db.send(
      new UpdateCommand({
        TableName: table(),
        Key: { pk: `PAYMENT#${id}`, sk: 'PAYMENT' },
        UpdateExpression: 'SET workPk = :w, workSk = :ws, sendPk = :s, sendSk = :ss, searchPk = :q',
        ExpressionAttributeValues: {
          ':w': workPartitionOf('capture', id, SHARDS),
          ':ws': `2020-01-02T00:00:00.000Z#${id}`,
          ':s': key.outbox(shardOf(id, SHARDS.outbox)),
          ':ss': '2020-01-02T00:00:00.000Z',
          ':q': key.search(merchant.merchant_key, day, shardOf(id, searchShardsOf(day, SHARDS))),
        },
      }),
    );
  }
  // Without resharding nothing moves: a cloud table's backfill leaves entries of the current layout be.
  expect(await migrateIndexKeys(service.deps.db, table(), LOCAL_SHARDS)).toEqual({ found: 0, written: 0, reread: 0 });
  const report = await migrateIndexKeys(service.deps.db, table(), LOCAL_SHARDS, { reshard: true });
  expect(report.written).toBe(report.found);
  expect(report.found).toBeGreaterThanOrEqual(3);
  for (const { id, day } of moved) {
    expect(await get(`PAYMENT#${id}`, 'PAYMENT')).toMatchObject({
      workPk: workPartitionOf('capture', id, LOCAL_SHARDS),
      sendPk: key.outbox(shardOf(id, LOCAL_SHARDS.outbox)),
      searchPk: key.search(merchant.merchant_key, day, shardOf(id, searchShardsOf(day, LOCAL_SHARDS))),
    });
  }
  // The local readers find every one of them.
  const ids = moved.map(({ id }) => id).sort();
  const mine = (found: string[]) => found.filter((id) => ids.includes(id)).sort();
  expect(mine((await service.deps.store.due('capture', new Date('2020-01-03T00:00:00.000Z'), 1000)).map((q) => q.paymentId))).toEqual(ids);
  expect(mine(await service.deps.callbacks.due(new Date('2020-01-03T00:00:00.000Z'), 1000))).toEqual(ids);
  const days = [...new Set(moved.map(({ day }) => day))];
  const listed = await Promise.all(days.map((day) => service.deps.store.paymentsOfDay({ merchantKey: merchant.merchant_key, day, limit: 25 })));
  expect(mine(listed.flatMap((d) => d.payments.map((p) => p.paymentId)))).toEqual(ids);
  expect(await migrateIndexKeys(service.deps.db, table(), LOCAL_SHARDS, { reshard: true })).toEqual({ found: 0, written: 0, reread: 0 });
});

it('the local runner moves the entries of a data directory written under other counts at its next start, once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'checkout-reshard-'));
  try {
    let backend = await startLocalBackend({ dataDir });
    expect(JSON.parse(readFileSync(join(dataDir, 'shard-counts.json'), 'utf8'))).toEqual(LOCAL_SHARDS);
    const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
    // A payment's work entry as a table of the cloud's counts keeps it, in a shard the local counts do not read.
    let id = 'dir-0';
    for (let i = 1; shardOf(id, SHARDS.work) < LOCAL_SHARDS.work; i++) id = `dir-${i}`;
    await db.send(new PutCommand({ TableName: backend.tableName, Item: { pk: `PAYMENT#${id}`, sk: 'PAYMENT', kind: 'payment', paymentId: id, workPk: workPartitionOf('capture', id, SHARDS), workSk: `2020-01-02T00:00:00.000Z#${id}` } }));
    db.destroy();
    await backend.close();
    // The directory as an older version left it: no record of its counts.
    rmSync(join(dataDir, 'shard-counts.json'));
    backend = await startLocalBackend({ dataDir });
    expect(backend.indexMigration).toMatch(/1 item/);
    const again = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
    const item = (await again.send(new GetCommand({ TableName: backend.tableName, Key: { pk: `PAYMENT#${id}`, sk: 'PAYMENT' } }))).Item;
    expect(item?.workPk).toBe(workPartitionOf('capture', id, LOCAL_SHARDS));
    again.destroy();
    await backend.close();
    // The next start reads nothing to move: the counts are on record.
    backend = await startLocalBackend({ dataDir });
    expect(backend.indexMigration).toBeUndefined();
    await backend.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
