import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Payment, type Transaction } from '../../domain/payment';
import { TransitionRejected, type PaymentChange, type PaymentStore, type QueuedPayment, type TransitionGuard } from '../../ports/payments';
import { isConditionFailure } from './client';
import { GSI1, GSI2, QUEUE_INDEX, TTL_ATTRIBUTE, key, withoutStorageAttributes } from './keys';
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
    const name = (attr: string) => {
      const k = `#${attr}`;
      names[k] = attr;
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
    if (guard.voidableAt) conditions.push(`${name('voidableUntil')} > ${value(guard.voidableAt.toISOString())}`);
    if (guard.refundedAtMost !== undefined) {
      conditions.push(`(attribute_not_exists(${name('refundedMinor')}) OR ${name('refundedMinor')} <= ${value(guard.refundedAtMost)})`);
    }
    if (guard.refundedIs !== undefined) {
      conditions.push(guard.refundedIs === 0
        ? `(attribute_not_exists(${name('refundedMinor')}) OR ${name('refundedMinor')} = ${value(0)})`
        : `${name('refundedMinor')} = ${value(guard.refundedIs)}`);
    }
    if (guard.capturing === 'none') conditions.push(`attribute_not_exists(${name('capturing')})`);
    else if (guard.capturing !== undefined) conditions.push(`${name('capturing')}.${name('transId')} = ${value(guard.capturing)}`);

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
    for (const attr of change.remove ?? []) removes.push(name(attr));
    if (change.queue) {
      sets.push(`${name('queuePk')} = ${value(change.queue.name)}`, `${name('queueSk')} = ${value(`${change.queue.dueAt}#${paymentId}`)}`);
    } else if (change.queue === null) {
      removes.push(name('queuePk'), name('queueSk'));
    }
    if (change.keep) removes.push(name(TTL_ATTRIBUTE));

    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.payment(paymentId),
          UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''].join(' ').trim(),
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return withoutStorageAttributes<Payment>(out.Attributes ?? {});
    } catch (e) {
      if (isConditionFailure(e)) throw new TransitionRejected(`transition of ${paymentId} rejected`);
      throw e;
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
