import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Payment } from '../../domain/payment';
import type { DaySearch, QueuedPayment, ShardPart } from '../../ports/payments';
import { inParallel } from '../../domain/parallel';
import { SEARCH_INDEX, WORK_INDEX, key, searchShardsOf, type ShardCounts } from './keys';
import { duePage, itemsByKey } from './client';

/** The work index: a queue's shard, its entries by due time. */
const WORK = { name: WORK_INDEX, pk: 'workPk', sk: 'workSk' } as const;
/** The search index: a merchant-day's shard, its entries by creation time (keys only). */
const SEARCH = { name: SEARCH_INDEX, pk: 'searchPk', sk: 'searchSk' } as const;

/**
 * The payment store's reads of its sharded indexes: a merchant's payments of a day (search) and
 * what is due in a work queue (work). Every shard is read, a bounded number at once.
 */

/** The table a store reads. */
export interface Table {
  readonly db: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly shards: ShardCounts;
}

/** How many shard queries run at once when a reader visits every shard. */
const SHARD_READ_CONCURRENCY = 8;

export async function paymentsOfDay(table: Table, query: DaySearch, findPayments: (ids: readonly string[]) => Promise<Payment[]>): Promise<{ payments: Payment[]; cursor?: string }> {
  const { limit } = query;
  // Every shard of the merchant's day, merged newest first from where the last page stopped (the
  // cursor holds the sort key of the last entry that page accounted for).
  const entries = new DayEntries(table, query, limit);
  if (!query.statuses?.length) {
    const page = await entries.take(limit);
    const more = page.length === limit && entries.more;
    return { payments: await paymentsIn(page, findPayments), ...(more ? { cursor: page[limit - 1]! } : {}) };
  }
  // The index holds keys only (ADR 0043): the stored status of each entry is read from its payment,
  // `limit` entries a round, a bounded number of rounds a page. A page that ends its rounds short
  // leaves the cursor at the last entry it looked at: the next page starts right after it.
  const statuses = new Set(query.statuses);
  const page: string[] = [];
  let lastSeen: string | undefined;
  let unused = false;
  for (let round = 0; round < MAX_STATUS_ROUNDS && page.length < limit; round++) {
    const seen = await entries.take(limit);
    if (!seen.length) break;
    const stored = await storedStatuses(table, seen.map(paymentIdOf));
    for (const [i, sk] of seen.entries()) {
      lastSeen = sk;
      if (!statuses.has(stored.get(paymentIdOf(sk)) ?? '')) continue;
      page.push(sk);
      if (page.length === limit) {
        // Looked at and not shown: the next page reads them again.
        unused = i < seen.length - 1;
        break;
      }
    }
  }
  const more = lastSeen !== undefined && (unused || entries.more);
  // Read again whole (consistently): a payment whose status changed since the status was read is left out.
  const payments = (await paymentsIn(page, findPayments)).filter((p) => statuses.has(p.status));
  return { payments, ...(more ? { cursor: lastSeen! } : {}) };
}

export async function countPaymentsOfDay(table: Table, query: Omit<DaySearch, 'limit' | 'cursor'>): Promise<number> {
  const { merchantKey, day } = query;
  // The index holds no status: a count by status reads the payments, page by page (paymentsOfDay),
  // never a whole day at once here.
  if (query.statuses?.length) throw new Error('a count by status reads the payments: page through paymentsOfDay');
  const shards = shardsOf(searchShardsOf(day, table.shards));
  // Select COUNT over the keys-only entries: a page of up to 1 MB of them per read, nothing else fetched.
  const counts = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await table.db.send(
        new QueryCommand({
          TableName: table.tableName,
          IndexName: SEARCH.name,
          KeyConditionExpression: `${SEARCH.pk} = :pk`,
          Select: 'COUNT',
          ExpressionAttributeValues: { ':pk': key.search(merchantKey, day, shard) },
          ExclusiveStartKey: start,
        }),
      );
      count += out.Count ?? 0;
      start = out.LastEvaluatedKey;
    } while (start);
    return count;
  });
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * The search entries of a merchant's day across its shards, newest first, strictly older than the
 * query's cursor. A shard is read a page (`pageSize` entries) at a time, and only when the merge
 * needs its next entry: every entry handed out is older than all handed out before it, so a cursor
 * at the last one skips and repeats nothing, and what is read stays bounded by what is taken.
 */
class DayEntries {
  private readonly shards: ShardReader[];

  constructor(
    private readonly table: Table,
    private readonly query: Pick<DaySearch, 'merchantKey' | 'day' | 'cursor'>,
    private readonly pageSize: number,
  ) {
    this.shards = shardsOf(searchShardsOf(query.day, table.shards)).map((shard) => ({ pk: key.search(query.merchantKey, query.day, shard), held: [], read: false }));
  }

  /** Up to `count` next entries (their sort keys); fewer only when the day has no more. */
  async take(count: number): Promise<string[]> {
    const taken: string[] = [];
    while (taken.length < count) {
      await this.fill();
      let newest: ShardReader | undefined;
      for (const shard of this.shards) if (shard.held.length && (!newest || shard.held[0]! > newest.held[0]!)) newest = shard;
      if (!newest) break;
      taken.push(newest.held.shift()!);
    }
    return taken;
  }

