import { stamped, type PaymentChange, type TransitionGuard } from '../../domain/payment';
import { CALLBACK_NET, OPERATION_IDS, TTL_ATTRIBUTE, type ShardCounts } from './keys';
import { DETAIL_FIELDS, LINK_ENDS, outboxEntry, storedTransaction, workEntry } from './payment-items';

/** The parts of an UpdateCommand that carry one transition. */
export interface TransitionExpression {
  readonly UpdateExpression: string;
  readonly ConditionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
}

/** Where a stream dispatcher delivers new callbacks: what a write that makes one due leaves it. */
export interface StreamOutbox {
  /** The lease the dispatcher takes as it is (payment-items.ts STREAM_LEASE_TAG). */
  lease(at: string): string;
  /** The latest due time (ISO) a work entry may have to stay as the safety net of a callback made due at `at`. */
  netBefore(at: string): string;
}

/**
 * Whether a transition may leave its callback to the stream with the work entry in place as the
 * safety net (`net` of transitionExpression): the answer to an intent (an attempt, an operation, a
 * refund), which brings the payment to rest and appends what the merchant is told. The entry in
 * place is then the intent's, due a reconcile interval after it started.
 */
export function mayNetCallback(guard: TransitionGuard, change: PaymentChange): boolean {
  const answersIntent = typeof guard.inFlight === 'number' || (guard.operation !== undefined && guard.operation !== 'none') || guard.refundInFlight !== undefined;
  return answersIntent && change.queue === null && Boolean(change.append?.length) && change.sendCallback === undefined;
}

/**
 * What the extra conditions of a netted write (transitionExpression's `net`) say, as a predicate over
 * the state item as it was: nothing of the outbox in progress, and a work entry due before
 * `netBefore`. A refused netted write whose item passes this was refused by its guard.
 */
export function netConditionsHold(state: Record<string, unknown>, netBefore: string): boolean {
  return state.sendSk === undefined && state.sendLease === undefined && typeof state.workPk === 'string' && typeof state.workSk === 'string' && state.workSk < netBefore;
}

/**
 * A transition as one conditional update of a payment's state item: the guard becomes the
 * condition (what `guardHolds` says, clause for clause; the store contract suite checks the two
 * against each other), the change the update, with the store's own bookkeeping in the same write:
 * the callback outbox of appended transactions, the work queue entry, the TTL, the ids of operations
 * started. `stream`: the table's stream dispatcher delivers new callbacks (a lease is left for it).
 *
 * `net` (only where mayNetCallback): the callback is the stream's alone, the sending index not
 * written. The outbox's due time is set without its partition key (the sparse index takes no entry),
 * and the work entry the answer would remove stays, marked (CALLBACK_NET) as the callback's safety
 * net: the release of the delivered callback removes it (callback-store.ts); if the stream never
 * delivers, the reconciler comes to it, and its write hands the callback to the relay. So the index
 * writes of an answer and its delivery are two (the work entry's removal), not four (the work
 * entry's removal, the outbox's entry and its removal). Extra conditions hold it to the case it is
 * safe for: nothing of the outbox in progress, and a work entry due soon. Where they fail the write
 * is refused and the store writes the plain shape (PaymentStore.apply).
 *
 * Every other write on a stream's table that moves or removes the work entry sets the outbox's
 * partition key too (free for the index while no callback is due: it needs both keys), so a
 * callback the net was waiting on goes to the relay the moment the net goes.
 */
