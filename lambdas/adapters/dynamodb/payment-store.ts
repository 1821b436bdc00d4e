import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Payment, type Transaction } from '../../domain/payment';
import { TransitionRejected, type DaySearch, type PaymentChange, type PaymentStore, type QueuedPayment, type ShardPart, type TransitionGuard } from '../../ports/payments';
import { isConditionFailure, itemsByKey } from './client';
import { inParallel } from '../../domain/parallel';
import { LOOKUP_INDEX, OPERATION_IDS, SEARCH_INDEX, SHARDS, TTL_ATTRIBUTE, WORK_INDEX, key, shardOf, withoutStorageAttributes } from './keys';

/** The outbox (sending index) entry of a payment whose callbacks are due from `at` on, in the payment's shard. */
export const outboxEntry = (paymentId: string, at: string) => ({ sendPk: key.outbox(shardOf(paymentId, SHARDS.outbox)), sendSk: `${at}#${paymentId}` });

/** The work index entry of a payment due in a queue (reconcile, capture) at `dueAt`, in the payment's shard. */
export const workEntry = (paymentId: string, queue: { readonly name: string; readonly dueAt: string }) => ({
  workPk: key.work(queue.name, shardOf(paymentId, SHARDS.work)),
  workSk: `${queue.dueAt}#${paymentId}`,
});

/** How many shard queries run at once when a reader visits every shard. */
const SHARD_READ_CONCURRENCY = 8;

/**
 * Every appended transaction carries the status it left the payment in (its callback reports it),
 * so a change that appends one must say that status, even when it keeps the current one.
 */
function stamped(change: PaymentChange): Transaction[] {
  const status = change.set.status;
  if (!change.append?.length) return [];
  if (!status) throw new Error('a change that appends a transaction must set the resulting status');
  return change.append.map((t) => ({ ...t, orderStatus: status }));
}

/** DynamoDB refuses a nested path whose parent map does not exist. */
const isMissingMapPath = (e: unknown): boolean =>
  (e as Error)?.name === 'ValidationException' && /document path/i.test((e as Error).message);

