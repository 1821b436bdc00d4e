import { TABLE_SCHEMA } from '../../../lib/table-schema';

/** The single-table key design: every item kind and access pattern in one place. */
export const key = {
  merchant: (merchantKey: string) => ({ pk: `MERCHANT#${merchantKey}`, sk: 'PROFILE' }),
  /** A merchant's request count in the second that starts at `epochSecond`. */
  merchantRate: (merchantKey: string, epochSecond: number) => ({ pk: `RATE#${merchantKey}`, sk: String(epochSecond) }),
  /** One of an operator's slots for a running count or export. */
  searchLease: (operator: string, slot: number) => ({ pk: `SEARCHLEASE#${operator}`, sk: `SLOT#${slot}` }),
  payment: (paymentId: string) => ({ pk: `PAYMENT#${paymentId}`, sk: 'PAYMENT' }),
  /** What a payment's merchant asked, written once before its state item (payment-store.ts). */
  paymentDetails: (paymentId: string) => ({ pk: `PAYMENT#${paymentId}`, sk: 'PAYMENT#DETAILS' }),
  cardToken: (token: string) => ({ pk: `CARDTOKEN#${token}`, sk: 'CARDTOKEN' }),
  recurringChain: (token: string) => ({ pk: `RECURRING#${token}`, sk: 'CHAIN' }),
  operator: (username: string) => ({ pk: `OPERATOR#${username}`, sk: 'OPERATOR' }),
  /**
   * Failed sign-ins in a row under a user name (an operator's or not) from one source address, and
   * the wait they caused: a stranger's failures never lock the operator out of their own address.
   */
  operatorSignIn: (username: string, source: string) => ({ pk: `OPERATOR#${username}`, sk: `SIGNIN#${source}` }),
  operatorSignInPrefix: 'SIGNIN#',
  audit: (day: string, sortKey: string) => ({ pk: `AUDIT#${day}`, sk: sortKey }),
  /** A merchant's Idempotency-Key (digest with the merchant key), for a day. */
  requestKey: (digest: string) => ({ pk: `REQUESTKEY#${digest}`, sk: 'REQUESTKEY' }),
  /** The delivery record of a payment's callback number `index` (its transaction's position). */
  callback: (paymentId: string, index: number) => ({ pk: `PAYMENT#${paymentId}`, sk: `CALLBACK#${String(index).padStart(4, '0')}` }),
  callbackPrefix: 'CALLBACK#',
  /** The health of a notification URL (recent timeouts, blocked until). */
  endpoint: (urlDigest: string) => ({ pk: `ENDPOINT#${urlDigest}`, sk: 'ENDPOINT' }),
  /** Lookup index: a merchant's dead callbacks, oldest first. */
  deadCallbacks: (merchantKey: string) => `DEADCALLBACKS#${merchantKey}`,
  /** The sending index (the callback outbox), one partition per shard: the relay reads every shard. */
  outbox: (shard: number) => `OUTBOX#${shard}`,
  /** The work index: a queue's shard (reconcile, capture). */
  work: (queue: string, shard: number) => `${queue}#${shard}`,
  /** The search index: a merchant's payments of a day (UTC), one partition per shard. Merchant keys hold no #. */
  search: (merchantKey: string, day: string, shard: number) => `${merchantKey}#${day}#${shard}`,
  /** Lookup index: audit entries of one target. */
  auditOf: (target: string) => `AUDITOF#${target}`,
  /** Lookup index: every merchant, by name (admin list). */
  merchantsIndex: 'MERCHANTS',
  /** A merchant's acquirer account (lambdas/domain/acquirer-account.ts). */
  acquirerAccount: (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: 'ACCOUNT' }),
  /** Lookup index: every acquirer account, by id. */
  accountsIndex: 'ACCOUNTS',
  /** A chargeback the acquirer reported, in the month it counts in (one partition per month: chargebacks are few). */
  dispute: (month: string, transId: string) => ({ pk: `DISPUTE#${month}`, sk: transId }),
  /**
   * A merchant's settled sales of a closed day, kept once counted (the chargeback rate's
   * denominator, lambdas/adapters/dynamodb/settled-days.ts): one partition per merchant and month.
   */
  settledDay: (merchantKey: string, day: string) => ({ pk: `SETTLEDDAY#${merchantKey}#${day.slice(0, 7)}`, sk: day }),
  /** A payment's e-mail receipt (lambdas/adapters/dynamodb/receipt-outbox.ts): one per payment, in the work index's `receipt` queue while due. */
  receipt: (paymentId: string) => ({ pk: `RECEIPT#${paymentId}`, sk: 'RECEIPT' }),
  /** An address that bounced for good or complained, by its digest (lambdas/domain/receipt.ts addressDigest): no address is stored. */
  mailSuppression: (digest: string) => ({ pk: `SUPPRESSION#${digest}`, sk: 'SUPPRESSION' }),
  /** Lookup index: a merchant's payments by order number, newest last. */
  orderIndex: (merchantKey: string, orderNumber: string) => `ORDER#${merchantKey}#${orderNumber}`,
} as const;

