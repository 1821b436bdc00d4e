import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HEALTHY_ENDPOINT, type EndpointHealth } from '../../domain/callback';
import type { Payment } from '../../domain/payment';
import type { CallbackClaim, CallbackRecord, CallbackStore, ReleaseResult } from '../../ports/callbacks';
import { isConditionFailure } from './client';
import { GSI1, OUTBOX_INDEX, key, withoutStorageAttributes } from './keys';
import { outboxEntry } from './payment-store';
import { decodeCursor, encodeCursor } from './cursor';

const RECORD_STORAGE = ['pk', 'sk', 'kind', 'gsi1pk', 'gsi1sk'] as const;

/** The version an endpoint's health was read at, kept out of the domain type. */
type VersionedHealth = EndpointHealth & { readonly version?: number };

const urlDigest = (url: string): string => createHash('sha256').update(url).digest('hex');

function toRecord(item: Record<string, unknown>): CallbackRecord {
  const copy: Record<string, unknown> = { ...item };
  for (const a of RECORD_STORAGE) delete copy[a];
  return copy as unknown as CallbackRecord;
}

/**
 * The callback outbox lives on the payment item (see payment-store.ts): `callbacksDone` counts the
 * transactions whose callback is finished, `callbackResends` lists older ones queued again, and the
 * sparse `outbox` index holds the payment while any is due. A worker leases a payment by moving its
 * outbox entry to the lease's end, so no two workers deliver one payment's callbacks at once and
 * they go out in order. Delivery records are items beside the payment (`CALLBACK#<index>`).
 */
