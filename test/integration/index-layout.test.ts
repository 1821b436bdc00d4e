import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { LOCAL_SHARDS, SEARCH_INDEX, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import { DynamoPaymentStore } from '../../lambdas/adapters/dynamodb/payment-store';
import { readConfig } from '../../lambdas/config';
import type { Payment } from '../../lambdas/domain/payment';
import { ManualClock } from '../../lambdas/ports/clock';
import { countPayments, searchPayments } from '../../lambdas/use-cases/admin/search';
import { createMerchant } from '../../lambdas/use-cases/manage-merchants';
import { LEGACY_INDEXES, createTableInput } from '../../lib/table-schema';
import { LOCAL_TABLE_NAME, backendEnvironment, localDeps, startLocalBackend } from '../../local/backend';
import { aPayment } from '../contract/payment-store.contract';
import { until } from '../support/until';

/**
 * A data directory made before the search index held keys only has `search`, projecting the
 * status, where this version reads `searchKeys`. The local engine (dynalite) ignores an UpdateTable
 * that creates or deletes an index, so the runner gives the table this version's indexes in the
 * engine's storage before it starts (local/index-layout.ts): the payments already there are found
 * by the admin search afterwards, by day and by status, and the next start has nothing to do.
 */
jest.setTimeout(60_000);

// dynalite ships without types; its factory returns an http.Server whose close() also closes LevelDB.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: Record<string, unknown>) => Server;
// Its storage layer, to read what the data directory holds.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as { create(o: { path: string }): { db: { close(cb: (e: Error | null) => void): void; iterator(): AsyncIterable<[string, unknown]> } } };

const DAY = '2030-11-05';
const MERCHANT = 'old-layout-shop';
const dataDirs: string[] = [];
afterAll(() => {
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});

/** The table as the version before this one created it: `search` with the status, no `searchKeys`. */
function oldTableInput() {
  const current = createTableInput(LOCAL_TABLE_NAME);
  const old = LEGACY_INDEXES.find((g) => g.indexName === 'search')!;
  return {
    ...current,
    GlobalSecondaryIndexes: current.GlobalSecondaryIndexes.map((g) =>
      g.IndexName === SEARCH_INDEX ? { ...g, IndexName: old.indexName, Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...old.projection] } } : g,
    ),
  };
}

/** A data directory of the old layout with `payments` in it, written by the payment store as that version wrote them. */
async function oldDataDir(payments: readonly Payment[]): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'checkout-layout-'));
  dataDirs.push(dataDir);
  const server = dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  const endpoint = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const db = createDocumentClient({ endpoint });
  try {
    await client.send(new CreateTableCommand(oldTableInput()));
    await until(async () => (await client.send(new DescribeTableCommand({ TableName: LOCAL_TABLE_NAME }))).Table?.TableStatus === 'ACTIVE', { everyMs: 10 });
    const store = new DynamoPaymentStore(db, LOCAL_TABLE_NAME, { shards: LOCAL_SHARDS });
    for (const p of payments) await store.createPayment(p);
  } finally {
    client.destroy();
    db.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return dataDir;
}

/** The record keys the engine's storage holds for an index of the table. */
async function storedEntries(dataDir: string, index: string): Promise<number> {
  const store = dynaliteDb.create({ path: join(dataDir, 'dynamodb') });
  let n = 0;
  try {
    for await (const [k] of store.db.iterator()) if (k.startsWith(`index-global~${LOCAL_TABLE_NAME}~${index}~`)) n++;
  } finally {
    await new Promise<void>((resolve, reject) => store.db.close((e) => (e ? reject(e) : resolve())));
  }
  return n;
}

it('a data directory with the status-projecting search index starts with searchKeys in its place, and finds its payments', async () => {
  const payments = Array.from({ length: 12 }, (_, i) =>
    aPayment({ merchantKey: MERCHANT, createdAt: new Date(Date.parse(`${DAY}T10:00:00.000Z`) + i * 60_000).toISOString(), status: i % 3 ? 'settled' : 'void' }),
  );
  expect(new Set(payments.map((p) => shardOf(p.paymentId, LOCAL_SHARDS.search))).size).toBe(LOCAL_SHARDS.search);
  const dataDir = await oldDataDir(payments);
  expect(await storedEntries(dataDir, 'search')).toBe(payments.length);

  let backend = await startLocalBackend({ dataDir });
  try {
    expect(backend.indexLayout).toBe(`index layout: ${SEARCH_INDEX} added (${payments.length} entries), search dropped`);
    // Nothing to repair: the added index is whole.
    expect(backend.indexRepair).toBeUndefined();
    const client = new DynamoDBClient({ endpoint: backend.dynamodbEndpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const described = (await client.send(new DescribeTableCommand({ TableName: LOCAL_TABLE_NAME }))).Table!;
    client.destroy();
    const shape = (indexes: readonly { IndexName?: string; KeySchema?: unknown; Projection?: unknown }[]) =>
      indexes.map(({ IndexName, KeySchema, Projection }) => ({ IndexName, KeySchema, Projection })).sort((a, b) => String(a.IndexName).localeCompare(String(b.IndexName)));
    expect(shape(described.GlobalSecondaryIndexes ?? [])).toEqual(shape(createTableInput(LOCAL_TABLE_NAME).GlobalSecondaryIndexes));

    // The admin search, as the portal's functions run it on this backend.
    const clock = new ManualClock(new Date(`${DAY}T20:00:00.000Z`));
    const deps = localDeps(backend, readConfig(backendEnvironment(backend)), clock);
    try {
      await createMerchant(deps, { name: 'Old Layout Shop', merchantKey: MERCHANT });
      const newestFirst = payments.map((p) => p.paymentId).reverse();
      const found = await searchPayments(deps, { merchant: MERCHANT, from: DAY, to: DAY });
      expect(found.found.map((f) => f.payment.paymentId)).toEqual(newestFirst);
      const voided = await searchPayments(deps, { merchant: MERCHANT, from: DAY, to: DAY, status: 'void' });
      expect(voided.found.map((f) => f.payment.paymentId)).toEqual(newestFirst.filter((id) => payments.find((p) => p.paymentId === id)!.status === 'void'));
      expect(await countPayments(deps, { merchant: MERCHANT, from: DAY, to: DAY })).toEqual({ total: 12, complete: true });
      expect(await countPayments(deps, { merchant: MERCHANT, from: DAY, to: DAY, status: 'void' })).toEqual({ total: 4, complete: true });
    } finally {
      deps.db.destroy();
      deps.secretsClient.destroy();
    }
  } finally {
    await backend.close();
  }
  // The old index's entries are gone from the storage, not only from the table's description.
  expect(await storedEntries(dataDir, 'search')).toBe(0);
  expect(await storedEntries(dataDir, SEARCH_INDEX)).toBe(payments.length);

  backend = await startLocalBackend({ dataDir });
  expect([backend.indexLayout, backend.indexRepair]).toEqual([undefined, undefined]);
  await backend.close();
});

it('a data directory of this version starts with nothing to change', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'checkout-layout-'));
  dataDirs.push(dataDir);
  for (let start = 0; start < 2; start++) {
    const backend = await startLocalBackend({ dataDir });
    expect(backend.indexLayout).toBeUndefined();
    await backend.close();
  }
});