/**
 * How many partitions each sharded index family spreads over. A partition takes 1,000 write units
 * a second; docs/architecture.md ("Keys and heat") has the arithmetic behind each number, and
 * `npm run bench -- --only keys` measures it. The outbox and the work queues are shared by every
 * merchant, 64 shards each: a 3-D Secure checkout moves its reconcile entry twice (about 4 units)
 * and puts two callbacks in the outbox (the challenge's while the customer is at it, the sale's:
 * 4 units), which 32 outbox shards took at 8,000 a second (ADR 0043). The search family is one
 * merchant's day, and one merchant's checkouts are bounded by its request limit (at most 1,000 a
 * second, ADR 0025): its entry written once per payment, 8 shards take 8,000 of them a second, and
 * each search, count or export of a merchant-day reads 8 partitions instead of 32 (ADR 0032). Raising a number later needs no migration while readers
 * read every shard: entries written under the smaller number stay in shards they still read.
 * Lowering one does; the search family's is lowered by day instead (searchShardsOf).
 * These are every cloud table's counts; the local engine's table has its own (LOCAL_SHARDS).
 */
export const SHARDS: ShardCounts = { outbox: 64, work: 64, search: 8 };

/** How many shards each sharded family of a table spreads over (a property of the table, read from TABLE_SHARDS). */
export interface ShardCounts {
  readonly outbox: number;
  readonly work: number;
  readonly search: number;
}

/**
 * The local engine's table (`npm start`, the tests): one process and no partitions, so a shard buys
 * no write capacity there and costs every reader a query. A runner left idle read the 32 outbox
 * shards every 2 s and the 64 work shards every 10 s (about a tenth of a core); with these it reads
 * 2 and 4. Still more than one per family, so every reader merges shards as it does on AWS. The
 * runner moves entries of a data directory written under other counts at start (migrateIndexKeys).
 */
export const LOCAL_SHARDS: ShardCounts = { outbox: 2, work: 4, search: 2 };

/** `TABLE_SHARDS`: `local` for the local engine's counts; unset for every cloud table's. */
export const shardCountsOf = (value: string | undefined): ShardCounts => (value === 'local' ? LOCAL_SHARDS : SHARDS);

/**
 * The search family's shard count changed on this day: a merchant-day before it was written, and is
 * read, over 32 shards; from it on over SHARDS.search. The day is in the partition key, so no entry
 * moves and no day is read with a count it was not written with.
 */
export const SEARCH_SHARDS_CHANGED = { on: '2026-11-27', before: 32 } as const;