export class DynamoCallbackStore implements CallbackStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async due(until: Date, limit: number): Promise<string[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: OUTBOX_INDEX,
        KeyConditionExpression: 'outboxPk = :pk AND outboxSk <= :until',
        ExpressionAttributeValues: { ':pk': key.outbox, ':until': `${until.toISOString()}#~` },
        Limit: limit,
      }),
    );
    return [...new Set((out.Items ?? []).map((i) => String(i.outboxSk).split('#')[1] ?? ''))].filter(Boolean);
  }

  async claim(paymentId: string, now: Date, leaseUntil: Date): Promise<CallbackClaim | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.payment(paymentId), ConsistentRead: true }));
    const item = out.Item;
    if (!item || typeof item.outboxSk !== 'string') return undefined;
    const seen = item.outboxSk;
    if (seen.split('#')[0]! > now.toISOString()) return undefined;
    const payment = withoutStorageAttributes<Payment>(item);
    const done = Number(item.callbacksDone ?? 0);
    const resends = (item.callbackResends ?? []) as number[];

    let index: number;
    let resend = false;
    if (done < payment.transactions.length) index = done;
    else if (resends.length) [index, resend] = [resends[0]!, true];
    else {
      await this.leaveOutbox(paymentId, seen, done);
      return undefined;
    }

    const lease = `${outboxEntry(paymentId, leaseUntil.toISOString()).outboxSk}#${randomBytes(4).toString('hex')}`;
    if (!(await this.update(key.payment(paymentId), { set: ['outboxSk = :lease'], conditions: ['outboxSk = :seen'], values: { ':lease': lease, ':seen': seen } }))) return undefined;
    const record = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.callback(paymentId, index), ConsistentRead: true }));
    return { payment, index, resend, lease, ...(record.Item ? { record: toRecord(record.Item) } : {}) };
  }

  /** Nothing left: the payment leaves the outbox, unless a transaction or resend arrived meanwhile. */
  private async leaveOutbox(paymentId: string, seen: string, done: number): Promise<void> {
    await this.update(key.payment(paymentId), {
      set: [],
      remove: ['outboxPk', 'outboxSk'],
      conditions: ['outboxSk = :seen', 'size(#tx) = :done', '(attribute_not_exists(callbackResends) OR size(callbackResends) = :zero)'],
      names: { '#tx': 'transactions' },
      values: { ':seen': seen, ':done': done, ':zero': 0 },
    });
  }

  async release(claim: CallbackClaim, outcome: { readonly done: boolean; readonly dueAt: Date }): Promise<ReleaseResult> {
    const { paymentId } = claim.payment;
    const lease = { condition: 'outboxSk = :lease', values: { ':lease': claim.lease } };
    const due = { ':due': outboxEntry(paymentId, outcome.dueAt.toISOString()).outboxSk };
    const released = (ok: boolean): ReleaseResult => (ok ? 'released' : 'lost');
    if (!outcome.done) return released(await this.update(key.payment(paymentId), { set: ['outboxSk = :due'], conditions: [lease.condition], values: { ...lease.values, ...due } }));

    // Move past this callback: the next in order, or the head of the resend list.
    const advance = claim.resend
      ? { set: [], remove: ['callbackResends[0]'], condition: 'callbackResends[0] = :index', values: { ':index': claim.index } }
      : claim.index === 0
        ? { set: ['callbacksDone = :next'], remove: [], condition: 'attribute_not_exists(callbacksDone)', values: { ':next': 1 } }
        : { set: ['callbacksDone = :next'], remove: [], condition: 'callbacksDone = :index', values: { ':next': claim.index + 1, ':index': claim.index } };
    // Most often this was the last one: leave the outbox in the same write, if nothing came meanwhile.
    const nothingLeft = claim.resend
      ? { condition: 'size(#tx) = :length AND size(callbackResends) = :one', values: { ':length': claim.payment.transactions.length, ':one': 1 } }
      : { condition: 'size(#tx) = :length AND (attribute_not_exists(callbackResends) OR size(callbackResends) = :zero)', values: { ':length': claim.index + 1, ':zero': 0 } };
    const left = await this.update(key.payment(paymentId), {
      set: advance.set,
      remove: [...advance.remove, 'outboxPk', 'outboxSk'],
      conditions: [lease.condition, advance.condition, nothingLeft.condition],
      values: { ...lease.values, ...advance.values, ...nothingLeft.values },
      names: { '#tx': 'transactions' },
    });
    if (left) return 'left-outbox';
    return released(await this.update(key.payment(paymentId), {
      set: [...advance.set, 'outboxSk = :due'],
      remove: advance.remove,
      conditions: [lease.condition, advance.condition],
      values: { ...lease.values, ...advance.values, ...due },
    }));
  }

  /** One conditional UpdateItem; false when its condition does not hold. */
  private async update(
    itemKey: Record<string, string>,
    u: { set: string[]; remove?: string[]; conditions: string[]; values: Record<string, unknown>; names?: Record<string, string> },
  ): Promise<boolean> {
    const expression = [u.set.length ? `SET ${u.set.join(', ')}` : '', u.remove?.length ? `REMOVE ${u.remove.join(', ')}` : ''].join(' ').trim();
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: itemKey,
          UpdateExpression: expression,
          ConditionExpression: u.conditions.join(' AND '),
          ExpressionAttributeNames: u.names,
          ExpressionAttributeValues: u.values,
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  async saveRecord(record: CallbackRecord): Promise<void> {
    const item: Record<string, unknown> = { ...key.callback(record.paymentId, record.index), kind: 'callback', ...record };
    if (record.state === 'dead' && record.deadAt) {
      item.gsi1pk = key.deadCallbacks(record.merchantKey);
      item.gsi1sk = `${record.deadAt}#${record.paymentId}#${record.index}`;
    }
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: item }));
  }

  async records(paymentId: string): Promise<CallbackRecord[]> {
    const records: CallbackRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': key.payment(paymentId).pk, ':prefix': key.callbackPrefix },
          ExclusiveStartKey: start,
        }),
      );
      records.push(...(out.Items ?? []).map(toRecord));
      start = out.LastEvaluatedKey;
    } while (start);
    return records;
  }

  async dead(merchantKey: string, limit: number, cursor?: string): Promise<{ records: CallbackRecord[]; cursor?: string }> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: GSI1,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.deadCallbacks(merchantKey) },
        Limit: limit,
        ExclusiveStartKey: cursor ? decodeCursor(cursor) : undefined,
      }),
    );
    return {
      records: (out.Items ?? []).map(toRecord),
      ...(out.LastEvaluatedKey ? { cursor: encodeCursor(out.LastEvaluatedKey) } : {}),
    };
  }

  async requestResend(paymentId: string, index: number, at: Date): Promise<boolean> {
    const entry = outboxEntry(paymentId, at.toISOString());
    return this.update(key.payment(paymentId), {
      set: ['callbackResends = list_append(if_not_exists(callbackResends, :empty), :index)', 'outboxPk = :pk', 'outboxSk = if_not_exists(outboxSk, :sk)'],
      // Only a callback already past the in-order stream, and not queued twice.
      conditions: ['attribute_exists(pk)', 'callbacksDone > :i', 'NOT contains(callbackResends, :i)'],
      values: { ':empty': [], ':index': [index], ':i': index, ':pk': entry.outboxPk, ':sk': entry.outboxSk },
    });
  }

  async markResendQueued(seen: CallbackRecord, at: Date): Promise<boolean> {
    return this.update(key.callback(seen.paymentId, seen.index), {
      set: ['#state = :pending', 'nextAttemptAt = :at', 'roundFailures = :zero', 'updatedAt = :at'],
      remove: ['roundStartedAt', 'deadAt', 'deliveredAt', 'gsi1pk', 'gsi1sk'],
      conditions: ['updatedAt = :seen'],
      names: { '#state': 'state' },
      values: { ':pending': 'pending', ':at': at.toISOString(), ':zero': 0, ':seen': seen.updatedAt },
    });
  }

  async endpointHealth(url: string): Promise<EndpointHealth> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.endpoint(urlDigest(url)), ConsistentRead: true }));
    if (!out.Item) return HEALTHY_ENDPOINT;
    const health: VersionedHealth = {
      timeouts: (out.Item.timeouts ?? []) as string[],
      ...(typeof out.Item.blockedUntil === 'string' ? { blockedUntil: out.Item.blockedUntil } : {}),
      version: Number(out.Item.version ?? 0),
    };
    return health;
  }

  async saveEndpointHealth(url: string, seen: EndpointHealth, next: EndpointHealth): Promise<boolean> {
    const version = (seen as VersionedHealth).version;
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key.endpoint(urlDigest(url)), kind: 'endpoint', url, timeouts: next.timeouts, ...(next.blockedUntil ? { blockedUntil: next.blockedUntil } : {}), version: (version ?? 0) + 1 },
          ConditionExpression: version === undefined ? 'attribute_not_exists(pk)' : 'version = :v',
          ExpressionAttributeValues: version === undefined ? undefined : { ':v': version },
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }
}
