import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Payment, type Transaction } from '../../domain/payment';
import { TransitionRejected, type DaySearch, type PaymentChange, type PaymentStore, type QueuedPayment, type ShardPart, type TransitionGuard } from '../../ports/payments';
import { isConditionFailure, itemsByKey } from './client';
import { inParallel } from '../../domain/parallel';
import { LOOKUP_INDEX, OPERATION_IDS, SEARCH_INDEX, SHARDS, TTL_ATTRIBUTE, WORK_INDEX, key, shardOf, withoutStorageAttributes } from './keys';

/**
 * The outbox (sending index) entry of a payment whose callbacks are due from `at` on, in the
 * payment's shard. The sort key is the due time alone: an index entry carries the table's key, so
 * the id need not ride in the item (entries of the layout before it end in `#<id>`, read alike).
 */
export const outboxEntry = (paymentId: string, at: string) => ({ sendPk: key.outbox(shardOf(paymentId, SHARDS.outbox)), sendSk: at });

/** The work index entry of a payment due in a queue (reconcile, capture) at `dueAt`, in the payment's shard. */
export const workEntry = (paymentId: string, queue: { readonly name: string; readonly dueAt: string }) => ({
  workPk: key.work(queue.name, shardOf(paymentId, SHARDS.work)),
  workSk: `${queue.dueAt}#${paymentId}`,
});

/**
 * The tag of the lease a write that makes a callback due leaves for the table's stream dispatcher
 * (where there is one: `streamDelivery`), which takes it as it is: a delivery then costs no lease
 * write. The relay leaves such a lease alone until it ends, then takes the payment over.
 */
export const STREAM_LEASE_TAG = 'stream';
/** How long the stream dispatcher has to take its lease before the relay may: a callback's timeout and margins. */
export const STREAM_LEASE_MS = 60_000;

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

/**
 * The fields of a payment written once, with it, and never changed: what the merchant asked (the
 * order, the link's settings, custom data, what a recurring request asked for). They live in the
 * payment's details item, apart from the state every change rewrites (docs/architecture.md, "Keys
 * and heat"): a write is billed by the size of the item it changes, one unit per KB.
 */
export const DETAIL_FIELDS = ['order', 'checkout', 'customData', 'recurringInit', 'scheduleId', 'recurringChainToken', 'requestFingerprint'] as const;
/** The link's expiry on the state item, in epoch milliseconds (a number is smaller): the attempt's condition reads it there. */
const LINK_ENDS = 'linkEnds';
/** Details kept per store (they never change): a change's answer is a whole payment without reading them again. */
const DETAILS_CACHED = 512;

/** A payment's two items: its state, and its details (DETAIL_FIELDS). */
export function paymentItems(payment: Payment): { state: Record<string, unknown>; details: Record<string, unknown> } {
  const state: Record<string, unknown> = { ...payment };
  const details: Record<string, unknown> = {};
  for (const field of DETAIL_FIELDS) {
    if (state[field] !== undefined) details[field] = state[field];
    delete state[field];
  }
  if (payment.checkout) state[LINK_ENDS] = Date.parse(payment.checkout.expiresAt);
  // The id is the partition key's.
  delete state.paymentId;
  return {
    state: {
      ...key.payment(payment.paymentId),
      kind: 'payment',
      ...state,
      // The search entry carries the status, so it lives on the state item.
      searchPk: key.search(payment.merchantKey, payment.createdAt.slice(0, 10), shardOf(payment.paymentId, SHARDS.search)),
      searchSk: `${payment.createdAt}#${payment.paymentId}`,
    },
    details: {
      ...key.paymentDetails(payment.paymentId),
      kind: 'payment-details',
      ...details,
      // The order lookup never changes: it lives on the item written once.
      gsi1pk: key.orderIndex(payment.merchantKey, payment.order.number),
      gsi1sk: payment.createdAt,
    },
  };
}

/**
 * The payment of a state item and its details item. A state item that holds the order was written
 * whole, as one item, before the split, and is read as it is. A state item without its details is
 * no payment (the details are written first: this cannot be seen, short of a damaged table).
 */
