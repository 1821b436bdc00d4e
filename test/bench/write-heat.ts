import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient, GetItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { SHARDED_PARTITIONS } from '../../lambdas/adapters/dynamodb/keys';
import { TABLE_SCHEMA } from '../../lib/table-schema';

/**
 * The table's write traffic as DynamoDB bills and throttles it, recorded from the real write path:
 * every write the service sends is bracketed by a consistent read of the item before and after it
 * (with a client of its own, so those reads are not recorded), and from the two images follow the
 * write units the table and each secondary index consume, on which partition key:
 * - the table: ⌈max(size before, size after) / 1 KB⌉ per write (a write whose condition fails
 *   still consumes the units of the item it read); a transaction's items twice that;
 * - an index: an entry appears (a put of the new entry), disappears (a delete of the old), changes
 *   key (a delete and a put) or keeps its key while a projected attribute changes (a put), each
 *   ⌈entry size / 1 KB⌉, the entry being the table's key, the index's key and the projected
 *   attributes plus 100 bytes (DynamoDB's per-entry overhead).
 * Writes are serialized while recording, so the images belong to the write between them.
 */

/** One write unit covers 1 KB. */
const WRITE_UNIT_BYTES = 1024;
/** DynamoDB's overhead per index entry. */
const INDEX_ENTRY_OVERHEAD = 100;

type Item = Record<string, AttributeValue>;

/** DynamoDB's size of an attribute value (docs: "Item sizes and formats"). */
export function valueSize(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return numberSize(v.N);
  if (v.B !== undefined) return v.B.byteLength;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS) return v.SS.reduce((n, s) => n + Buffer.byteLength(s), 0);
  if (v.NS) return v.NS.reduce((n, s) => n + numberSize(s), 0);
  if (v.BS) return v.BS.reduce((n, b) => n + b.byteLength, 0);
  if (v.L) return 3 + v.L.reduce((n, e) => n + 1 + valueSize(e), 0);
  if (v.M) return 3 + Object.entries(v.M).reduce((n, [k, e]) => n + 1 + Buffer.byteLength(k) + valueSize(e), 0);
  return 0;
}

/** Numbers take about one byte per two significant digits, plus one. */
function numberSize(n: string): number {
  const digits = n.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
}

export const itemSize = (item: Item): number => Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k) + valueSize(v), 0);
const units = (bytes: number): number => Math.max(1, Math.ceil(bytes / WRITE_UNIT_BYTES));

/** What the table and each index consumed for one write, by partition key. */
export interface UnitUse {
  /** "table" or an index name. */
  readonly target: string;
  readonly partition: string;
  readonly units: number;
}

interface IndexShape {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  /** Attributes an entry carries besides the keys (KEYS_ONLY: none; ALL: every attribute). */
  readonly projected: readonly string[] | 'ALL';
}

const INDEXES: readonly IndexShape[] = TABLE_SCHEMA.globalSecondaryIndexes.map((g) => ({
  name: g.indexName,
  partitionKey: g.partitionKey,
  sortKey: g.sortKey,
  projected: 'projection' in g ? (g.projection as readonly string[] | 'ALL') : 'ALL',
}));

function indexEntry(item: Item | undefined, index: IndexShape): Item | undefined {
  if (!item?.[index.partitionKey] || !item[index.sortKey]) return undefined;
  if (index.projected === 'ALL') return item;
  const keep = new Set([TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey, index.partitionKey, index.sortKey, ...index.projected]);
  return Object.fromEntries(Object.entries(item).filter(([k]) => keep.has(k)));
}

const same = (a: AttributeValue | undefined, b: AttributeValue | undefined) => JSON.stringify(a) === JSON.stringify(b);
const keyOf = (entry: Item, index: IndexShape) => `${entry[index.partitionKey]?.S}\u0000${entry[index.sortKey]?.S}`;