/** Payments are one item each; every change of one is a single conditional write. */
export class DynamoPaymentStore implements PaymentStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  static toItem(payment: Payment): Record<string, unknown> {
    return {
      ...key.payment(payment.paymentId),
      kind: 'payment',
      ...payment,
      gsi1pk: key.orderIndex(payment.merchantKey, payment.order.number),
      gsi1sk: `${payment.createdAt}#${payment.paymentId}`,
      searchPk: key.search(payment.merchantKey, payment.createdAt.slice(0, 10), shardOf(payment.paymentId, SHARDS.search)),
      searchSk: `${payment.createdAt}#${payment.paymentId}`,
    };
  }

  async createPayment(payment: Payment, queue?: { readonly name: string; readonly dueAt: string }): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        // Only an unpaid checkout expires; a merchant-initiated payment is kept from the start.
        Item: {
          refunds: {},
          watching: {},
          ...DynamoPaymentStore.toItem(payment),
          ...(payment.checkout ? { [TTL_ATTRIBUTE]: epochSeconds(new Date(payment.checkout.expiresAt)) } : {}),
          ...(queue ? workEntry(payment.paymentId, queue) : {}),
          ...(payment.transactions.length ? outboxEntry(payment.paymentId, payment.createdAt) : {}),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async findPayment(paymentId: string): Promise<Payment | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.payment(paymentId), ConsistentRead: true }));
    return out.Item ? withoutStorageAttributes<Payment>(out.Item) : undefined;
  }

  async findLatestPaymentByOrder(merchantKey: string, orderNumber: string): Promise<Payment | undefined> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: LOOKUP_INDEX,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.orderIndex(merchantKey, orderNumber) },
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    // The index holds keys only: the payment itself is read by key, consistently.
    const pk = out.Items?.[0]?.pk;
    return typeof pk === 'string' ? this.findPayment(pk.slice('PAYMENT#'.length)) : undefined;
  }

  async paymentsByOrder(merchantKey: string, orderNumber: string, limit: number): Promise<Payment[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: LOOKUP_INDEX,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.orderIndex(merchantKey, orderNumber) },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return this.findPayments((out.Items ?? []).map((i) => String(i.pk).slice('PAYMENT#'.length)));
  }

  async transition(paymentId: string, guard: TransitionGuard, change: PaymentChange): Promise<Payment> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const sets: string[] = [];
    const removes: string[] = [];
    const conditions: string[] = ['attribute_exists(pk)'];
    let n = 0;
    const placeholders = new Map<string, string>();
    // Placeholders must be alphanumeric; map keys (transaction ids) are not.
    const name = (attr: string) => {
      let k = placeholders.get(attr);
      if (!k) {
        k = /^[A-Za-z0-9_]+$/.test(attr) ? `#${attr}` : `#k${placeholders.size}`;
        placeholders.set(attr, k);
        names[k] = attr;
      }
      return k;
    };
    const value = (v: unknown) => {
      const k = `:v${n++}`;
      values[k] = v;
      return k;
    };

    if (guard.statusIn) conditions.push(`${name('status')} IN (${guard.statusIn.map(value).join(', ')})`);
    if (guard.attemptIs !== undefined) {
      conditions.push(guard.attemptIs === 0 ? `attribute_not_exists(${name('attempt')})` : `${name('attempt')} = ${value(guard.attemptIs)}`);
    }
    if (guard.inFlight === 'none') conditions.push(`attribute_not_exists(${name('inFlight')})`);
    else if (guard.inFlight !== undefined) conditions.push(`${name('inFlight')}.${name('attempt')} = ${value(guard.inFlight)}`);
    if (guard.actionAttempt !== undefined) conditions.push(`${name('action')}.${name('attempt')} = ${value(guard.actionAttempt)}`);
    if (guard.linkOpenAt) conditions.push(`${name('checkout')}.${name('expiresAt')} > ${value(guard.linkOpenAt.toISOString())}`);
    if (guard.linkOpenAt || guard.linkNotClosed) conditions.push(`attribute_not_exists(${name('linkClosed')})`);
    if (guard.voidableAt) conditions.push(`${name('voidableUntil')} > ${value(guard.voidableAt.toISOString())}`);
    const absentOr = (attr: string, test: string) => `(attribute_not_exists(${name(attr)}) OR ${name(attr)} ${test})`;
    if (guard.refundHeldAtMost !== undefined) conditions.push(absentOr('refundHeldMinor', `<= ${value(guard.refundHeldAtMost)}`));
    if (guard.refundedIs !== undefined) {
      conditions.push(guard.refundedIs === 0 ? absentOr('refundedMinor', `= ${value(0)}`) : `${name('refundedMinor')} = ${value(guard.refundedIs)}`);
    }
    if (guard.operation === 'none') conditions.push(`attribute_not_exists(${name('operation')})`);
    else if (guard.operation !== undefined) conditions.push(`${name('operation')}.${name('transId')} = ${value(guard.operation)}`);
    if (guard.refundInFlight !== undefined) conditions.push(`attribute_exists(${name('refunds')}.${name(guard.refundInFlight)})`);
    if (guard.refundsInFlightCount !== undefined) conditions.push(`size(${name('refunds')}) = ${value(guard.refundsInFlightCount)}`);
    if (guard.noRefundsInFlight) conditions.push(`(attribute_not_exists(${name('refunds')}) OR size(${name('refunds')}) = ${value(0)})`);
    if (guard.watching !== undefined) conditions.push(`attribute_exists(${name('watching')}.${name(String(guard.watching))})`);
    const adds: string[] = [];
    if (guard.newTransaction !== undefined) {
      const ids = value(new Set([guard.newTransaction]));
      conditions.push(`NOT contains(${name(OPERATION_IDS)}, ${value(guard.newTransaction)})`);
      adds.push(`${name(OPERATION_IDS)} ${ids}`);
    }

    for (const [attr, v] of Object.entries(change.set)) {
      if (v !== undefined) sets.push(`${name(attr)} = ${value(v)}`);
    }
    const appended = stamped(change);
    if (appended.length) {
      sets.push(`${name('transactions')} = list_append(if_not_exists(${name('transactions')}, ${value([])}), ${value(appended)})`);
      // The outbox, in the same write: a committed transaction always has its callback due. A
      // delivery in progress (or a retry waiting) keeps its place, so callbacks stay in order.
      const entry = outboxEntry(paymentId, change.set.updatedAt);
      sets.push(`${name('sendPk')} = ${value(entry.sendPk)}`, `${name('sendSk')} = if_not_exists(${name('sendSk')}, ${value(entry.sendSk)})`);
    }
    if (change.sendCallback !== undefined) {
      // Behind the callbacks in order (callbacks.ts claims those first), and due now unless leased or waiting.
      const entry = outboxEntry(paymentId, change.set.updatedAt);
      sets.push(`${name('callbackResends')} = list_append(if_not_exists(${name('callbackResends')}, ${value([])}), ${value([change.sendCallback])})`);
      if (!appended.length) sets.push(`${name('sendPk')} = ${value(entry.sendPk)}`, `${name('sendSk')} = if_not_exists(${name('sendSk')}, ${value(entry.sendSk)})`);
    }
    for (const [attr, n] of Object.entries(change.add ?? {})) {
      if (n !== undefined && n !== 0) sets.push(`${name(attr)} = if_not_exists(${name(attr)}, ${value(0)}) + ${value(n)}`);
    }
    // Entries of the maps of things in flight come and go by name (the maps exist from creation on).
    if (change.refund && 'put' in change.refund) sets.push(`${name('refunds')}.${name(change.refund.put[0])} = ${value(change.refund.put[1])}`);
    if (change.refund && 'delete' in change.refund) removes.push(`${name('refunds')}.${name(change.refund.delete)}`);
    if (change.watch && 'put' in change.watch) sets.push(`${name('watching')}.${name(String(change.watch.put.attempt))} = ${value(change.watch.put)}`);
    if (change.watch && 'delete' in change.watch) removes.push(`${name('watching')}.${name(String(change.watch.delete))}`);
    for (const attr of change.remove ?? []) removes.push(name(attr));
    if (change.queue) {
      const entry = workEntry(paymentId, change.queue);
      sets.push(`${name('workPk')} = ${value(entry.workPk)}`, `${name('workSk')} = ${value(entry.workSk)}`);
    } else if (change.queue === null) {
      removes.push(name('workPk'), name('workSk'));
    }
    if (change.keep) removes.push(name(TTL_ATTRIBUTE));

    const update = new UpdateCommand({
      TableName: this.tableName,
      Key: key.payment(paymentId),
      UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '', adds.length ? `ADD ${adds.join(', ')}` : ''].join(' ').trim(),
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
      ReturnValues: 'ALL_NEW',
    });
    try {
      let out;
      try {
        out = await this.db.send(update);
      } catch (e) {
        // A payment written before the in-flight maps existed gets them once, then the change applies.
        if (!isMissingMapPath(e) || !(change.refund || change.watch || guard.refundInFlight || guard.watching !== undefined)) throw e;
        await this.addInFlightMaps(paymentId);
        out = await this.db.send(update);
      }
      return withoutStorageAttributes<Payment>(out.Attributes ?? {});
    } catch (e) {
      if (isConditionFailure(e)) throw new TransitionRejected(`transition of ${paymentId} rejected`);
      throw e;
    }
  }

  private async addInFlightMaps(paymentId: string): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.payment(paymentId),
          UpdateExpression: 'SET #r = if_not_exists(#r, :e), #w = if_not_exists(#w, :e)',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#r': 'refunds', '#w': 'watching' },
          ExpressionAttributeValues: { ':e': {} },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  async findPayments(paymentIds: readonly string[]): Promise<Payment[]> {
    const ids = [...new Set(paymentIds)].slice(0, 100);
    const items = await itemsByKey(this.db, this.tableName, ids.map((id) => key.payment(id)));
    return items.map((i) => withoutStorageAttributes<Payment>(i));
  }

  async paymentsOfDay(query: DaySearch): Promise<{ payments: Payment[]; cursor?: string }> {
    const { merchantKey, day, status, limit } = query;
    // Every shard of the merchant's day, newest first, each read from where the last page stopped
    // (the cursor holds the sort key of the last payment shown): merged, the newest `limit` win.
    const after = query.cursor;
    const shards = Array.from({ length: SHARDS.search }, (_, shard) => shard);
    const perShard = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
      const found: Record<string, unknown>[] = [];
      let start: Record<string, unknown> | undefined;
      let reads = 0;
      // A status filter skips entries of other statuses inside DynamoDB; a bounded number of pages per shard.
      do {
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: SEARCH_INDEX,
            KeyConditionExpression: after ? 'searchPk = :pk AND searchSk < :after' : 'searchPk = :pk',
            ...(status ? { FilterExpression: '#status = :status' } : {}),
            ExpressionAttributeNames: status ? { '#status': 'status' } : undefined,
            ExpressionAttributeValues: { ':pk': key.search(merchantKey, day, shard), ...(after ? { ':after': after } : {}), ...(status ? { ':status': status } : {}) },
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
    const payments = await this.findPayments(ids);
    return { payments, ...(more ? { cursor } : {}) };
  }

  async *dueBatches(queue: string, until: Date, pageSize: number, part?: ShardPart): AsyncGenerator<QueuedPayment[]> {
    // One reader per shard, each paging through its due entries in order; a round reads a page of
    // every shard not yet exhausted, at once, and hands over what they found, soonest due first.
    let cursors: { shard: number; start?: Record<string, unknown> }[] = shardsOf(SHARDS.work, part).map((shard) => ({ shard }));
    while (cursors.length) {
      const pages = await inParallel(cursors, SHARD_READ_CONCURRENCY, async ({ shard, start }) => {
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: WORK_INDEX,
            KeyConditionExpression: 'workPk = :q AND workSk <= :until',
            ExpressionAttributeValues: { ':q': key.work(queue, shard), ':until': `${until.toISOString()}#~` },
            Limit: pageSize,
            ExclusiveStartKey: start,
          }),
        );
        return { shard, start: out.LastEvaluatedKey, items: (out.Items ?? []).map(queued) };
      });
      cursors = pages.filter((p) => p.start !== undefined).map(({ shard, start }) => ({ shard, start }));
      const batch = pages.flatMap((p) => p.items).sort((a, b) => a.dueAt.localeCompare(b.dueAt));
      if (batch.length) yield batch;
    }
  }

  async due(queue: string, until: Date, limit: number): Promise<QueuedPayment[]> {
    const shards = Array.from({ length: SHARDS.work }, (_, shard) => shard);
    // Every shard at once, each up to the limit; the soonest due across them first.
    const found = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: WORK_INDEX,
          KeyConditionExpression: 'workPk = :q AND workSk <= :until',
          ExpressionAttributeValues: { ':q': key.work(queue, shard), ':until': `${until.toISOString()}#~` },
          Limit: limit,
        }),
      );
      return (out.Items ?? []).map(queued);
    });
    return found
      .flat()
      .sort((a, b) => a.dueAt.localeCompare(b.dueAt))
      .slice(0, limit);
  }
}

/** The shards of a family a worker reads: all of them, or its part. */
export const shardsOf = (shards: number, part?: ShardPart): number[] =>
  Array.from({ length: shards }, (_, shard) => shard).filter((shard) => !part || shard % part.of === part.index);

/** A work index entry as the jobs see it. */
function queued(entry: Record<string, unknown>): QueuedPayment {
  const [dueAt = '', paymentId = ''] = String(entry.workSk).split('#');
  return { paymentId, dueAt };
}

/** Pages a status-filtered shard may read for one search page before it stops and leaves a cursor. */
const MAX_SHARD_PAGES = 4;