export function joinedPayment(state: Record<string, unknown>, details: Record<string, unknown> | undefined): Payment | undefined {
  const own = withoutStorageAttributes<Record<string, unknown>>(state);
  delete own[LINK_ENDS];
  own.paymentId ??= String(state.pk).slice('PAYMENT#'.length);
  if ('order' in state) return own as unknown as Payment;
  if (!details) return undefined;
  return { ...withoutStorageAttributes<Record<string, unknown>>(details), ...own } as unknown as Payment;
}

/**
 * A payment is two items under its partition key: its state (`PAYMENT`), every change of which is
 * a single conditional write, and its details (`PAYMENT#DETAILS`), written once before it.
 */
export class DynamoPaymentStore implements PaymentStore {
  private readonly details = new Map<string, Record<string, unknown>>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** Whether the table's stream dispatcher delivers new callbacks (on AWS; not in the local runner). */
    private readonly options: { readonly streamDelivery?: boolean } = {},
  ) {}

  /** The lease a write that makes a callback due at `at` leaves for the stream dispatcher, if there is one. */
  private streamLease(at: string): string | undefined {
    return this.options.streamDelivery ? `${new Date(Date.parse(at) + STREAM_LEASE_MS).toISOString()}#${STREAM_LEASE_TAG}` : undefined;
  }

  async createPayment(payment: Payment, queue?: { readonly name: string; readonly dueAt: string }): Promise<void> {
    const { state, details } = paymentItems(payment);
    // The details first: a state item is never without them. A crash between the two leaves
    // details no state item points to, which nothing reads.
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: details, ConditionExpression: 'attribute_not_exists(pk)' }));
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        // Only an unpaid checkout expires; a merchant-initiated payment is kept from the start.
        Item: {
          refunds: {},
          watching: {},
          ...state,
          ...(payment.checkout ? { [TTL_ATTRIBUTE]: epochSeconds(new Date(payment.checkout.expiresAt)) } : {}),
          ...(queue ? workEntry(payment.paymentId, queue) : {}),
          ...(payment.transactions.length ? { ...outboxEntry(payment.paymentId, payment.createdAt), sendLease: this.streamLease(payment.createdAt) } : {}),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    this.remember(payment.paymentId, details);
  }

  async findPayment(paymentId: string): Promise<Payment | undefined> {
    return (await readPayment(this.db, this.tableName, paymentId, (id, d) => this.remember(id, d)))?.payment;
  }

  /** Drops the details of a link DynamoDB's TTL removed unpaid (its state item is gone). */
  async forgetExpiredLink(paymentId: string): Promise<void> {
    this.details.delete(paymentId);
    await this.db.send(
      new DeleteCommand({ TableName: this.tableName, Key: key.paymentDetails(paymentId), ConditionExpression: 'attribute_exists(pk)' }),
    ).catch((e: unknown) => {
      if (!isConditionFailure(e)) throw e;
    });
  }

  private remember(paymentId: string, details: Record<string, unknown>): void {
    this.details.delete(paymentId);
    this.details.set(paymentId, details);
    if (this.details.size > DETAILS_CACHED) this.details.delete(this.details.keys().next().value!);
  }

  /** A changed state item as a payment: its details from memory, or read once. */
  private async joined(paymentId: string, state: Record<string, unknown>): Promise<Payment> {
    if ('order' in state) return joinedPayment(state, undefined)!;
    let details = this.details.get(paymentId);
    if (!details) {
      const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.paymentDetails(paymentId), ConsistentRead: true }));
      details = out.Item;
      if (details) this.remember(paymentId, details);
    }
    const payment = joinedPayment(state, details);
    if (!payment) throw new Error(`payment ${paymentId} has no details item`);
    return payment;
  }

  async findLatestPaymentByOrder(merchantKey: string, orderNumber: string): Promise<Payment | undefined> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: LOOKUP_INDEX,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.orderIndex(merchantKey, orderNumber) },
        ScanIndexForward: false,
        Limit: LATEST_ORDER_CANDIDATES,
      }),
    );
    // The index holds keys only: the payment itself is read by key, consistently. An entry whose
    // state item was never written (a crash between the two writes of createPayment) is passed over.
    for (const entry of out.Items ?? []) {
      const payment = await this.findPayment(String(entry.pk).slice('PAYMENT#'.length));
      if (payment) return payment;
    }
    return undefined;
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
    if (guard.linkOpenAt) {
      // A payment written whole before the split has its link's expiry inside `checkout`.
      conditions.push(`(${name(LINK_ENDS)} > ${value(guard.linkOpenAt.getTime())} OR ${name('checkout')}.${name('expiresAt')} > ${value(guard.linkOpenAt.toISOString())})`);
    }
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
      if ((DETAIL_FIELDS as readonly string[]).includes(attr)) throw new Error(`${attr} is written once, with the payment`);
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
    // The stream dispatcher's lease, unless a worker holds the payment (it delivers this one too).
    const streamLease = (appended.length || change.sendCallback !== undefined) && this.streamLease(change.set.updatedAt);
    if (streamLease) sets.push(`${name('sendLease')} = if_not_exists(${name('sendLease')}, ${value(streamLease)})`);
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
      return await this.joined(paymentId, out.Attributes ?? {});
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

  async hurry(paymentId: string, queue: string, dueAt: Date): Promise<boolean> {
    const entry = workEntry(paymentId, { name: queue, dueAt: dueAt.toISOString() });
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.payment(paymentId),
          UpdateExpression: 'SET workSk = :sk',
          // Only earlier, only in this queue: the work index entry is the whole change.
          ConditionExpression: 'attribute_exists(pk) AND workPk = :pk AND workSk > :sk',
          ExpressionAttributeValues: { ':pk': entry.workPk, ':sk': entry.workSk },
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  async findPayments(paymentIds: readonly string[]): Promise<Payment[]> {
    const ids = [...new Set(paymentIds)].slice(0, 100);
    const items = await itemsByKey(this.db, this.tableName, ids.flatMap((id) => [key.payment(id), key.paymentDetails(id)]));
    const bySk = (sk: string) => new Map(items.filter((i) => i.sk === sk).map((i) => [String(i.pk), i]));
    const states = bySk(key.payment('').sk);
    const details = bySk(key.paymentDetails('').sk);
    return ids.flatMap((id) => {
      const pk = key.payment(id).pk;
      const state = states.get(pk);
      const payment = state ? joinedPayment(state, details.get(pk)) : undefined;
      return payment ? [payment] : [];
    });
  }

  async paymentsOfDay(query: DaySearch): Promise<{ payments: Payment[]; cursor?: string }> {
    const { merchantKey, day, limit } = query;
    const filter = statusFilter(query.statuses);
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
    const payments = await this.findPayments(ids);
    return { payments, ...(more ? { cursor } : {}) };
  }

  async countPaymentsOfDay(query: Omit<DaySearch, 'limit' | 'cursor'>): Promise<number> {
    const { merchantKey, day } = query;
    const filter = statusFilter(query.statuses);
    const shards = Array.from({ length: SHARDS.search }, (_, shard) => shard);
    // Select COUNT over the keys-only entries: a page of up to 1 MB of them per read, nothing else fetched.
    const counts = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
      let count = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.tableName,
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
  const [dueAt = '', paymentId = ''] = String(entry.workSk).split('#');
  return { paymentId, dueAt };
}

/** Newest entries of an order number read to find its latest payment (more than one only after a crash at creation). */
const LATEST_ORDER_CANDIDATES = 3;

/** Pages a status-filtered shard may read for one search page before it stops and leaves a cursor. */
const MAX_SHARD_PAGES = 4;

/**
 * A payment read by id, consistently: its state item and its details in one query of its
 * partition (one read unit for both), with the state item as stored (the callback outbox reads
 * its own attributes there).
 */
export async function readPayment(
  db: DynamoDBDocumentClient,
  tableName: string,
  paymentId: string,
  seen?: (paymentId: string, details: Record<string, unknown>) => void,
): Promise<{ payment: Payment; state: Record<string, unknown> } | undefined> {
  const { pk, sk } = key.payment(paymentId);
  const out = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :sk)',
      ExpressionAttributeValues: { ':pk': pk, ':sk': sk },
      ConsistentRead: true,
    }),
  );
  const state = out.Items?.find((i) => i.sk === sk);
  const details = out.Items?.find((i) => i.sk === key.paymentDetails(paymentId).sk);
  if (!state) return undefined;
  if (details) seen?.(paymentId, details);
  const payment = joinedPayment(state, details);
  return payment ? { payment, state } : undefined;
}