/** The write units one change of an item costs the table and every index. */
export function writeUnits(before: Item | undefined, after: Item | undefined, transactional: boolean): UnitUse[] {
  const uses: UnitUse[] = [];
  const image = after ?? before;
  if (!image) return uses;
  const tableUnits = units(Math.max(before ? itemSize(before) : 0, after ? itemSize(after) : 0)) * (transactional ? 2 : 1);
  uses.push({ target: 'table', partition: String(image[TABLE_SCHEMA.partitionKey]?.S), units: tableUnits });
  for (const index of INDEXES) {
    const old = indexEntry(before, index);
    const next = indexEntry(after, index);
    const entryUnits = (e: Item) => units(itemSize(e) + INDEX_ENTRY_OVERHEAD);
    const put = (e: Item) => uses.push({ target: index.name, partition: String(e[index.partitionKey]?.S), units: entryUnits(e) });
    if (old && next && keyOf(old, index) === keyOf(next, index)) {
      const changed = Object.keys({ ...old, ...next }).some((k) => !same(old[k], next[k]));
      if (changed) put(next);
    } else {
      if (old) put(old);
      if (next) put(next);
    }
  }
  return uses;
}

/** The sandbox acquirer keeps its own records in the table; a real acquirer would not write ours. */
const isAcquirerPartition = (pk: string) => pk.startsWith('SANDBOX#') || pk.startsWith('SANDBOX-CREDENTIAL#');

type Next = (args: unknown) => Promise<unknown>;
type AddMiddleware = (middleware: (next: Next, context: { commandName?: string }) => Next, options: { step: 'initialize'; name: string }) => void;
type Input = Record<string, unknown>;

/** A key attribute as the command carries it: plain (document client) or marshalled. */
const plain = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof (v as { S?: unknown })?.S === 'string' ? (v as { S: string }).S : undefined);

/** The items a write command addresses, and whether it is a transaction. */
function addressed(command: string, input: Input): { keys: { pk: string; sk: string }[]; transactional: boolean } {
  const keyFrom = (o: unknown) => {
    const r = o as Record<string, unknown> | undefined;
    const pk = plain(r?.[TABLE_SCHEMA.partitionKey]);
    const sk = plain(r?.[TABLE_SCHEMA.sortKey]);
    return pk !== undefined && sk !== undefined ? [{ pk, sk }] : [];
  };
  switch (command) {
    case 'PutItemCommand':
      return { keys: keyFrom(input.Item), transactional: false };
    case 'UpdateItemCommand':
    case 'DeleteItemCommand':
      return { keys: keyFrom(input.Key), transactional: false };
    case 'TransactWriteItemsCommand': {
      const items = (input.TransactItems ?? []) as Record<string, { Item?: unknown; Key?: unknown }>[];
      return { keys: items.flatMap((t) => (t.Put ? keyFrom(t.Put.Item) : t.Update ? keyFrom(t.Update.Key) : t.Delete ? keyFrom(t.Delete.Key) : [])), transactional: true };
    }
    case 'BatchWriteItemCommand': {
      const requests = Object.values((input.RequestItems ?? {}) as Record<string, { PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }[]>).flat();
      return { keys: requests.flatMap((r) => (r.PutRequest ? keyFrom(r.PutRequest.Item) : keyFrom(r.DeleteRequest?.Key))), transactional: false };
    }
    default:
      return { keys: [], transactional: false };
  }
}

/** A write as recorded: the units it cost, and the checkout it belonged to. */
export interface RecordedWrite {
  readonly command: string;
  readonly checkout: number | undefined;
  readonly uses: readonly UnitUse[];
  /** The items written, as `<kind>#… / <sort key kind>` with the larger of their sizes before and after. */
  readonly items: readonly { readonly item: string; readonly bytes: number }[];
}

/** An item's address with its ids left out: `PAYMENT# / CALLBACK#`. */
const itemKind = (k: { pk: string; sk: string }): string => `${k.pk.replace(/#.*/, '#')} / ${k.sk.replace(/#.*/, '#')}`;

/**
 * Records the write units of every write a DynamoDB client sends (the service's own: the sandbox
 * acquirer's records are left out). `during(n, fn)` tags the writes `fn` causes with checkout n.
 */
export class WriteRecorder {
  readonly writes: RecordedWrite[] = [];
  private readonly reader: DynamoDBClient;
  private readonly checkout = new AsyncLocalStorage<number>();
  private current: number | undefined;
  private lock: Promise<void> = Promise.resolve();

