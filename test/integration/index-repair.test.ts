import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand, PutCommand, QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { SEARCH_INDEX } from '../../lambdas/adapters/dynamodb/keys';
import { TABLE_SCHEMA, type IndexName } from '../../lib/table-schema';
import { LOCAL_TABLE_NAME, startLocalBackend, type LocalBackend } from '../../local/backend';
import { freePort, startTs, type Service } from '../support/processes';

/**
 * After a SIGKILL, dynalite's index entries can be out of step with the items (they are separate
 * LevelDB writes). The local backend rebuilds every index from the items when it starts on a data
 * directory. Here the damage is done at the storage level, as a crash leaves it: an entry missing,
 * an entry of an item that is gone or no longer belongs in the index, an entry under an old key, an
 * entry with old attributes.
 */
jest.setTimeout(90_000);

type Item = Record<string, unknown>;
interface SubDb {
  get(k: string, cb: (e: Error | null, v?: unknown) => void): void;
  put(k: string, v: unknown, cb: (e: Error | null) => void): void;
  del(k: string, cb: (e: Error | null) => void): void;
}
// dynalite's storage layer, to damage the data the way an interrupted write does.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as {
  create(o: { path: string }): {
    db: { close(cb: (e: Error | null) => void): void; iterator(): AsyncIterable<[string, unknown]> };
    getTable(n: string, c: boolean, cb: (e: Error | null, t?: { GlobalSecondaryIndexes: { IndexName: string }[] }) => void): void;
    getItemDb(table: string): SubDb;
    getIndexDb(type: string, table: string, index: string): SubDb;
  };
  createKey(item: unknown, table: object): string;
  getIndexActions(indexes: object[], existing: unknown, item: unknown, table: object): { puts: { key: string; item: unknown }[] };
};

const dataDirs: string[] = [];
let runner: Service | undefined;
afterAll(() => {
  runner?.kill();
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});
const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'checkout-index-'));
  dataDirs.push(dir);
  return dir;
};

const step = <T = void>(fn: (cb: (e: Error | null, v?: T) => void) => void) =>
  new Promise<T>((resolve, reject) => fn((e, v) => (e ? reject(e) : resolve(v as T))));

/** The data directory's storage, opened while no backend runs on it. */
async function openStorage(dataDir: string) {
  const store = dynaliteDb.create({ path: join(dataDir, 'dynamodb') });
  const table = await step<{ GlobalSecondaryIndexes: { IndexName: string }[] }>((cb) => store.getTable(LOCAL_TABLE_NAME, false, cb));
  const items = store.getItemDb(LOCAL_TABLE_NAME);
  const indexDb = (index: string) => store.getIndexDb('Global', LOCAL_TABLE_NAME, index);
  /** The entry dynalite writes for the item in the index (items are stored as attribute values). */
  const entryOf = (index: string, item: Item) => {
    const entry = dynaliteDb.getIndexActions(table.GlobalSecondaryIndexes.filter((i) => i.IndexName === index), null, marshall(item), table).puts[0];
    if (!entry) throw new Error(`${JSON.stringify(item)} has no entry in ${index}`);
    return entry;
  };
  return {
    /** An interrupted write: the item is written, its index entries are not. */
    writeItemOnly: (item: Item) => step((cb) => items.put(dynaliteDb.createKey(marshall(item), table), marshall(item), cb)),
    deleteEntry: (index: string, item: Item) => step((cb) => indexDb(index).del(entryOf(index, item).key, cb)),
    putEntry: (index: string, item: Item) => {
      const entry = entryOf(index, item);
      return step((cb) => indexDb(index).put(entry.key, entry.item, cb));
    },
    /** Every record of the store (items, index entries, table description), as stored. */
    dump: async () => {
      const records: string[] = [];
      for await (const [key, value] of store.db.iterator()) records.push(`${key} ${JSON.stringify(value)}`);
      return records;
    },
    close: () => step((cb) => store.db.close(cb)),
  };
}

async function withBackend<T>(dataDir: string, run: (backend: LocalBackend, db: DynamoDBDocumentClient) => Promise<T>): Promise<T> {
  const backend = await startLocalBackend({ dataDir });
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  try {
    return await run(backend, db);
  } finally {
    db.destroy();
    await backend.close();
  }
}

async function scanAll(db: DynamoDBDocumentClient, indexName?: string): Promise<Item[]> {
  const out: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: LOCAL_TABLE_NAME, ...(indexName ? { IndexName: indexName } : {}), ExclusiveStartKey: start }));
    out.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Items as comparable strings (attributes in name order), in a stable order. */
const sorted = (items: Item[]) => items.map((i) => JSON.stringify(i, Object.keys(i).sort())).sort();

