import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { HEALTHY_ENDPOINT, type EndpointHealth } from '../../domain/callback';
import type { Payment } from '../../domain/payment';
import type { CallbackClaim, CallbackRecord, CallbackStore, DeliveryAttempt, DueCallback, ReleaseResult } from '../../ports/callbacks';
import { CALLBACK_NET, OUTBOX_INDEX, SHARDS, key, type ShardCounts } from './keys';
import { STREAM_LEASE_TAG, joinedPayment, outboxEntry, shardsOf } from './payment-store';
import type { ShardPart } from '../../ports/payments';
import { inParallel } from '../../domain/parallel';
import { decodeCursor, encodeCursor } from './cursor';
import { duePage, isConditionFailure, lookupItems, partitionItems } from './client';

const RECORD_STORAGE = ['pk', 'sk', 'kind', 'gsi1pk', 'gsi1sk'] as const;
/** How many shard queries run at once when the relay reads the outbox. */
const SHARD_READ_CONCURRENCY = 8;

/** The version an endpoint's health was read at, kept out of the domain type. */
type VersionedHealth = EndpointHealth & { readonly version?: number };

const urlDigest = (url: string): string => createHash('sha256').update(url).digest('hex');

/**
 * Callbacks delivered at their first attempt, on the payment's state item: `<index>|<at>|<latency
 * ms>|<HTTP status>|<url>` each, a list the release appends to. A record item is written only for a
 * callback that needed more (a retry, a death, a skip, a resend), and wins over the summary. The URL
 * is left empty where it is the one of the entry before (a merchant's callbacks mostly go to one
 * URL): the state item is billed by the KB on every write, and a URL is some 40 bytes of it.
 */
const SUMMARIES = 'deliveries';

const summaryOf = (index: number, a: DeliveryAttempt, urlBefore: string | undefined, transactionAt: string | undefined): string =>
  `${index}|${atAfter(a.at, transactionAt)}|${a.latencyMs}|${a.httpStatus ?? ''}|${a.url === urlBefore ? '' : a.url}`;

/**
 * When the callback went out, as milliseconds after its transaction (`+<ms>`, a few bytes instead of
 * a 24-character time), or the time itself where it is not after it (a clock that stepped back).
 */
function atAfter(at: string, transactionAt: string | undefined): string {
  const ms = transactionAt === undefined ? NaN : Date.parse(at) - Date.parse(transactionAt);
  return Number.isSafeInteger(ms) && ms >= 0 ? `+${ms}` : at;
}

/** A summary's time as an ISO instant (entries of the layout before hold it as it is). */
const atOf = (stored: string, transactionAt: string): string => (stored.startsWith('+') ? new Date(Date.parse(transactionAt) + Number(stored.slice(1))).toISOString() : stored);

/** The URL of the last entry of a state item's delivery summary. */
const lastSummaryUrl = (state: Record<string, unknown>): string | undefined => {
  let url: string | undefined;
  for (const line of (state[SUMMARIES] ?? []) as string[]) url = line.split('|').slice(4).join('|') || url;
  return url;
};

/** The records the payment's delivery summary stands for, by index. */
function summarized(state: Record<string, unknown>, payment: Payment): Map<number, CallbackRecord> {
  const out = new Map<number, CallbackRecord>();
  let urlBefore = '';
  for (const line of (state[SUMMARIES] ?? []) as string[]) {
    const [index, stored = '', latency, status, ...rest] = line.split('|');
    const url = rest.join('|') || urlBefore;
    urlBefore = url;
    const i = Number(index);
    const tx = payment.transactions[i];
    if (!tx) continue;
    const at = atOf(stored, tx.at);
    const attempt: DeliveryAttempt = { at, url, latencyMs: Number(latency), ...(status ? { httpStatus: Number(status) } : {}) };
    out.set(i, {
      paymentId: payment.paymentId,
      merchantKey: payment.merchantKey,
      index: i,
      transId: tx.transId,
      type: tx.type,
      status: tx.status,
      state: 'delivered',
      attemptCount: 1,
      attempts: [attempt],
      roundFailures: 0,
      deliveredAt: at,
      updatedAt: at,
      summary: true,
    });
  }
  return out;
}