  /** Whether entries may be left after those taken (some read and not taken, or a shard not read to its end). */
  get more(): boolean {
    return this.shards.some((s) => s.held.length > 0 || !s.read || s.start !== undefined);
  }

  /** The next page of every shard that holds none and may have more, a bounded number at once. */
  private async fill(): Promise<void> {
    const empty = this.shards.filter((s) => !s.held.length && (!s.read || s.start !== undefined));
    const after = this.query.cursor;
    await inParallel(empty, SHARD_READ_CONCURRENCY, async (shard) => {
      const out = await this.table.db.send(
        new QueryCommand({
          TableName: this.table.tableName,
          IndexName: SEARCH.name,
          KeyConditionExpression: after ? `${SEARCH.pk} = :pk AND ${SEARCH.sk} < :after` : `${SEARCH.pk} = :pk`,
          ExpressionAttributeValues: { ':pk': shard.pk, ...(after ? { ':after': after } : {}) },
          ScanIndexForward: false,
          Limit: this.pageSize,
          ExclusiveStartKey: shard.start,
        }),
      );
      shard.held = (out.Items ?? []).map((i) => String(i[SEARCH.sk]));
      shard.start = out.LastEvaluatedKey;
      shard.read = true;
    });
  }
}

/** One shard of a merchant's day as DayEntries reads it: the entries read and not yet taken, and where its next page starts. */
interface ShardReader {
  readonly pk: string;
  held: string[];
  start?: Record<string, unknown>;
  read: boolean;
}

/** A search entry's payment: its sort key is `<created at>#<payment id>`. */
const paymentIdOf = (sk: string): string => sk.slice(sk.lastIndexOf('#') + 1);

/** The payments of these entries, in their order (findPayments takes 100 at a time). */
async function paymentsIn(entries: readonly string[], findPayments: (ids: readonly string[]) => Promise<Payment[]>): Promise<Payment[]> {
  const ids = entries.map(paymentIdOf);
  const found: Payment[] = [];
  for (let i = 0; i < ids.length; i += 100) found.push(...(await findPayments(ids.slice(i, i + 100))));
  return found;
}

/**
 * The stored status of each payment, from its state item alone (the search entry is of its details
 * item, or of the state item for payments written before: payment-items.ts): eventually consistent,
 * as the index is, so half a read unit an item of up to 4 KB.
 */
async function storedStatuses(table: Table, paymentIds: readonly string[]): Promise<Map<string, string>> {
  const items = await itemsByKey(table.db, table.tableName, paymentIds.map((id) => key.payment(id)), false, ['status']);
  return new Map(items.map((i) => [String(i.pk).slice(key.payment('').pk.length), String(i.status)]));
}

export async function* dueBatches(table: Table, queue: string, until: Date, pageSize: number, part?: ShardPart): AsyncGenerator<QueuedPayment[]> {
  // One reader per shard, each paging through its due entries in order; a round reads a page of
  // every shard not yet exhausted, at once, and hands over what they found, soonest due first.
  let cursors: { shard: number; start?: Record<string, unknown> }[] = shardsOf(table.shards.work, part).map((shard) => ({ shard }));
  while (cursors.length) {
    const pages = await inParallel(cursors, SHARD_READ_CONCURRENCY, async ({ shard, start }) => {
      const { items, last } = await duePage(table.db, table.tableName, WORK, key.work(queue, shard), until, { limit: pageSize, ...(start ? { after: start } : {}) });
      return { shard, start: last, items: items.map(queued) };
    });
    cursors = pages.filter((p) => p.start !== undefined).map(({ shard, start }) => ({ shard, start }));
    const batch = pages.flatMap((p) => p.items).sort((a, b) => a.dueAt.localeCompare(b.dueAt));
    if (batch.length) yield batch;
  }
}

export async function due(table: Table, queue: string, until: Date, limit: number): Promise<QueuedPayment[]> {
  const shards = shardsOf(table.shards.work);
  // Every shard at once, each up to the limit; the soonest due across them first.
  const found = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
    const { items } = await duePage(table.db, table.tableName, WORK, key.work(queue, shard), until, { limit });
    return items.map(queued);
  });
  return found
    .flat()
    .sort((a, b) => a.dueAt.localeCompare(b.dueAt))
    .slice(0, limit);
}

/** The shards of a family a worker reads: all of them, or its part. */
export const shardsOf = (shards: number, part?: ShardPart): number[] =>
  Array.from({ length: shards }, (_, shard) => shard).filter((shard) => !part || shard % part.of === part.index);

/** A work index entry as the jobs see it. */
function queued(entry: Record<string, unknown>): QueuedPayment {
  // The sort key is the due time (`<due>#<id>` in entries of the layout before it, and a receipt's).
  const [dueAt = '', idInKey] = String(entry.workSk).split('#');
  const pk = String(entry.pk);
  return { paymentId: idInKey ?? pk.slice(pk.indexOf('#') + 1), dueAt };
}

/** Newest entries of an order number read to find its latest payment (more than one only after a crash at creation). */
const LATEST_ORDER_CANDIDATES = 3;

/**
 * Rounds of `limit` entries a page filtered by status looks at before it stops and leaves a cursor:
 * at most 4 × limit stored statuses read per page (a shard reads at most 5 pages of keys for them).
 */
const MAX_STATUS_ROUNDS = 4;

