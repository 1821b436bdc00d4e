import type { Readable } from 'node:stream';

/**
 * dynalite writes an item and its index entries as separate LevelDB writes, so a local runner killed
 * with SIGKILL can leave a secondary index out of step with the items: a payment missing from the
 * sparse `queue` index is never reconciled, one missing from `outbox` never has its callback sent.
 * Before the engine takes requests, every index is rebuilt from the items: missing entries are
 * added, stale ones removed, changed ones rewritten. One index at a time, so memory stays bounded by
 * the largest index.
 */
// dynalite's storage layer: the same functions it uses to write index entries.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynaliteDb = require('dynalite/db') as DynaliteDbModule;

interface Level {
  get(key: string, cb: (err: Error | null, value?: unknown) => void): void;
  put(key: string, value: unknown, cb: (err?: Error | null) => void): void;
  del(key: string, cb: (err?: Error | null) => void): void;
  createKeyStream(): Readable;
  createValueStream(options?: object): Readable;
}
interface Table {
  readonly TableName: string;
  readonly GlobalSecondaryIndexes?: readonly { readonly IndexName: string }[];
  readonly LocalSecondaryIndexes?: readonly { readonly IndexName: string }[];
}
interface Store {
  readonly db: { close(cb: (err?: Error) => void): void; open(): Promise<void> };
  getTable(name: string, checkStatus: boolean, cb: (err: Error | null, table?: Table) => void): void;
  getItemDb(name: string): Level;
  getIndexDb(type: 'Global' | 'Local', table: string, index: string): Level;
}
interface DynaliteDbModule {
  create(options: { path: string }): Store;
  getIndexActions(indexes: readonly object[], existing: unknown, item: unknown, table: Table): { puts: { key: string; item: unknown }[]; deletes: { key: string }[] };
}

export interface IndexRepair {
  readonly index: string;
  readonly added: number;
  readonly removed: number;
  readonly rewritten: number;
}

const call = <T>(fn: (cb: (err?: Error | null, value?: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T))));

async function* stream<T>(s: Readable): AsyncGenerator<T> {
  for await (const chunk of s) yield chunk as T;
}

/** Repairs every secondary index of `tableName` in the LevelDB at `path` (closed again afterwards). */
export async function repairIndexes(path: string, tableName: string): Promise<IndexRepair[]> {
  const store = dynaliteDb.create({ path });
  try {
    // Opened explicitly so a failure (the directory still locked by a process that is ending) is an
    // error, not a callback that never comes; a lock being released is waited for briefly.
    for (let tries = 1; ; tries++) {
      try {
        await store.db.open();
        break;
      } catch (e) {
        if (tries >= 50 || !/lock/i.test(`${(e as Error).message} ${String((e as { cause?: Error }).cause?.message)}`)) throw e;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    let table: Table;
    try {
      table = await call<Table>((cb) => store.getTable(tableName, false, (err, t) => cb(err, t)));
    } catch {
      return []; // No table yet: nothing to repair.
    }
    const items = store.getItemDb(tableName);
    const repairs: IndexRepair[] = [];
    for (const type of ['Global', 'Local'] as const) {
      for (const index of table[`${type}SecondaryIndexes`] ?? []) {
        const expected = new Map<string, string>();
        for await (const item of stream<object>(items.createValueStream())) {
          for (const put of dynaliteDb.getIndexActions([index], null, item, table).puts) expected.set(put.key, JSON.stringify(put.item));
        }
        const indexDb = store.getIndexDb(type, tableName, index.IndexName);
        let removed = 0;
        let rewritten = 0;
        const present = new Set<string>();
        for await (const key of stream<string>(indexDb.createKeyStream())) {
          const want = expected.get(key);
          if (want === undefined) {
            await call((cb) => indexDb.del(key, cb));
            removed++;
            continue;
          }
          present.add(key);
          const have = await call<unknown>((cb) => indexDb.get(key, (err, v) => cb(err, v)));
          if (JSON.stringify(have) !== want) {
            await call((cb) => indexDb.put(key, JSON.parse(want), cb));
            rewritten++;
          }
        }
        let added = 0;
        for (const [key, value] of expected) {
          if (present.has(key)) continue;
          await call((cb) => indexDb.put(key, JSON.parse(value), cb));
          added++;
        }
        repairs.push({ index: index.IndexName, added, removed, rewritten });
      }
    }
    return repairs;
  } finally {
    await call((cb) => store.db.close((err) => cb(err)));
  }
}

/** One line for the runner's output, or undefined when every index was in step. */
export function describeRepairs(repairs: readonly IndexRepair[]): string | undefined {
  const changed = repairs.filter((r) => r.added || r.removed || r.rewritten);
  if (!changed.length) return undefined;
  return `index repair: ${changed.map((r) => `${r.index} +${r.added} −${r.removed}${r.rewritten ? ` ~${r.rewritten}` : ''}`).join(', ')}`;
}
