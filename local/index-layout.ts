import type { Readable } from 'node:stream';
import { createTableInput } from '../lib/table-schema';
import { callback, openStorage } from './dynalite-storage';

/**
 * Why this exists: dynalite accepts UpdateTable's GlobalSecondaryIndexUpdates and does nothing with
 * them (it only changes throughput), so no index of a table in a data directory can be added or
 * dropped through the API. A data directory made by an older version has the indexes of its day:
 * `search` projecting the status where this version has the keys-only `searchKeys` (ADR 0043). So
 * before the engine starts, the table's indexes are made the ones createTableInput describes, in
 * dynalite's own storage (the engine must not be running on it): an index no longer wanted, or
 * whose keys or projection differ, is dropped (its entries, then its description); a missing one
 * is described, then filled from the items with dynalite's own function for an item's entries,
 * as a cloud table backfills an index it adds. No item changes.
 *
 * Cut off part way, the next start finishes the work: an index still described is dropped again,
 * and the entries an added index lacks are what the index repair adds (index-repair.ts, which runs
 * after this).
 */

// dynalite's storage layer (untyped): the functions its CreateTable and writes use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as DynaliteDb;

type Item = Record<string, Record<string, unknown>>;
interface KeySchema {
  readonly AttributeName: string;
  readonly KeyType: string;
}
interface Projection {
  readonly ProjectionType?: string;
  readonly NonKeyAttributes?: readonly string[];
}
interface IndexDescription {
  readonly IndexName: string;
  readonly KeySchema: readonly KeySchema[];
  readonly Projection: Projection;
  readonly [other: string]: unknown;
}
interface TableDescription {
  readonly TableName: string;
  readonly KeySchema: readonly KeySchema[];
  readonly AttributeDefinitions: readonly { readonly AttributeName: string; readonly AttributeType: string }[];
  readonly GlobalSecondaryIndexes?: readonly IndexDescription[];
  readonly TableArn?: string;
  readonly [other: string]: unknown;
}
interface SubDb {
  put(key: string, value: unknown, cb: (err: Error | null) => void): void;
  createValueStream(): Readable;
}
interface Store {
  readonly db: { open(): Promise<void>; close(cb: (err: Error | null) => void): void };
  readonly tableDb: SubDb;
  getTable(name: string, checkStatus: boolean, cb: (err: Error | null, table?: TableDescription) => void): void;
  getItemDb(tableName: string): SubDb;
  getIndexDb(type: 'Global', tableName: string, indexName: string): SubDb;
  deleteIndexDb(type: 'Global', tableName: string, indexName: string, cb: (err: Error | null) => void): void;
}
interface DynaliteDb {
  create(options: { path: string }): Store;
  getIndexActions(indexes: readonly IndexDescription[], existing: Item | null, item: Item, table: TableDescription): { puts: { key: string; item: Item }[] };
}

export interface IndexLayoutChange {
  /** Indexes added, with the entries written for the items already in the table. */
  readonly added: readonly { readonly index: string; readonly entries: number }[];
  readonly dropped: readonly string[];
}


/** An index's keys and projection as compared: the same when its entries would be the same. */
const shapeOf = (index: { readonly KeySchema: readonly KeySchema[]; readonly Projection: Projection }): string =>
  JSON.stringify([
    index.KeySchema.map((k) => [k.AttributeName, k.KeyType]),
    index.Projection.ProjectionType ?? 'ALL',
    [...(index.Projection.NonKeyAttributes ?? [])].sort(),
  ]);

/**
 * Makes the global secondary indexes of `tableName` in the dynalite data at `path` the ones this
 * version's table has. The engine must not be running on that path (LevelDB allows one process);
 * the store is closed again before this returns. A missing table is created by the engine later,
 * with every index.
 */
export async function alignIndexLayout(path: string, tableName: string): Promise<IndexLayoutChange> {
  const store = await openStorage(dynaliteDb.create({ path }));
  try {
    let table: TableDescription;
    try {
      table = await callback<TableDescription>((cb) => store.getTable(tableName, false, cb));
    } catch (e) {
      if ((e as Error).name === 'NotFoundError') return { added: [], dropped: [] };
      throw e;
    }
    const wanted = createTableInput(tableName);
    const have = table.GlobalSecondaryIndexes ?? [];
    const fits = (index: IndexDescription) => wanted.GlobalSecondaryIndexes.some((w) => w.IndexName === index.IndexName && shapeOf(w) === shapeOf(index));
    const dropped = have.filter((index) => !fits(index));
    const kept = have.filter(fits);
    const missing = wanted.GlobalSecondaryIndexes.filter((w) => !kept.some((k) => k.IndexName === w.IndexName));
    if (!dropped.length && !missing.length) return { added: [], dropped: [] };

    // Entries first, then the description: cut off between the two, the index is still described and dropped again.
    for (const index of dropped) await callback((cb) => store.deleteIndexDb('Global', tableName, index.IndexName, cb));
    const added: IndexDescription[] = missing.map((w) => ({
      IndexName: w.IndexName,
      KeySchema: w.KeySchema,
      Projection: w.Projection,
      // As dynalite describes an index it created (actions/createTable.js), already active.
      IndexArn: `${table.TableArn ?? ''}/index/${w.IndexName}`,
      IndexSizeBytes: 0,
      ItemCount: 0,
      IndexStatus: 'ACTIVE',
      ProvisionedThroughput: { ReadCapacityUnits: 0, WriteCapacityUnits: 0, NumberOfDecreasesToday: 0 },
    }));
    const definitions = new Map(table.AttributeDefinitions.map((d) => [d.AttributeName, d]));
    for (const d of wanted.AttributeDefinitions) if (!definitions.has(d.AttributeName)) definitions.set(d.AttributeName, d);
    const described: TableDescription = { ...table, AttributeDefinitions: [...definitions.values()], GlobalSecondaryIndexes: [...kept, ...added] };
    await callback((cb) => store.tableDb.put(tableName, described, cb));

    // Described first, then filled: cut off between the two, the index repair adds what is missing.
    const counts = new Map(added.map((index) => [index.IndexName, 0]));
    const items = store.getItemDb(tableName);
    let pending: Promise<void>[] = [];
    for await (const item of items.createValueStream() as AsyncIterable<Item>) {
      for (const index of added) {
        for (const put of dynaliteDb.getIndexActions([index], null, item, described).puts) {
          counts.set(index.IndexName, counts.get(index.IndexName)! + 1);
          pending.push(callback((cb) => store.getIndexDb('Global', tableName, index.IndexName).put(put.key, put.item, cb)));
        }
      }
      // A bounded number of writes in flight, whatever the table's size.
      if (pending.length >= 256) {
        await Promise.all(pending);
        pending = [];
      }
    }
    await Promise.all(pending);
    return { added: added.map((index) => ({ index: index.IndexName, entries: counts.get(index.IndexName)! })), dropped: dropped.map((index) => index.IndexName) };
  } finally {
    await callback((cb) => store.db.close(cb));
  }
}

/** One line for the log (`index layout: searchKeys added (12 entries), search dropped`), or undefined when nothing changed. */
export function describeLayoutChange(change: IndexLayoutChange): string | undefined {
  const parts = [
    ...change.added.map((a) => `${a.index} added (${a.entries} ${a.entries === 1 ? 'entry' : 'entries'})`),
    ...change.dropped.map((d) => `${d} dropped`),
  ];
  return parts.length ? `index layout: ${parts.join(', ')}` : undefined;
}
