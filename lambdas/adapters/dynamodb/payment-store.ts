import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Payment, type Transaction } from '../../domain/payment';
import { TransitionRejected, type PaymentChange, type PaymentStore, type QueuedPayment, type TransitionGuard } from '../../ports/payments';
import { isConditionFailure } from './client';
import { GSI1, GSI2, OPERATION_IDS, QUEUE_INDEX, TTL_ATTRIBUTE, key, withoutStorageAttributes } from './keys';
import { decodeCursor, encodeCursor } from './cursor';

/** The outbox index entry of a payment whose callbacks are due from `at` on. */
export const outboxEntry = (paymentId: string, at: string) => ({ outboxPk: key.outbox, outboxSk: `${at}#${paymentId}` });

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
      gsi2pk: key.paymentsOfDay(payment.createdAt.slice(0, 10)),
      gsi2sk: `${payment.createdAt}#${payment.paymentId}`,
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
          ...(queue ? { queuePk: queue.name, queueSk: `${queue.dueAt}#${payment.paymentId}` } : {}),
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
        IndexName: GSI1,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.orderIndex(merchantKey, orderNumber) },
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    const item = out.Items?.[0];
    return item ? withoutStorageAttributes<Payment>(item) : undefined;
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
      sets.push(`${name('outboxPk')} = ${value(entry.outboxPk)}`, `${name('outboxSk')} = if_not_exists(${name('outboxSk')}, ${value(entry.outboxSk)})`);
    }
    if (change.sendCallback !== undefined) {
      // Behind the callbacks in order (callbacks.ts claims those first), and due now unless leased or waiting.
      const entry = outboxEntry(paymentId, change.set.updatedAt);
      sets.push(`${name('callbackResends')} = list_append(if_not_exists(${name('callbackResends')}, ${value([])}), ${value([change.sendCallback])})`);
      if (!appended.length) sets.push(`${name('outboxPk')} = ${value(entry.outboxPk)}`, `${name('outboxSk')} = if_not_exists(${name('outboxSk')}, ${value(entry.outboxSk)})`);
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
      sets.push(`${name('queuePk')} = ${value(change.queue.name)}`, `${name('queueSk')} = ${value(`${change.queue.dueAt}#${paymentId}`)}`);
    } else if (change.queue === null) {
      removes.push(name('queuePk'), name('queueSk'));
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
    const found: Payment[] = [];
    let keys: Record<string, unknown>[] = ids.map((id) => key.payment(id));
    // BatchGetItem may leave keys unprocessed under load; a bounded number of rounds picks them up.
    for (let round = 0; keys.length && round < 5; round++) {
      const out = await this.db.send(new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }));
      found.push(...(out.Responses?.[this.tableName] ?? []).map((i) => withoutStorageAttributes<Payment>(i)));
      keys = (out.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as Record<string, unknown>[];
    }
    const order = new Map(ids.map((id, i) => [id, i]));
    return found.sort((a, b) => (order.get(a.paymentId) ?? 0) - (order.get(b.paymentId) ?? 0));
  }

  async paymentsOfDay(day: string, limit: number, cursor?: string): Promise<{ payments: Payment[]; cursor?: string }> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: GSI2,
        KeyConditionExpression: 'gsi2pk = :pk',
        ExpressionAttributeValues: { ':pk': key.paymentsOfDay(day) },
        ScanIndexForward: false,
        Limit: limit,
        ExclusiveStartKey: cursor ? decodeCursor(cursor) : undefined,
      }),
    );
    return {
      payments: (out.Items ?? []).map((i) => withoutStorageAttributes<Payment>(i)),
      ...(out.LastEvaluatedKey ? { cursor: encodeCursor(out.LastEvaluatedKey) } : {}),
    };
  }

  async due(queue: string, until: Date, limit: number): Promise<QueuedPayment[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: QUEUE_INDEX,
        KeyConditionExpression: 'queuePk = :q AND queueSk <= :until',
        ExpressionAttributeValues: { ':q': queue, ':until': `${until.toISOString()}#~` },
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((i) => {
      const [dueAt = '', paymentId = ''] = String(i.queueSk).split('#');
      return { paymentId, dueAt };
    });
  }
}
