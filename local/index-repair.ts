import { hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { callback, openStorage } from './dynalite-storage';

/**
 * Why this exists: dynalite stores an item and each of its secondary-index entries as separate
 * LevelDB records, written one after the other. A local runner killed mid-write (SIGKILL, power
 * loss) can leave an index out of step with the items: a payment missing from the sparse `queue`
 * index is never reconciled, one missing from `outbox` never has its callback sent, and a stale
 * entry points at work that is no longer due. So before the engine takes any request, every
 * secondary index is made to match the items again, with dynalite's own storage functions (the ones
 * its writes use), never touching an item.
 *
 * Streaming throughout, so memory stays bounded whatever the table's size:
 * 1. check: one pass over the items fingerprints, per index, the entries dynalite would write for
 *    them; one pass over each index fingerprints what it holds. The fingerprints are kept per
 *    bucket of item keys (4096 buckets), so a mismatch points at the few items involved. When all
 *    match (the usual case) a start costs one sequential read and no write.
 * 2. repair, only in the buckets that differ: each entry there is checked against the item it
 *    comes from (deleted when that item is gone or no longer belongs at that key, rewritten when
 *    its projection differs), then each item there against the index (a missing entry is added).
 */

// dynalite's storage layer (untyped): the same functions its PutItem/UpdateItem/DeleteItem use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as DynaliteDb;

type Item = Record<string, Record<string, unknown>>;
interface KeySchema {
  readonly AttributeName: string;
  readonly KeyType: string;
}
interface IndexDescription {
  readonly IndexName: string;
  readonly KeySchema: readonly KeySchema[];
}
interface TableDescription {
  readonly TableName: string;
  readonly KeySchema: readonly KeySchema[];
  readonly GlobalSecondaryIndexes?: readonly IndexDescription[];
  readonly LocalSecondaryIndexes?: readonly IndexDescription[];
}
/** One of dynalite's key-prefixed views of its LevelDB (the items of a table, or one index). */
interface SubDb {
  get(key: string, cb: (err: Error | null, value?: Item) => void): void;
  put(key: string, value: Item, cb: (err: Error | null) => void): void;
  del(key: string, cb: (err: Error | null) => void): void;
  createValueStream(): Readable;
}
interface Store {
  readonly db: { open(): Promise<void>; close(cb: (err: Error | null) => void): void };
  getTable(name: string, checkStatus: boolean, cb: (err: (Error & { body?: unknown }) | null, table?: TableDescription) => void): void;
  getItemDb(tableName: string): SubDb;
  getIndexDb(type: IndexType, tableName: string, indexName: string): SubDb;
}
interface DynaliteDb {
  create(options: { path: string }): Store;
  /** The record key of an item in its table. */
  createKey(item: Item, table: TableDescription): string;
  /** The record key of an item's entry in an index. */
  createIndexKey(item: Item, table: TableDescription, keySchema: readonly KeySchema[]): string;
  /** The entries an item should have (puts) given what it was before (null: nothing). */
  getIndexActions(
    indexes: readonly IndexDescription[],
    existing: Item | null,
    item: Item,
    table: TableDescription,
  ): { puts: { index: string; key: string; item: Item }[]; deletes: { index: string; key: string }[] };
}

type IndexType = 'Global' | 'Local';

export interface IndexRepair {
  readonly index: string;
  /** Entries an item should have had and did not. */
  readonly added: number;
  /** Entries of items that are gone, or that no longer belong at that key. */
  readonly removed: number;
  /** Entries at the right key whose projected attributes were out of date. */
  readonly rewritten: number;
}


const read = (db: SubDb, key: string) => callback<Item | undefined>((cb) => db.get(key, cb));

/** The records of a stream that pass `keep`, in groups, so lookups run side by side while memory stays bounded. */
async function* batches<T>(stream: Readable, keep: (record: T) => boolean, size = 256): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const record of stream as AsyncIterable<T>) {
    if (!keep(record)) continue;
    batch.push(record);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/**
 * Makes every secondary index of `tableName` in the dynalite data at `path` match the items. The
 * engine must not be running on that path (LevelDB allows one process); the store is closed again
 * before this returns. A missing table is nothing to repair.
 */
export async function repairIndexes(path: string, tableName: string): Promise<IndexRepair[]> {
  const store = await openStorage(dynaliteDb.create({ path }));
  try {
    const table = await tableOf(store, tableName);
    if (!table) return [];
    const items = store.getItemDb(tableName);
    const all = [
      ...(table.GlobalSecondaryIndexes ?? []).map((index) => ({ type: 'Global' as const, index })),
      ...(table.LocalSecondaryIndexes ?? []).map((index) => ({ type: 'Local' as const, index })),
    ].map(({ type, index }) => ({ index, db: store.getIndexDb(type, tableName, index.IndexName), added: 0, removed: 0, rewritten: 0 }));

    const suspects = await mismatchedBuckets(all, items, table);
    for (const [ix, buckets] of suspects) {
      // Each entry there against its item. LevelDB iterators read a snapshot, so fixing as we go is safe.
      for await (const entries of batches<Item>(ix.db.createValueStream(), (entry) => buckets.has(bucketOf(entry, table)))) {
        const sources = await Promise.all(entries.map((entry) => read(items, dynaliteDb.createKey(entry, table))));
        await Promise.all(
          entries.map((entry, i) => {
            // The key dynalite stored the entry under: it derives it from the entry's own attributes.
            const key = dynaliteDb.createIndexKey(entry, table, ix.index.KeySchema);
            const item = sources[i];
            const wanted = item && dynaliteDb.getIndexActions([ix.index], null, item, table).puts[0];
            if (!wanted || wanted.key !== key) {
              ix.removed++;
              return callback((cb) => ix.db.del(key, cb));
            }
            if (JSON.stringify(wanted.item) === JSON.stringify(entry)) return undefined;
            ix.rewritten++;
            return callback((cb) => ix.db.put(key, wanted.item, cb));
          }),
        );
      }
    }
    if (suspects.size) {
      // Each item there against the index: every entry present is right by now, so only add.
      const affected = (item: Item) => {
        const bucket = bucketOf(item, table);
        return [...suspects].filter(([, buckets]) => buckets.has(bucket)).map(([ix]) => ix);
      };
      for await (const batch of batches<Item>(items.createValueStream(), (item) => affected(item).length > 0)) {
        const wanted = batch.flatMap((item) => affected(item).flatMap((ix) => dynaliteDb.getIndexActions([ix.index], null, item, table).puts.map((put) => ({ ix, put }))));
        const present = await Promise.all(wanted.map(({ ix, put }) => read(ix.db, put.key)));
        await Promise.all(
          wanted.map(({ ix, put }, i) => {
            if (present[i] !== undefined) return undefined;
            ix.added++;
            return callback((cb) => ix.db.put(put.key, put.item, cb));
          }),
        );
      }
    }
    return all.map(({ index, added, removed, rewritten }) => ({ index: index.IndexName, added, removed, rewritten }));
  } finally {
    await callback((cb) => store.db.close(cb));
  }
}

interface IndexState {
  readonly index: IndexDescription;
  readonly db: SubDb;
}

const digestOf = (entry: Item): Buffer => hash('sha1', JSON.stringify(entry), 'buffer');
const DIGEST = 20;
const BUCKETS = 4096;

/** Which bucket an item, or an index entry of it, falls in: a hash (FNV-1a) of the item's key. */
function bucketOf(record: Item, table: TableDescription): number {
  const key = JSON.stringify(table.KeySchema.map((k) => record[k.AttributeName]));
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) % BUCKETS;
}