  constructor(
    client: { readonly middlewareStack: { add(...args: never[]): void } },
    endpoint: { readonly endpoint: string; readonly region: string; readonly tableName: string },
  ) {
    this.reader = new DynamoDBClient({ endpoint: endpoint.endpoint, region: endpoint.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const add = client.middlewareStack.add.bind(client.middlewareStack) as unknown as AddMiddleware;
    add(
      (next, context) => async (args) => {
        const command = context.commandName ?? '';
        const input = ((args as { input?: Input }).input ?? {}) as Input;
        const { keys, transactional } = addressed(command, input);
        const own = keys.filter((k) => !isAcquirerPartition(k.pk));
        if (!own.length) return next(args);
        return this.serialized(async () => {
          const before = await Promise.all(own.map((k) => this.read(endpoint.tableName, k)));
          let failed = false;
          try {
            return await next(args);
          } catch (e) {
            failed = true;
            throw e;
          } finally {
            const after = failed ? before : await Promise.all(own.map((k) => this.read(endpoint.tableName, k)));
            const uses = own.flatMap((k, i) =>
              // A refused write consumes the table's units for the item it looked at, and no index's.
              failed ? writeUnits(before[i], before[i] ?? marshall(k), transactional).filter((u) => u.target === 'table') : writeUnits(before[i], after[i], transactional),
            );
            const items = own.map((k, i) => ({ item: itemKind(k), bytes: Math.max(before[i] ? itemSize(before[i]!) : 0, after[i] ? itemSize(after[i]!) : 0) }));
            this.writes.push({ command, checkout: this.checkout.getStore() ?? this.current, uses, items });
          }
        });
      },
      { step: 'initialize', name: 'benchWriteRecorder' },
    );
  }

  /** Runs `fn` with its writes counted for checkout `n` (also writes of background work it starts meanwhile). */
  async during<T>(n: number, fn: () => Promise<T>): Promise<T> {
    this.current = n;
    try {
      return await this.checkout.run(n, fn);
    } finally {
      this.current = undefined;
    }
  }

  reset(): void {
    this.writes.splice(0);
  }

  close(): void {
    this.reader.destroy();
  }

  private async read(tableName: string, k: { pk: string; sk: string }): Promise<Item | undefined> {
    const out = await this.reader.send(new GetItemCommand({ TableName: tableName, Key: marshall(k), ConsistentRead: true }));
    return out.Item;
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/** A partition key with its shard number replaced by `*` when it belongs to a sharded family. */
export function partitionFamily(target: string, partition: string): { family: string; shards: number } {
  for (const s of SHARDED_PARTITIONS.filter((p) => p.index === target)) {
    const m = s.pattern.exec(partition);
    if (m) return { family: partition.slice(0, m.index) + partition.slice(m.index).replace(s.pattern, s.family), shards: s.shards };
  }
  return { family: partition, shards: 1 };
}

export interface HeatRow {
  readonly target: string;
  /** The hottest partition key, or its family with `*` for the shard. */
  readonly partition: string;
  readonly shards: number;
  /** Write units per checkout on that one partition (a family's spread evenly over its shards). */
  readonly unitsPerCheckout: number;
  /** Whether the partition is shared by checkouts (its heat grows with the rate) or is one payment's own. */
  readonly shared: boolean;
  /** A partition of one merchant (its key holds the merchant's): its checkouts are bounded by the merchant's request limit. */
  readonly perMerchant: boolean;
  /** The write units one checkout costs this table or index in all. */
  readonly targetUnitsPerCheckout: number;
}

export interface HeatModel {
  readonly checkouts: number;
  readonly rows: readonly HeatRow[];
  readonly unitsPerCheckout: number;
  /** Checkouts per second, all merchants together, before the hottest partition shared by merchants passes `limit` write units per second. */
  readonly maxRate: number;
  readonly limit: number;
  /** One merchant at its highest possible rate (`merchantMaxRate` checkouts a second): the write units a second on its hottest own partition. */
  readonly merchantPeakWcu: number;
  readonly merchantMaxRate: number;
  /** Write units per checkout by command, e.g. "UpdateItemCommand" → 6. */
  readonly byCommand: Readonly<Record<string, number>>;
}

export interface HeatOptions {
  /** DynamoDB's write throughput per partition. */
  readonly limit?: number;
  /** Whether a partition key belongs to one merchant (holds its key). */
  readonly isMerchantPartition?: (partition: string) => boolean;
  /** The most checkouts a second one merchant can make (every checkout is a merchant request; the request limit caps them). */
  readonly merchantMaxRate?: number;
}

/** Per table and index: the hottest partition a run of `checkouts` showed, scaled to a rate. */
export function heatModel(writes: readonly RecordedWrite[], checkouts: number, options: HeatOptions = {}): HeatModel {
  const limit = options.limit ?? 1000;
  const merchantMaxRate = options.merchantMaxRate ?? Number.POSITIVE_INFINITY;
  const isMerchant = options.isMerchantPartition ?? (() => false);
  const perKey = new Map<string, { target: string; partition: string; units: number; by: Set<number> }>();
  const perTarget = new Map<string, number>();
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const w of writes) {
    for (const u of w.uses) {
      const id = `${u.target}\u0000${u.partition}`;
      const entry = perKey.get(id) ?? { target: u.target, partition: u.partition, units: 0, by: new Set<number>() };
      entry.units += u.units;
      if (w.checkout !== undefined) entry.by.add(w.checkout);
      perKey.set(id, entry);
      perTarget.set(u.target, (perTarget.get(u.target) ?? 0) + u.units);
      byCommand[w.command] = (byCommand[w.command] ?? 0) + u.units;
      total += u.units;
    }
  }
  // Sharded families add up over their shards, then spread evenly over them.
  const families = new Map<string, { target: string; partition: string; shards: number; units: number; by: Set<number> }>();
  for (const e of perKey.values()) {
    const { family, shards } = partitionFamily(e.target, e.partition);
    const id = `${e.target}\u0000${family}`;
    const f = families.get(id) ?? { target: e.target, partition: family, shards, units: 0, by: new Set<number>() };
    f.units += e.units;
    for (const n of e.by) f.by.add(n);
    families.set(id, f);
  }
  const rows: HeatRow[] = [];
  for (const target of perTarget.keys()) {
    const candidates = [...families.values()].filter((f) => f.target === target).map((f) => {
      const shared = f.by.size > 1 || f.shards > 1;
      // A shared partition takes its share of every checkout; one payment's own takes one checkout's writes.
      const unitsPerCheckout = shared ? f.units / checkouts / f.shards : f.units / Math.max(1, f.by.size);
      return { target, partition: f.partition, shards: f.shards, unitsPerCheckout, shared, perMerchant: shared && isMerchant(f.partition) };
    });
    const hottest = (xs: typeof candidates) => [...xs].sort((a, b) => b.unitsPerCheckout - a.unitsPerCheckout)[0];
    // The hottest partition of all merchants, and the hottest of one merchant's, each where there is one; else a payment's own.
    const picks = [hottest(candidates.filter((c) => c.shared && !c.perMerchant)), hottest(candidates.filter((c) => c.perMerchant))].filter((c) => c !== undefined);
    const chosen = picks.length ? picks : [hottest(candidates.filter((c) => !c.shared))].filter((c) => c !== undefined);
    for (const c of chosen) rows.push({ ...c, targetUnitsPerCheckout: (perTarget.get(target) ?? 0) / checkouts });
  }
  rows.sort((a, b) => (a.target === 'table' ? -1 : b.target === 'table' ? 1 : a.target.localeCompare(b.target)) || Number(a.perMerchant) - Number(b.perMerchant));
  const hottestShared = Math.max(0, ...rows.filter((r) => r.shared && !r.perMerchant).map((r) => r.unitsPerCheckout));
  const hottestOwn = Math.max(0, ...rows.filter((r) => r.perMerchant).map((r) => r.unitsPerCheckout));
  return {
    checkouts,
    rows,
    unitsPerCheckout: total / checkouts,
    maxRate: hottestShared > 0 ? limit / hottestShared : Number.POSITIVE_INFINITY,
    limit,
    merchantPeakWcu: hottestOwn * merchantMaxRate,
    merchantMaxRate,
    byCommand: Object.fromEntries(Object.entries(byCommand).map(([k, v]) => [k, v / checkouts])),
  };
}
