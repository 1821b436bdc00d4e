import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Payment, QueueEntry, Transaction } from '../../domain/payment';
import { key, outboxPartitionOf, searchPartitionOf, workPartitionOf, withoutStorageAttributes, type ShardCounts } from './keys';

/**
 * The item codec of a payment: its state item and its details item, the index entries they carry,
 * and the reading of both layouts (one whole item before the split, two after).
 */

/**
 * The outbox (sending index) entry of a payment whose callbacks are due from `at` on, in the
 * payment's shard. The sort key is the due time alone: an index entry carries the table's key, so
 * the id need not ride in the item (entries of the layout before it end in `#<id>`, read alike).
 */
export const outboxEntry = (paymentId: string, at: string, shards: ShardCounts) => ({ sendPk: outboxPartitionOf(paymentId, shards), sendSk: at });

/**
 * The work index entry of a payment due in a queue (reconcile, capture) at `dueAt`, in the payment's
 * shard. The sort key is the due time alone, as the outbox's: the entry carries the table's key (the
 * id is 37 bytes of every write of the state item; entries of the layout before end in `#<id>`, read alike).
 */
export const workEntry = (paymentId: string, queue: QueueEntry, shards: ShardCounts) => ({
  workPk: workPartitionOf(queue.name, paymentId, shards),
  workSk: queue.dueAt,
});

/**
 * The tag of the lease a write that makes a callback due leaves for the table's stream dispatcher
 * (where there is one: `streamDelivery`), which takes it as it is: a delivery then costs no lease
 * write. The relay leaves such a lease alone until it ends, then takes the payment over.
 */
export const STREAM_LEASE_TAG = 'stream';
/** How long the stream dispatcher has to take its lease before the relay may: a callback's timeout and margins. */
export const STREAM_LEASE_MS = 60_000;

/**
 * The fields of a payment written once, with it, and never changed: what the merchant asked (the
 * order, the link's settings, custom data, what a recurring request asked for). They live in the
 * payment's details item, apart from the state every change rewrites (docs/architecture.md, "Keys
 * and heat"): a write is billed by the size of the item it changes, one unit per KB.
 */
export const DETAIL_FIELDS = ['order', 'checkout', 'customData', 'recurringInit', 'scheduleId', 'recurringChainToken', 'requestFingerprint'] as const;
/** The link's expiry on the state item, in epoch milliseconds (a number is smaller): the attempt's condition reads it there. */
export const LINK_ENDS = 'linkEnds';

/**
 * The stored names of a transaction's fields. A payment's transactions are most of its state item,
 * which every change rewrites and DynamoDB bills by the KB: the long names alone were some 40 bytes
 * a transaction, the difference between one write unit and two for a 3-D Secure payment. Items
 * written before hold the long names and are read alike.
 */
const TRANSACTION_FIELDS = {
  transId: 'id',
  type: 't',
  status: 's',
  amountMinor: 'a',
  at: 'at',
  reason: 'r',
  acquirerRef: 'ref',
  actor: 'by',
  orderStatus: 'o',
  internal: 'int',
  held: 'h',
  dispute: 'd',
  paidWith: 'pw',
} as const satisfies { readonly [K in keyof Required<Transaction>]: string };

const FIELD_OF_STORED: Readonly<Record<string, string>> = Object.fromEntries(Object.entries(TRANSACTION_FIELDS).map(([field, stored]) => [stored, field]));

/** A transaction as the state item stores it. */
export function storedTransaction(t: Transaction): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(t)) {
    // A field without a short name (none today: the type check above says so) keeps its own.
    if (value !== undefined) out[(TRANSACTION_FIELDS as Record<string, string>)[field] ?? field] = value;
  }
  return out;
}

/** A stored transaction as the domain's (either layout: short names, or the long ones of items written before). */
export function transactionOf(stored: Record<string, unknown>): Transaction {
  if ('transId' in stored) return stored as unknown as Transaction;
  return Object.fromEntries(Object.entries(stored).map(([k, v]) => [FIELD_OF_STORED[k] ?? k, v])) as unknown as Transaction;
}

/** A payment's two items: its state, and its details (DETAIL_FIELDS). */
export function paymentItems(payment: Payment, shards: ShardCounts): { state: Record<string, unknown>; details: Record<string, unknown> } {
  const state: Record<string, unknown> = { ...payment };
  const details: Record<string, unknown> = {};
  for (const field of DETAIL_FIELDS) {
    if (state[field] !== undefined) details[field] = state[field];
    delete state[field];
  }
  if (payment.checkout) state[LINK_ENDS] = Date.parse(payment.checkout.expiresAt);
  state.transactions = payment.transactions.map(storedTransaction);
  // The id is the partition key's.
  delete state.paymentId;
  return {
    state: {
      ...key.payment(payment.paymentId),
      kind: 'payment',
      ...state,
    },
    details: {
      ...key.paymentDetails(payment.paymentId),
      kind: 'payment-details',
      ...details,
      // The order lookup and the search entry (keys only: the merchant's day and the creation time)
      // never change: they live on the item written once, not on the state item every change
      // rewrites and bills by the KB (126 bytes of it). Payments written before keep their search
      // entry on the state item; a reader takes the id from the key either way.
      gsi1pk: key.orderIndex(payment.merchantKey, payment.order.number),
      gsi1sk: payment.createdAt,
      searchPk: searchPartitionOf(payment.merchantKey, payment.createdAt, payment.paymentId, shards),
      searchSk: `${payment.createdAt}#${payment.paymentId}`,
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
  own.transactions = ((state.transactions ?? []) as Record<string, unknown>[]).map(transactionOf);
  // The maps of what is in flight are stored from the first entry on (payment-store.ts createPayment): empty until then.
  own.refunds ??= {};
  own.watching ??= {};
  if ('order' in state) return own as unknown as Payment;
  if (!details) return undefined;
  return { ...withoutStorageAttributes<Record<string, unknown>>(details), ...own } as unknown as Payment;
}


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
