import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient, type NativeAttributeValue } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { epochSeconds, type Payment, type QueueEntry, type Transition } from '../../domain/payment';
import { type Applied, type DaySearch, type PaymentStore, type QueuedPayment, type ShardPart } from '../../ports/payments';
import { conditionalUpdate, createItem, isConditionFailure, itemsByKey } from './client';
import { LOOKUP_INDEX, SHARDS, TTL_ATTRIBUTE, key, type ShardCounts } from './keys';
import { STREAM_LEASE_MS, STREAM_LEASE_TAG, joinedPayment, outboxEntry, paymentItems, readPayment, workEntry } from './payment-items';
import { countPaymentsOfDay, due, dueBatches, paymentsOfDay, type Table } from './payment-queries';
import { mayNetCallback, netConditionsHold, transitionExpression, type StreamOutbox } from './transition-expression';

export { DETAIL_FIELDS, STREAM_LEASE_MS, STREAM_LEASE_TAG, joinedPayment, outboxEntry, paymentItems, readPayment, workEntry } from './payment-items';
export { shardsOf } from './payment-queries';

/**
 * A payment is two items under its partition key: its state (`PAYMENT`), every change of which is
 * a single conditional write, and its details (`PAYMENT#DETAILS`), written once before it.
 */
export class DynamoPaymentStore implements PaymentStore {
  private readonly details = new Map<string, Record<string, unknown>>();
  private readonly table: Table;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /**
     * Whether the table's stream dispatcher delivers new callbacks (on AWS; not in the local runner),
     * and the table's shard counts (every cloud table's by default).
     */
    private readonly options: { readonly streamDelivery?: boolean; readonly shards?: ShardCounts } = {},
  ) {
    this.table = { db, tableName, shards: options.shards ?? SHARDS };
  }

  /** What a write that makes a callback due leaves for the stream dispatcher, if the table has one. */
  private get stream(): StreamOutbox | undefined {
    return this.options.streamDelivery ? STREAM_OUTBOX : undefined;
  }

  async createPayment(payment: Payment, queue?: QueueEntry): Promise<void> {
    const { state, details } = paymentItems(payment, this.table.shards);
    // The details first: a state item is never without them. A crash between the two leaves
    // details no state item points to, which nothing reads.
    await createItem(this.db, { TableName: this.tableName, Item: details });
    await createItem(this.db, {
        TableName: this.tableName,
        // Only an unpaid checkout expires; a merchant-initiated payment is kept from the start.
        // No empty maps of refunds and watched attempts: they are 21 bytes of every write of the
        // item, and the first refund (or watch) of a payment adds them (addInFlightMaps).
        Item: {
          ...state,
          ...(payment.checkout ? { [TTL_ATTRIBUTE]: epochSeconds(new Date(payment.checkout.expiresAt)) } : {}),
          ...(queue ? workEntry(payment.paymentId, queue, this.table.shards) : {}),
          ...(payment.transactions.length ? { ...outboxEntry(payment.paymentId, payment.createdAt, this.table.shards), sendLease: this.stream?.lease(payment.createdAt) } : {}),
        },
      });
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
    // The payment itself is read by key, consistently. An entry whose state item was never written
    // (a crash between the two writes of createPayment) is passed over.
    for (const paymentId of await this.idsByOrder(merchantKey, orderNumber, LATEST_ORDER_CANDIDATES)) {
      const payment = await this.findPayment(paymentId);
      if (payment) return payment;
    }
    return undefined;
  }

  async paymentsByOrder(merchantKey: string, orderNumber: string, limit: number): Promise<Payment[]> {
    return this.findPayments(await this.idsByOrder(merchantKey, orderNumber, limit));
  }

  /** The ids of a merchant's payments of one order number, newest first (the order index holds keys only). */
  private async idsByOrder(merchantKey: string, orderNumber: string, limit: number): Promise<string[]> {
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
    return (out.Items ?? []).map((i) => String(i.pk).slice('PAYMENT#'.length));
  }

  async apply(paymentId: string, transition: Transition): Promise<Applied> {
    // The answer to an intent leaves its callback to the stream, the intent's work entry its safety
    // net (transition-expression.ts): where the outbox or the entry is not as that needs, the write
    // is refused on those conditions alone and goes again in the plain shape.
    if (this.stream && mayNetCallback(transition.guard, transition.change)) {
      const netted = await this.write(paymentId, transition, true);
      if (netted.applied || !netted.state || netConditionsHold(netted.state, this.stream.netBefore(transition.change.set.updatedAt))) return netted.result;
    }
    return (await this.write(paymentId, transition, false)).result;
  }

  /** One conditional write of a transition; refused, the item as it was (read where the engine does not return it). */
  private async write(paymentId: string, { guard, change }: Transition, net: boolean): Promise<{ applied: boolean; result: Applied; state?: Record<string, unknown> }> {
    const update = new UpdateCommand({
      TableName: this.tableName,
      Key: key.payment(paymentId),
      ...transitionExpression(paymentId, guard, change, this.table.shards, this.stream, { net }),
      ReturnValues: 'ALL_NEW',
      // A refusal answers with the item as it is: no second read to decide what to do next.
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
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
      return { applied: true, result: { applied: true, payment: await this.joined(paymentId, out.Attributes ?? {}) } };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      const old = (e as { Item?: Record<string, NativeAttributeValue> }).Item;
      // An engine that does not return the item (the local one) costs a read instead.
      if (!old) {
        const read = await readPayment(this.db, this.tableName, paymentId, (id, d) => this.remember(id, d));
        return { applied: false, result: { applied: false, payment: read?.payment }, ...(read ? { state: read.state } : {}) };
      }
      const state = unmarshall(old as never);
      return { applied: false, result: { applied: false, payment: await this.joined(paymentId, state) }, state };
    }
  }

  private async addInFlightMaps(paymentId: string): Promise<void> {
    await conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: key.payment(paymentId),
      UpdateExpression: 'SET #r = if_not_exists(#r, :e), #w = if_not_exists(#w, :e)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#r': 'refunds', '#w': 'watching' },
      ExpressionAttributeValues: { ':e': {} },
    });
  }

  hurry(paymentId: string, queue: string, dueAt: Date): Promise<boolean> {
    const entry = workEntry(paymentId, { name: queue, dueAt: dueAt.toISOString() }, this.table.shards);
    return conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: key.payment(paymentId),
      UpdateExpression: 'SET workSk = :sk',
      // Only earlier, only in this queue: the work index entry is the whole change.
      ConditionExpression: 'attribute_exists(pk) AND workPk = :pk AND workSk > :sk',
      ExpressionAttributeValues: { ':pk': entry.workPk, ':sk': entry.workSk },
    });
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

  paymentsOfDay(query: DaySearch): Promise<{ payments: Payment[]; cursor?: string }> {
    return paymentsOfDay(this.table, query, (ids) => this.findPayments(ids));
  }

  countPaymentsOfDay(query: Omit<DaySearch, 'limit' | 'cursor'>): Promise<number> {
    return countPaymentsOfDay(this.table, query);
  }

  dueBatches(queue: string, until: Date, pageSize: number, part?: ShardPart): AsyncIterable<QueuedPayment[]> {
    return dueBatches(this.table, queue, until, pageSize, part);
  }

  due(queue: string, until: Date, limit: number): Promise<QueuedPayment[]> {
    return due(this.table, queue, until, limit);
  }
}

/** The stream's outbox: its lease, and how soon a work entry must be due to be a callback's safety net. */
const STREAM_OUTBOX: StreamOutbox = {
  lease: (at) => `${new Date(Date.parse(at) + STREAM_LEASE_MS).toISOString()}#${STREAM_LEASE_TAG}`,
  netBefore: (at) => new Date(Date.parse(at) + CALLBACK_NET_MAX_MS).toISOString(),
};

/**
 * How long after its answer a callback the stream never delivered may wait for the reconciler to
 * hand it to the relay (the intent's work entry, due a reconcile interval after the intent): a
 * work entry due later is no net (a challenge's, twenty minutes out), and the plain shape is written.
 */
export const CALLBACK_NET_MAX_MS = 5 * 60_000;

/** DynamoDB refuses a nested path whose parent map does not exist. */
const isMissingMapPath = (e: unknown): boolean =>
  (e as Error)?.name === 'ValidationException' && /document path/i.test((e as Error).message);

/** Details kept per store (they never change): a change's answer is a whole payment without reading them again. */
const DETAILS_CACHED = 512;

/** Newest entries of an order number read to find its latest payment (more than one only after a crash at creation). */
const LATEST_ORDER_CANDIDATES = 3;