/** How many shards the search entries of a merchant's day (YYYY-MM-DD) spread over in a table of these counts. */
export const searchShardsOf = (day: string, shards: ShardCounts): number => (day < SEARCH_SHARDS_CHANGED.on ? SEARCH_SHARDS_CHANGED.before : shards.search);

/** The search partition of a payment created at `createdAt` (an ISO instant). */
export function searchPartitionOf(merchantKey: string, createdAt: string, paymentId: string, shards: ShardCounts): string {
  const day = createdAt.slice(0, 10);
  return key.search(merchantKey, day, shardOf(paymentId, searchShardsOf(day, shards)));
}

/** A payment's work index entry's partition in a queue, and its outbox entry's. */
export const workPartitionOf = (queue: string, paymentId: string, shards: ShardCounts): string => key.work(queue, shardOf(paymentId, shards.work));
export const outboxPartitionOf = (paymentId: string, shards: ShardCounts): string => key.outbox(shardOf(paymentId, shards.outbox));

/** A stable shard of an id (FNV-1a), so the same payment always lands in the same partition. */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/**
 * Partition keys spread over shards, by index: the pattern matches the shard part of a key, so the
 * benchmark's key-heat model (test/bench/write-heat.ts) adds a family's shards up.
 */
export const SHARDED_PARTITIONS: readonly { readonly index: string; readonly pattern: RegExp; readonly family: string; readonly shards: number }[] = [
  { index: 'sending', pattern: /#\d+$/, family: '#*', shards: SHARDS.outbox },
  { index: 'work', pattern: /#\d+$/, family: '#*', shards: SHARDS.work },
  { index: 'searchKeys', pattern: /#\d+$/, family: '#*', shards: SHARDS.search },
];

export const LOOKUP_INDEX = TABLE_SCHEMA.globalSecondaryIndexes[0].indexName;
export const WORK_INDEX = TABLE_SCHEMA.globalSecondaryIndexes[1].indexName;
export const SEARCH_INDEX = TABLE_SCHEMA.globalSecondaryIndexes[2].indexName;
export const OUTBOX_INDEX = TABLE_SCHEMA.globalSecondaryIndexes[3].indexName;
export const TTL_ATTRIBUTE = TABLE_SCHEMA.timeToLiveAttribute;

/**
 * The callback outbox of a payment item: how many of its transactions have had their callback
 * handled, which older ones an operator asked to send again, and its place in the outbox index.
 */
export const OUTBOX_ATTRIBUTES = ['sendPk', 'sendSk', 'sendLease', 'callbacksDone', 'callbackResends', 'deliveries', 'callbackNet'] as const;

/**
 * Marks a payment's work entry as only the safety net of a callback left to the stream dispatcher
 * (transition-expression.ts `net`): the release of that callback removes the entry, and every write
 * that moves or removes the entry removes the mark.
 */
export const CALLBACK_NET = 'callbackNet';

/** The ids of every operation started on a payment (a string set): a replayed request cannot start one twice. */
export const OPERATION_IDS = 'operationIds';

/** Index keys of the layout before the sharded indexes (docs/operations.md, "Migrating the indexes"). */
export const LEGACY_KEY_ATTRIBUTES = ['gsi2pk', 'gsi2sk', 'queuePk', 'queueSk', 'outboxPk', 'outboxSk'] as const;

/** Attributes that belong to the storage layout, not to the domain object. */
export const STORAGE_ATTRIBUTES = ['pk', 'sk', 'kind', 'gsi1pk', 'gsi1sk', 'searchPk', 'searchSk', 'workPk', 'workSk', TTL_ATTRIBUTE, OPERATION_IDS, ...OUTBOX_ATTRIBUTES, ...LEGACY_KEY_ATTRIBUTES] as const;

export function withoutStorageAttributes<T>(item: Record<string, unknown>): T {
  const copy: Record<string, unknown> = { ...item };
  for (const a of STORAGE_ATTRIBUTES) delete copy[a];
  return copy as T;
}