export function transitionExpression(
  paymentId: string,
  guard: TransitionGuard,
  change: PaymentChange,
  shards: ShardCounts,
  stream?: StreamOutbox,
  options: { readonly net?: boolean } = {},
): TransitionExpression {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  const adds: string[] = [];
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

  const conditions = conditionOf(guard, name, value);
  const net = Boolean(options.net && stream && mayNetCallback(guard, change));
  if (guard.newTransaction !== undefined) adds.push(`${name(OPERATION_IDS)} ${value(new Set([guard.newTransaction]))}`);

  for (const [attr, v] of Object.entries(change.set)) {
    if ((DETAIL_FIELDS as readonly string[]).includes(attr)) throw new Error(`${attr} is written once, with the payment`);
    if (v !== undefined) sets.push(`${name(attr)} = ${value(v)}`);
  }
  const appended = stamped(change);
  if (appended.length) {
    sets.push(`${name('transactions')} = list_append(if_not_exists(${name('transactions')}, ${value([])}), ${value(appended.map(storedTransaction))})`);
    // The outbox, in the same write: a committed transaction always has its callback due. A
    // delivery in progress (or a retry waiting) keeps its place, so callbacks stay in order.
    const entry = outboxEntry(paymentId, change.set.updatedAt, shards);
    if (net) {
      // The same clauses as netConditionsHold.
      sets.push(`${name('sendSk')} = ${value(entry.sendSk)}`, `${name(CALLBACK_NET)} = ${value(true)}`);
      removes.push(name('sendPk'));
      conditions.push(
        `attribute_not_exists(${name('sendSk')})`,
        `attribute_not_exists(${name('sendLease')})`,
        `attribute_exists(${name('workPk')})`,
        `${name('workSk')} < ${value(stream!.netBefore(change.set.updatedAt))}`,
      );
    } else sets.push(`${name('sendPk')} = ${value(entry.sendPk)}`, `${name('sendSk')} = if_not_exists(${name('sendSk')}, ${value(entry.sendSk)})`);
  }
  // The stream dispatcher's lease, unless a worker holds the payment (it delivers this one too).
  const lease = (appended.length || change.sendCallback !== undefined) && stream?.lease(change.set.updatedAt);
  if (lease) sets.push(`${name('sendLease')} = if_not_exists(${name('sendLease')}, ${value(lease)})`);
  if (change.sendCallback !== undefined) {
    // Behind the callbacks in order (callbacks.ts claims those first), and due now unless leased or waiting.
    const entry = outboxEntry(paymentId, change.set.updatedAt, shards);
    sets.push(`${name('callbackResends')} = list_append(if_not_exists(${name('callbackResends')}, ${value([])}), ${value([change.sendCallback])})`);
    if (!appended.length) sets.push(`${name('sendPk')} = ${value(entry.sendPk)}`, `${name('sendSk')} = if_not_exists(${name('sendSk')}, ${value(entry.sendSk)})`);
  }
  for (const [attr, k] of Object.entries(change.add ?? {})) {
    if (k !== undefined && k !== 0) sets.push(`${name(attr)} = if_not_exists(${name(attr)}, ${value(0)}) + ${value(k)}`);
  }
  // Entries of the maps of things in flight come and go by name (the maps exist from creation on).
  if (change.refund && 'put' in change.refund) sets.push(`${name('refunds')}.${name(change.refund.put[0])} = ${value(change.refund.put[1])}`);
  if (change.refund && 'delete' in change.refund) removes.push(`${name('refunds')}.${name(change.refund.delete)}`);
  if (change.watch && 'put' in change.watch) sets.push(`${name('watching')}.${name(String(change.watch.put.attempt))} = ${value(change.watch.put)}`);
  if (change.watch && 'delete' in change.watch) removes.push(`${name('watching')}.${name(String(change.watch.delete))}`);
  for (const attr of change.remove ?? []) removes.push(name(attr));
  if (change.queue) {
    const entry = workEntry(paymentId, change.queue, shards);
    sets.push(`${name('workPk')} = ${value(entry.workPk)}`, `${name('workSk')} = ${value(entry.workSk)}`);
  } else if (change.queue === null && !net) {
    removes.push(name('workPk'), name('workSk'));
  }
  if (change.queue !== undefined && !net) {
    // The work entry moves or goes: it is no callback's safety net any more, and a callback it was
    // one for goes to the relay (the outbox's partition key, where the write did not set it above).
    if (stream) removes.push(name(CALLBACK_NET));
    if (stream && !appended.length && change.sendCallback === undefined) sets.push(`${name('sendPk')} = ${value(outboxEntry(paymentId, change.set.updatedAt, shards).sendPk)}`);
  }
  if (change.keep) removes.push(name(TTL_ATTRIBUTE));

  return {
    UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '', adds.length ? `ADD ${adds.join(', ')}` : ''].join(' ').trim(),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
  };
}

/** The guard as condition clauses over the state item, in the order guardHolds reads them. */
function conditionOf(guard: TransitionGuard, name: (attr: string) => string, value: (v: unknown) => string): string[] {
  const conditions: string[] = ['attribute_exists(pk)'];
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
  if (guard.chargedBackIs !== undefined) {
    conditions.push(guard.chargedBackIs === 0 ? absentOr('chargedBackMinor', `= ${value(0)}`) : `${name('chargedBackMinor')} = ${value(guard.chargedBackIs)}`);
  }
  if (guard.operation === 'none') conditions.push(`attribute_not_exists(${name('operation')})`);
  else if (guard.operation !== undefined) conditions.push(`${name('operation')}.${name('transId')} = ${value(guard.operation)}`);
  if (guard.refundInFlight !== undefined) conditions.push(`attribute_exists(${name('refunds')}.${name(guard.refundInFlight)})`);
  if (guard.refundsInFlightCount !== undefined) conditions.push(`size(${name('refunds')}) = ${value(guard.refundsInFlightCount)}`);
  if (guard.noRefundsInFlight) conditions.push(`(attribute_not_exists(${name('refunds')}) OR size(${name('refunds')}) = ${value(0)})`);
  if (guard.watching !== undefined) conditions.push(`attribute_exists(${name('watching')}.${name(String(guard.watching))})`);
  if (guard.newTransaction !== undefined) conditions.push(`NOT contains(${name(OPERATION_IDS)}, ${value(guard.newTransaction)})`);
  return conditions;
}