function toRecord(item: Record<string, unknown>): CallbackRecord {
  const copy: Record<string, unknown> = { ...item };
  for (const a of RECORD_STORAGE) delete copy[a];
  return copy as unknown as CallbackRecord;
}

/**
 * The callback outbox lives on the payment item (see payment-store.ts): `callbacksDone` counts the
 * transactions whose callback is finished, `callbackResends` lists older ones queued again, and the
 * sparse, sharded `sending` index holds the payment while any is due (`sendSk` its due time). A
 * worker leases a payment by a conditional write of `sendLease` (its end and a random tag), an
 * attribute no index carries, so the lease costs the table one write and the index none; no two
 * workers deliver one payment's callbacks at once and they go out in order. Delivery records are
 * items beside the payment (`CALLBACK#<index>`).
 */
export class DynamoCallbackStore implements CallbackStore {
  /** The URL of the last delivery summary entry each claim found (its release may leave its own empty). */
  private readonly summaryUrls = new WeakMap<CallbackClaim, string>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    /** The table's shard counts (every cloud table's by default). */
    private readonly shards: ShardCounts = SHARDS,
  ) {}

  async due(until: Date, limit: number): Promise<string[]> {
    return (await this.dueEntries(until, limit)).map((e) => e.paymentId);
  }

  async dueEntries(until: Date, limit: number, part?: ShardPart): Promise<DueCallback[]> {
    const shards = shardsOf(this.shards.outbox, part);
    // Every shard, up to the limit each; the longest waiting across them first.
    const found = await inParallel(shards, SHARD_READ_CONCURRENCY, async (shard) => {
      const { items } = await duePage(this.db, this.tableName, { name: OUTBOX_INDEX, pk: 'sendPk', sk: 'sendSk' }, key.outbox(shard), until, { limit });
      return items.map((i) => ({ sk: String(i.sendSk), pk: String(i.pk), merchantKey: typeof i.merchantKey === 'string' ? i.merchantKey : undefined }));
    });
    const entries = new Map<string, DueCallback>();
    for (const { sk, pk, merchantKey } of found.flat().sort((a, b) => a.sk.localeCompare(b.sk))) {
      // The sort key is the due time (`<due>#<id>` in entries of the layout before it).
      const [dueAt, idInKey] = sk.split('#');
      const paymentId = idInKey ?? pk.slice('PAYMENT#'.length);
      if (paymentId && !entries.has(paymentId)) entries.set(paymentId, { paymentId, ...(merchantKey ? { merchantKey } : {}), ...(dueAt ? { dueAt } : {}) });
    }
    return [...entries.values()].slice(0, limit);
  }

  async claim(
    paymentId: string,
    now: Date,
    leaseUntil: Date,
    options: { readonly fromStream?: boolean; readonly keptLease?: { readonly lease: string; readonly until: Date } } = {},
  ): Promise<CallbackClaim | undefined> {
    // The payment's partition in one consistent query: its state, its details and its delivery records.
    const items = await this.partition(paymentId);
    const item = items.find((i) => i.sk === key.payment(paymentId).sk);
    if (!item || typeof item.sendSk !== 'string') return undefined;
    const seen = item.sendSk;
    // Another worker's lease that has not ended: its delivery is in progress. The lease the write
    // that made a callback due left for the stream dispatcher is the dispatcher's to take, as it is.
    const held = typeof item.sendLease === 'string' ? item.sendLease : undefined;
    const live = held !== undefined && held.split('#')[0]! > now.toISOString();
    const forStream = live && held.endsWith(`#${STREAM_LEASE_TAG}`);
    if (seen.split('#')[0]! > now.toISOString()) {
      // Not due yet (a retry waits): a lease a write left the dispatcher meanwhile would keep the
      // relay off past the retry's time, for nothing. The dispatcher gives it back, the payment in
      // the outbox (the relay's from there).
      if (forStream && options.fromStream) {
        await this.update(key.payment(paymentId), {
          set: ['sendPk = :pk'],
          remove: ['sendLease'],
          conditions: ['sendSk = :seen', 'sendLease = :held'],
          values: { ':pk': outboxEntry(paymentId, seen, this.shards).sendPk, ':seen': seen, ':held': held },
        });
      }
      return undefined;
    }
    // This worker's own lease, kept from its previous callback of the payment, while it lasts long enough.
    const kept = live && options.keptLease?.lease === held && held.split('#')[0]! >= options.keptLease.until.toISOString();
    if (live && !(forStream && options.fromStream) && !kept) return undefined;
    const payment = joinedPayment(item, items.find((i) => i.sk === key.paymentDetails(paymentId).sk));
    if (!payment) return undefined;
    const done = Number(item.callbacksDone ?? 0);
    const resends = (item.callbackResends ?? []) as number[];

    let index: number;
    let resend = false;
    if (done < payment.transactions.length) index = done;
    else if (resends.length) [index, resend] = [resends[0]!, true];
    else {
      await this.leaveOutbox(paymentId, seen, held, done);
      return undefined;
    }

    const recordItem = items.find((i) => i.sk === key.callback(paymentId, index).sk);
    const record = recordItem ? toRecord(recordItem) : summarized(item, payment).get(index);
    const claimed = { payment, index, resend, ...(record ? { record } : {}), ...(item[CALLBACK_NET] === true ? { net: true } : {}) };
    const remembered = (claim: CallbackClaim): CallbackClaim => {
      const url = lastSummaryUrl(item);
      if (url !== undefined) this.summaryUrls.set(claim, url);
      return claim;
    };
    // The stream's lease, or this worker's kept one, is taken as it is: no write. Its release is conditional on it, as any.
    if ((forStream && options.fromStream) || kept) return remembered({ ...claimed, lease: held! });
    const lease = `${leaseUntil.toISOString()}#${randomBytes(4).toString('hex')}`;
    // Conditioned on what decided the index too: a release that leaves more waiting keeps the entry
    // (and its sort key) where it was, so after another worker's claim and release the entry and
    // the lease read as before while the count of callbacks done has moved on. A claim from such a
    // read would post a callback already delivered and then fail to release, holding the lease.
    const position = resend
      ? { condition: 'callbackResends[0] = :index', values: { ':index': index } }
      : done === 0
        ? { condition: '(attribute_not_exists(callbacksDone) OR callbacksDone = :done)', values: { ':done': 0 } }
        : { condition: 'callbacksDone = :done', values: { ':done': done } };
    const taken = await this.update(key.payment(paymentId), {
      set: ['sendLease = :lease'],
      conditions: ['sendSk = :seen', held ? 'sendLease = :held' : 'attribute_not_exists(sendLease)', position.condition],
      values: { ':lease': lease, ':seen': seen, ...(held ? { ':held': held } : {}), ...position.values },
    });
    // A lease whose answer was lost (the SDK tried again and found it taken) is this worker's own: its random part says so.
    return taken || (await this.leaseOf(paymentId)) === lease ? remembered({ ...claimed, lease }) : undefined;
  }

  /** The lease the payment's callbacks are under now (a consistent read of that one attribute, by the partition query the workers may make). */
  private async leaseOf(paymentId: string): Promise<unknown> {
    const { pk, sk } = key.payment(paymentId);
    const out = await this.db.send(
      new QueryCommand({ TableName: this.tableName, KeyConditionExpression: 'pk = :pk AND sk = :sk', ExpressionAttributeValues: { ':pk': pk, ':sk': sk }, ProjectionExpression: 'sendLease', ConsistentRead: true }),
    );
    return out.Items?.[0]?.sendLease;
  }

  /** Every item of a payment's partition, consistently: state, details, delivery records. */
  private partition(paymentId: string): Promise<Record<string, unknown>[]> {
    return partitionItems(this.db, this.tableName, key.payment(paymentId).pk);
  }

  /** Nothing left: the payment leaves the outbox, unless a transaction or resend arrived meanwhile. */
  private async leaveOutbox(paymentId: string, seen: string, held: string | undefined, done: number): Promise<void> {
    await this.update(key.payment(paymentId), {
      set: [],
      remove: ['sendPk', 'sendSk', 'sendLease'],
      conditions: ['sendSk = :seen', held ? 'sendLease = :held' : 'attribute_not_exists(sendLease)', 'size(#tx) = :done', '(attribute_not_exists(callbackResends) OR size(callbackResends) = :zero)'],
      names: { '#tx': 'transactions' },
      values: { ':seen': seen, ':done': done, ':zero': 0, ...(held ? { ':held': held } : {}) },
    });
  }

  async release(
    claim: CallbackClaim,
    outcome: { readonly done: boolean; readonly dueAt: Date; readonly delivered?: DeliveryAttempt },
    options: { readonly keepLease?: boolean } = {},
  ): Promise<ReleaseResult> {
    const { paymentId } = claim.payment;
    const summary = outcome.delivered
      ? { set: [`${SUMMARIES} = list_append(if_not_exists(${SUMMARIES}, :noSummaries), :summary)`], values: { ':noSummaries': [], ':summary': [summaryOf(claim.index, outcome.delivered, this.summaryUrls.get(claim), claim.payment.transactions[claim.index]?.at)] } }
      : { set: [], values: {} };
    const lease = { condition: 'sendLease = :lease', values: { ':lease': claim.lease } };
    const entry = outboxEntry(paymentId, outcome.dueAt.toISOString(), this.shards);
    const due = { ':due': entry.sendSk };
    // A callback the stream dispatcher had alone (no outbox partition) is the relay's from here on.
    const toRelay = { set: ['sendPk = :pk'], values: { ':pk': entry.sendPk } };
    const released = (ok: boolean): ReleaseResult => (ok ? 'released' : 'lost');
    // Not done: due again later (a retry), the lease given back.
    if (!outcome.done) {
      return released(await this.update(key.payment(paymentId), { set: ['sendSk = :due', ...toRelay.set], remove: ['sendLease'], conditions: [lease.condition], values: { ...lease.values, ...due, ...toRelay.values } }));
    }

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
    // Known at the claim already: a later transaction of the payment is waiting (transactions only
    // grow), so this release cannot leave the outbox and a refused attempt to would cost a write.
    const moreKnown = !claim.resend && claim.payment.transactions.length > claim.index + 1;
    const leave = (net: boolean) =>
      this.update(key.payment(paymentId), {
        set: [...advance.set, ...summary.set],
        // The work entry that was only this callback's safety net goes with it, if it still is (a
        // write that moved the entry took the mark away).
        remove: [...advance.remove, 'sendPk', 'sendSk', 'sendLease', ...(net ? ['workPk', 'workSk', CALLBACK_NET] : [])],
        conditions: [lease.condition, advance.condition, nothingLeft.condition, ...(net ? [`${CALLBACK_NET} = :net`] : [])],
        values: { ...lease.values, ...advance.values, ...nothingLeft.values, ...summary.values, ...(net ? { ':net': true } : {}) },
        names: { '#tx': 'transactions' },
      });
    const left = !moreKnown && ((claim.net === true && (await leave(true))) || (await leave(false)));
    if (left) return 'left-outbox';
    // More is waiting: the entry stays where it is (already due), the lease given back (or kept for
    // the next one); given back, the rest is the relay's.
    const handOver = options.keepLease ? { set: [], values: {} } : toRelay;
    return released(await this.update(key.payment(paymentId), {
      set: [...advance.set, ...summary.set, ...handOver.set],
      remove: [...advance.remove, ...(options.keepLease ? [] : ['sendLease'])],
      conditions: [lease.condition, advance.condition],
      values: { ...lease.values, ...advance.values, ...summary.values, ...handOver.values },
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
    const { summary: _summary, ...stored } = record;
    const item: Record<string, unknown> = { ...key.callback(record.paymentId, record.index), kind: 'callback', ...stored };
    if (record.state === 'dead' && record.deadAt) {
      item.gsi1pk = key.deadCallbacks(record.merchantKey);
      item.gsi1sk = `${record.deadAt}#${record.paymentId}#${record.index}`;
    }
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: item }));
  }

  async records(paymentId: string): Promise<CallbackRecord[]> {
    const items = await this.partition(paymentId);
    const records = new Map(items.filter((i) => String(i.sk).startsWith(key.callbackPrefix)).map((i) => [Number(i.index), toRecord(i)]));
    const state = items.find((i) => i.sk === key.payment(paymentId).sk);
    const payment = state ? joinedPayment(state, items.find((i) => i.sk === key.paymentDetails(paymentId).sk)) : undefined;
    if (state && payment) for (const [index, r] of summarized(state, payment)) if (!records.has(index)) records.set(index, r);
    return [...records.values()].sort((a, b) => a.index - b.index);
  }

  async dead(merchantKey: string, limit: number, cursor?: string): Promise<{ records: CallbackRecord[]; cursor?: string }> {
    const { items, last } = await lookupItems(this.db, this.tableName, key.deadCallbacks(merchantKey), { limit, ...(cursor ? { after: decodeCursor(cursor) } : {}) });
    return {
      // The index holds keys only; a record still dead when read is shown.
      records: items.map(toRecord).filter((r) => r.state === 'dead'),
      ...(last ? { cursor: encodeCursor(last) } : {}),
    };
  }

  async requestResend(paymentId: string, index: number, at: Date): Promise<boolean> {
    const entry = outboxEntry(paymentId, at.toISOString(), this.shards);
    return this.update(key.payment(paymentId), {
      set: ['callbackResends = list_append(if_not_exists(callbackResends, :empty), :index)', 'sendPk = :pk', 'sendSk = if_not_exists(sendSk, :sk)'],
      // Only a callback already past the in-order stream, and not queued twice.
      conditions: ['attribute_exists(pk)', 'callbacksDone > :i', 'NOT contains(callbackResends, :i)'],
      values: { ':empty': [], ':index': [index], ':i': index, ':pk': entry.sendPk, ':sk': entry.sendSk },
    });
  }

  async markResendQueued(seen: CallbackRecord, at: Date): Promise<boolean> {
    if (seen.summary) {
      // Delivered at its first attempt, known from the summary: its record item starts here.
      const { summary: _summary, deliveredAt: _delivered, ...rest } = seen;
      try {
        await this.db.send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...key.callback(seen.paymentId, seen.index), kind: 'callback', ...rest, state: 'pending', nextAttemptAt: at.toISOString(), roundFailures: 0, updatedAt: at.toISOString() },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return true;
      } catch (e) {
        if (isConditionFailure(e)) return false;
        throw e;
      }
    }
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
      ...(typeof out.Item.slowUntil === 'string' ? { slowUntil: out.Item.slowUntil } : {}),
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
          Item: { ...key.endpoint(urlDigest(url)), kind: 'endpoint', url, timeouts: next.timeouts, ...(next.blockedUntil ? { blockedUntil: next.blockedUntil } : {}), ...(next.slowUntil ? { slowUntil: next.slowUntil } : {}), version: (version ?? 0) + 1 },
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
