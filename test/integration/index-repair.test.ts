import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { LOCAL_TABLE_NAME } from '../../local/backend';
import { freePort, startTs, type Service } from '../support/processes';

/**
 * After a SIGKILL, dynalite's index entries can be out of step with the items (they are separate
 * writes). The local runner rebuilds every index from the items when it starts on a data directory.
 * Here the runner is killed, and its index is damaged at the storage level as a crash leaves it.
 */
jest.setTimeout(90_000);

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as {
  create(o: { path: string }): {
    db: { close(cb: (e?: Error) => void): void };
    getTable(n: string, c: boolean, cb: (e: Error | null, t?: object) => void): void;
    getIndexDb(type: string, table: string, index: string): { put(k: string, v: unknown, cb: (e?: Error) => void): void; del(k: string, cb: (e?: Error) => void): void };
  };
  getIndexActions(indexes: object[], existing: unknown, item: unknown, table: object): { puts: { key: string; item: unknown }[] };
};

const dataDir = mkdtempSync(join(tmpdir(), 'checkout-index-'));
let runner: Service | undefined;
afterAll(() => {
  runner?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const queued = (id: string) => ({ pk: `PAYMENT#${id}`, sk: 'PAYMENT', kind: 'test-item', queuePk: 'test-queue', queueSk: `2031-01-01T00:00:00.000Z#${id}`, outboxPk: 'TEST-OUTBOX', outboxSk: `2031-01-01T00:00:00.000Z#${id}` });

async function startRunner(): Promise<{ output: () => string; db: ReturnType<typeof createDocumentClient> }> {
  runner = startTs('local/main.ts', { DATA_DIR: dataDir, PORT: String(await freePort()) });
  await runner.waitForLine(/Checkout is running/, 60_000);
  const { dynamodbEndpoint } = JSON.parse(readFileSync(join(dataDir, 'backend.json'), 'utf8')) as { dynamodbEndpoint: string };
  const service = runner;
  return { output: () => service.output(), db: createDocumentClient({ endpoint: dynamodbEndpoint }) };
}

async function indexed(db: ReturnType<typeof createDocumentClient>, index: 'queue' | 'outbox'): Promise<string[]> {
  const [attr, pk] = index === 'queue' ? ['queuePk', 'test-queue'] : ['outboxPk', 'TEST-OUTBOX'];
  const out = await db.send(new QueryCommand({ TableName: LOCAL_TABLE_NAME, IndexName: index, KeyConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': attr }, ExpressionAttributeValues: { ':p': pk } }));
  return (out.Items ?? []).map((i) => String(i.pk)).sort();
}

/** What a SIGKILL between an item write and its index writes leaves: an item missing from both sparse indexes, a queue entry of an item gone from the queue. */
async function damageIndexes(): Promise<void> {
  const store = dynaliteDb.create({ path: join(dataDir, 'dynamodb') });
  const step = (fn: (cb: (e?: Error) => void) => void) => new Promise<void>((resolve, reject) => fn((e) => (e ? reject(e) : resolve())));
  try {
    const table = await new Promise<object>((resolve, reject) => store.getTable(LOCAL_TABLE_NAME, false, (e, t) => (e ? reject(e) : resolve(t as object))));
    const indexes = (table as { GlobalSecondaryIndexes: { IndexName: string }[] }).GlobalSecondaryIndexes;
    // Items are stored as DynamoDB attribute values.
    const entry = (index: string, item: Record<string, unknown>) => dynaliteDb.getIndexActions(indexes.filter((i) => i.IndexName === index), null, marshall(item), table).puts[0]!;
    const queueDb = store.getIndexDb('Global', LOCAL_TABLE_NAME, 'queue');
    const outboxDb = store.getIndexDb('Global', LOCAL_TABLE_NAME, 'outbox');
    await step((cb) => queueDb.del(entry('queue', queued('b')).key, cb));
    await step((cb) => outboxDb.del(entry('outbox', queued('b')).key, cb));
    const gone = entry('queue', queued('z'));
    await step((cb) => queueDb.put(gone.key, gone.item, cb));
  } finally {
    await step((cb) => store.db.close(cb));
  }
}

it('the runner killed with SIGKILL restarts with its sparse indexes rebuilt from the items, then finds nothing to repair', async () => {
  const first = await startRunner();
  for (const id of ['a', 'b', 'c']) await first.db.send(new PutCommand({ TableName: LOCAL_TABLE_NAME, Item: queued(id) }));
  first.db.destroy();
  await runner?.stop('SIGKILL');

  await damageIndexes();

  const second = await startRunner();
  expect(second.output()).toContain('index repair: queue +1 −1, outbox +1 (');
  expect(await indexed(second.db, 'queue')).toEqual(['PAYMENT#a', 'PAYMENT#b', 'PAYMENT#c']);
  expect(await indexed(second.db, 'outbox')).toEqual(['PAYMENT#a', 'PAYMENT#b', 'PAYMENT#c']);
  second.db.destroy();
  await runner?.stop('SIGINT');

  const third = await startRunner();
  expect(third.output()).not.toContain('index repair');
  third.db.destroy();
  await runner?.stop('SIGINT');
});
