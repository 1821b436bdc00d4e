import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Payment } from '../../domain/payment';
import type { DaySearch, QueuedPayment, ShardPart } from '../../ports/payments';
import { inParallel } from '../../domain/parallel';
import { SEARCH_INDEX, WORK_INDEX, key, searchShardsOf, type ShardCounts } from './keys';
import { duePage } from './client';

/** The work index: a queue's shard, its entries by due time. */
const WORK = { name: WORK_INDEX, pk: 'workPk', sk: 'workSk' } as const;

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
  const { merchantKey, day, limit } = query;
  const filter = statusFilter(query.statuses);
  // Every shard of the merchant's day, newest first, each read from where the last page stopped
  // (the cursor holds the sort key of the last payment shown): merged, the newest `limit` win.
  const after = query.cursor;
  const shards = shardsOf(searchShardsOf(day, table.shards));
  const perShard = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
    const found: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    let reads = 0;
    // A status filter skips entries of other statuses inside DynamoDB; a bounded number of pages per shard.
    do {
      const out = await table.db.send(
        new QueryCommand({
          TableName: table.tableName,
          IndexName: SEARCH_INDEX,
          KeyConditionExpression: after ? 'searchPk = :pk AND searchSk < :after' : 'searchPk = :pk',
          ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeNames: filter.names } : {}),
          ExpressionAttributeValues: { ':pk': key.search(merchantKey, day, shard), ...(after ? { ':after': after } : {}), ...filter?.values },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: start,
        }),
      );
      found.push(...(out.Items ?? []));
      start = out.LastEvaluatedKey;
    } while (start && found.length < limit && ++reads < MAX_SHARD_PAGES);
    return { found: found.map((i) => String(i.searchSk)), stoppedAt: start ? String(start.searchSk) : undefined };
  });
  // A shard that stopped early has unread entries older than where it stopped: the page may not
  // pass the newest such point, or the next page (strictly older than the cursor) would skip them.
  const boundary = perShard.reduce((b, r) => (r.stoppedAt !== undefined && r.stoppedAt > b ? r.stoppedAt : b), '');
  const newest = perShard
    .flatMap((r) => r.found)
    .filter((sk) => sk >= boundary)
    .sort()
    .reverse();
  const page = newest.slice(0, limit);
  const cursor = page.length === limit ? page[limit - 1] : boundary || undefined;
  const more = cursor !== undefined && (newest.length > limit || perShard.some((r) => r.stoppedAt !== undefined));
  const ids = page.map((sk) => sk.slice(sk.lastIndexOf('#') + 1));
  const payments = await findPayments(ids);
  return { payments, ...(more ? { cursor } : {}) };
}

export async function countPaymentsOfDay(table: Table, query: Omit<DaySearch, 'limit' | 'cursor'>): Promise<number> {
  const { merchantKey, day } = query;
  const filter = statusFilter(query.statuses);
  const shards = shardsOf(searchShardsOf(day, table.shards));
  // Select COUNT over the keys-only entries: a page of up to 1 MB of them per read, nothing else fetched.
  const counts = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const out = await table.db.send(
        new QueryCommand({
          TableName: table.tableName,
          IndexName: SEARCH_INDEX,
          KeyConditionExpression: 'searchPk = :pk',
          Select: 'COUNT',
          ...(filter ? { FilterExpression: filter.expression, ExpressionAttributeNames: filter.names } : {}),
          ExpressionAttributeValues: { ':pk': key.search(merchantKey, day, shard), ...filter?.values },
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

/** The search index's filter on the stored status (any of `statuses`); none when no status is asked. */
function statusFilter(statuses: readonly string[] | undefined): { expression: string; names: Record<string, string>; values: Record<string, string> } | undefined {
  if (!statuses?.length) return undefined;
  const values = Object.fromEntries(statuses.map((s, i) => [`:status${i}`, s]));
  return { expression: `#status IN (${Object.keys(values).join(', ')})`, names: { '#status': 'status' }, values };
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

/** Pages a status-filtered shard may read for one search page before it stops and leaves a cursor. */
const MAX_SHARD_PAGES = 4;