/** Every index holds exactly the items that have its key attributes, with their current attributes. */
async function expectIndexesToAgreeWithItems(db: DynamoDBDocumentClient): Promise<void> {
  const items = await scanAll(db);
  for (const index of TABLE_SCHEMA.globalSecondaryIndexes) {
    const keep = new Set(['pk', 'sk', index.partitionKey, index.sortKey, ...index.projection]);
    // An entry carries the keys and the projected attributes only.
    const belonging = items
      .filter((i) => i[index.partitionKey] !== undefined && i[index.sortKey] !== undefined)
      .map((i) => Object.fromEntries(Object.entries(i).filter(([k]) => keep.has(k))));
    expect({ index: index.indexName, entries: sorted(await scanAll(db, index.indexName)) }).toEqual({ index: index.indexName, entries: sorted(belonging) });
  }
}

/** What a job or the admin portal asks of an index: the items under one partition, in order. */
async function query(db: DynamoDBDocumentClient, index: IndexName, partition: string): Promise<Item[]> {
  const schema = TABLE_SCHEMA.globalSecondaryIndexes.find((g) => g.indexName === index)!;
  const out = await db.send(
    new QueryCommand({ TableName: LOCAL_TABLE_NAME, IndexName: index, KeyConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': schema.partitionKey }, ExpressionAttributeValues: { ':p': partition } }),
  );
  return out.Items ?? [];
}

const due = '2031-01-01T00:00:00.000Z';
const payment = (id: string, extra: Item = {}): Item => ({
  pk: `PAYMENT#${id}`,
  sk: 'PAYMENT',
  kind: 'payment',
  status: 'pending',
  gsi1pk: `ORDER#shop#${id}`,
  gsi1sk: 'PAYMENT',
  searchPk: 'shop#2031-01-01#0',
  searchSk: `${due}#${id}`,
  ...extra,
});
const inQueue = (id: string, at = due) => ({ workPk: 'reconcile#0', workSk: `${at}#${id}` });
const inOutbox = (id: string, shard = 0) => ({ sendPk: `OUTBOX#${shard}`, sendSk: `${due}#${id}` });
const merchant: Item = { pk: 'MERCHANT#shop', sk: 'PROFILE', kind: 'merchant', name: 'Shop', gsi1pk: 'MERCHANTS', gsi1sk: 'shop' };
const audit: Item = { pk: 'AUDIT#2031-01-01', sk: `${due}#1`, kind: 'audit', action: 'refund', gsi1pk: 'AUDITOF#PAYMENT#a', gsi1sk: `${due}#1` };

/** Items with entries in every index, written through the SDK like the handlers write them. */
async function seed(dataDir: string): Promise<void> {
  await withBackend(dataDir, async (_, db) => {
    for (const item of [
      payment('a', { ...inQueue('a'), ...inOutbox('a') }),
      payment('b', inQueue('b')),
      payment('c', inOutbox('c')),
      payment('d', inQueue('d')),
      payment('e', { ...inOutbox('e', 1), merchantKey: 'shop' }),
      payment('gone', inQueue('gone')),
      merchant,
      audit,
    ]) {
      await db.send(new PutCommand({ TableName: LOCAL_TABLE_NAME, Item: item }));
    }
    await db.send(new DeleteCommand({ TableName: LOCAL_TABLE_NAME, Key: { pk: 'PAYMENT#gone', sk: 'PAYMENT' } }));
    await expectIndexesToAgreeWithItems(db);
  });
}

it('leaves a consistent store untouched and reports nothing', async () => {
  const dataDir = newDataDir();
  await seed(dataDir);
  const storage = await openStorage(dataDir);
  const before = await storage.dump();
  await storage.close();

  await withBackend(dataDir, async (backend, db) => {
    expect(backend.indexRepair).toBeUndefined();
    expect((await query(db, 'work', 'reconcile#0')).map((i) => i.pk)).toEqual(['PAYMENT#a', 'PAYMENT#b', 'PAYMENT#d']);
    await expectIndexesToAgreeWithItems(db);
  });
  const after = await openStorage(dataDir);
  expect(await after.dump()).toEqual(before);
  await after.close();
});

it('rebuilds every index from the items after a crash left them out of step, once', async () => {
  const dataDir = newDataDir();
  await seed(dataDir);
  const storage = await openStorage(dataDir);
  // a: its queue and outbox entries were never written.
  await storage.deleteEntry('work', payment('a', { ...inQueue('a'), ...inOutbox('a') }));
  await storage.deleteEntry('sending', payment('a', { ...inQueue('a'), ...inOutbox('a') }));
  // b: moved to a later place in the queue; the old entry stayed, the new one is missing.
  await storage.writeItemOnly(payment('b', inQueue('b', '2031-01-02T00:00:00.000Z')));
  // c: its callback went out and it left the outbox; the outbox entry stayed.
  await storage.writeItemOnly(payment('c'));
  // The merchant was renamed; its lookup entry still has the old sort key.
  await storage.writeItemOnly({ ...merchant, name: 'Renamed shop', gsi1sk: 'renamed shop' });
  // The audit entry's lookup entry was never written.
  await storage.deleteEntry('lookup', audit);
  // A deleted payment's work entry stayed.
  await storage.putEntry('work', payment('gone', inQueue('gone')));
  // d's status changed with nothing else: its search entry holds keys only, so it is still right.
  await storage.writeItemOnly(payment('d', { ...inQueue('d'), status: 'settled' }));
  // e's outbox entry carries another merchant than the item (the one index that projects an attribute).
  await storage.putEntry('sending', payment('e', { ...inOutbox('e', 1), merchantKey: 'other-shop' }));
  await storage.close();

  await withBackend(dataDir, async (backend, db) => {
    // The merchant's entry moved (+1 −1); e's outbox entry carried the old merchant (~1).
    expect(backend.indexRepair).toBe('index repair: lookup +2 −1, work +2 −2, sending +1 −1 ~1');
    await expectIndexesToAgreeWithItems(db);
    expect((await query(db, 'work', 'reconcile#0')).map((i) => [i.pk, i.workSk])).toEqual([
      ['PAYMENT#a', `${due}#a`],
      ['PAYMENT#d', `${due}#d`],
      ['PAYMENT#b', '2031-01-02T00:00:00.000Z#b'],
    ]);
    expect((await query(db, 'sending', 'OUTBOX#0')).map((i) => i.pk)).toEqual(['PAYMENT#a']);
    expect(await query(db, 'lookup', 'MERCHANTS')).toEqual([{ pk: merchant.pk, sk: merchant.sk, gsi1pk: 'MERCHANTS', gsi1sk: 'renamed shop' }]);
    expect(await query(db, 'lookup', 'AUDITOF#PAYMENT#a')).toEqual([{ pk: audit.pk, sk: audit.sk, gsi1pk: audit.gsi1pk, gsi1sk: audit.gsi1sk }]);
    expect((await query(db, SEARCH_INDEX, 'shop#2031-01-01#0')).find((i) => i.pk === 'PAYMENT#d')).toEqual({ pk: 'PAYMENT#d', sk: 'PAYMENT', searchPk: 'shop#2031-01-01#0', searchSk: `${due}#d` });
    expect((await query(db, 'sending', 'OUTBOX#1')).map((i) => [i.pk, i.merchantKey])).toEqual([['PAYMENT#e', 'shop']]);
  });
  // Repaired for good: the next start finds nothing to do.
  await withBackend(dataDir, async (backend) => expect(backend.indexRepair).toBeUndefined());
});

describe('the local runner killed with SIGKILL', () => {
  const dataDir = newDataDir();
  const queued = (id: string) => ({ ...payment(id), kind: 'test-item', workPk: 'test-queue', workSk: `${due}#${id}`, sendPk: 'TEST-OUTBOX', sendSk: `${due}#${id}` });

  async function startRunner() {
    runner = startTs('local/main.ts', { DATA_DIR: dataDir, PORT: String(await freePort()) });
    await runner.waitForLine(/Checkout is running/, 60_000);
    const { dynamodbEndpoint } = JSON.parse(readFileSync(join(dataDir, 'backend.json'), 'utf8')) as { dynamodbEndpoint: string };
    const service = runner;
    return { output: () => service.output(), db: createDocumentClient({ endpoint: dynamodbEndpoint }) };
  }

  it('restarts with its indexes repaired and says so, then finds nothing to repair', async () => {
    const first = await startRunner();
    for (const id of ['a', 'b', 'c']) await first.db.send(new PutCommand({ TableName: LOCAL_TABLE_NAME, Item: queued(id) }));
    first.db.destroy();
    await runner?.stop('SIGKILL');

    const storage = await openStorage(dataDir);
    await storage.deleteEntry('work', queued('b'));
    await storage.deleteEntry('sending', queued('b'));
    await storage.putEntry('work', queued('z'));
    await storage.close();

    const second = await startRunner();
    expect(second.output()).toMatch(/^index repair: work \+1 −1, sending \+1 \(/m);
    expect((await query(second.db, 'work', 'test-queue')).map((i) => i.pk)).toEqual(['PAYMENT#a', 'PAYMENT#b', 'PAYMENT#c']);
    expect((await query(second.db, 'sending', 'TEST-OUTBOX')).map((i) => i.pk)).toEqual(['PAYMENT#a', 'PAYMENT#b', 'PAYMENT#c']);
    second.db.destroy();
    await runner?.stop('SIGINT');

    const third = await startRunner();
    expect(third.output()).not.toContain('index repair');
    third.db.destroy();
    await runner?.stop('SIGINT');
  });
});