/**
 * An order-independent fingerprint of a set of index entries, per bucket: the XOR of their digests,
 * and their count. An entry's key is derived from its attributes, so its JSON stands for both.
 */
class Fingerprints {
  private readonly sums = new Uint8Array(BUCKETS * DIGEST);
  private readonly counts = new Uint32Array(BUCKETS);
  add(bucket: number, digest: Buffer): void {
    for (let i = 0, at = bucket * DIGEST; i < DIGEST; i++) this.sums[at + i]! ^= digest[i]!;
    this.counts[bucket]!++;
  }
  /** The buckets where the two differ. */
  differences(other: Fingerprints): Set<number> {
    const differ = new Set<number>();
    for (let b = 0; b < BUCKETS; b++) {
      if (this.counts[b] !== other.counts[b]) differ.add(b);
      else for (let i = b * DIGEST; i < (b + 1) * DIGEST; i++) if (this.sums[i] !== other.sums[i]) differ.add(b);
    }
    return differ;
  }
}

/**
 * Per index whose entries differ from those the items call for, the buckets where they differ (one
 * read of the items and one of each index).
 */
async function mismatchedBuckets<T extends IndexState>(indexes: readonly T[], items: SubDb, table: TableDescription): Promise<Map<T, Set<number>>> {
  const wanted = indexes.map(() => new Fingerprints());
  for await (const item of items.createValueStream() as AsyncIterable<Item>) {
    const bucket = bucketOf(item, table);
    let whole: Buffer | undefined; // An index projecting all attributes holds the item itself: one digest serves them all.
    indexes.forEach((ix, i) => {
      for (const put of dynaliteDb.getIndexActions([ix.index], null, item, table).puts) wanted[i]!.add(bucket, put.item === item ? (whole ??= digestOf(item)) : digestOf(put.item));
    });
  }
  const mismatched = new Map<T, Set<number>>();
  for (const [i, ix] of indexes.entries()) {
    const held = new Fingerprints();
    for await (const entry of ix.db.createValueStream() as AsyncIterable<Item>) held.add(bucketOf(entry, table), digestOf(entry));
    const buckets = held.differences(wanted[i]!);
    if (buckets.size) mismatched.set(ix, buckets);
  }
  return mismatched;
}

async function tableOf(store: Store, tableName: string): Promise<TableDescription | undefined> {
  try {
    return await callback<TableDescription>((cb) => store.getTable(tableName, false, cb));
  } catch (e) {
    if ((e as Error).name === 'NotFoundError') return undefined;
    throw e;
  }
}

/** One line for the log (`index repair: queue +2 −1, outbox +1`), or undefined when every index matched. */
export function describeRepairs(repairs: readonly IndexRepair[]): string | undefined {
  const changed = repairs.flatMap((r) => {
    const counts = [r.added && `+${r.added}`, r.removed && `−${r.removed}`, r.rewritten && `~${r.rewritten}`].filter(Boolean);
    return counts.length ? [`${r.index} ${counts.join(' ')}`] : [];
  });
  return changed.length ? `index repair: ${changed.join(', ')}` : undefined;
}
