import { TABLE_SCHEMA } from '../../../lib/table-schema';

/** The single-table key design: every item kind and access pattern in one place. */
export const key = {
  merchant: (merchantKey: string) => ({ pk: `MERCHANT#${merchantKey}`, sk: 'PROFILE' }),
  payment: (paymentId: string) => ({ pk: `PAYMENT#${paymentId}`, sk: 'PAYMENT' }),
  cardToken: (token: string) => ({ pk: `CARDTOKEN#${token}`, sk: 'CARDTOKEN' }),
  recurringChain: (token: string) => ({ pk: `RECURRING#${token}`, sk: 'CHAIN' }),
  operator: (username: string) => ({ pk: `OPERATOR#${username}`, sk: 'OPERATOR' }),
  /** Failed sign-ins in a row under a user name (an operator's or not) and the lock they caused. */
  operatorSignIn: (username: string) => ({ pk: `OPERATOR#${username}`, sk: 'SIGNIN' }),
  audit: (day: string, sortKey: string) => ({ pk: `AUDIT#${day}`, sk: sortKey }),
  /** A merchant's Idempotency-Key (digest with the merchant key), for a day. */
  requestKey: (digest: string) => ({ pk: `REQUESTKEY#${digest}`, sk: 'REQUESTKEY' }),
  /** The delivery record of a payment's callback number `index` (its transaction's position). */
  callback: (paymentId: string, index: number) => ({ pk: `PAYMENT#${paymentId}`, sk: `CALLBACK#${String(index).padStart(4, '0')}` }),
  callbackPrefix: 'CALLBACK#',
  /** The health of a notification URL (recent timeouts, blocked until). */
  endpoint: (urlDigest: string) => ({ pk: `ENDPOINT#${urlDigest}`, sk: 'ENDPOINT' }),
  /** GSI1: a merchant's dead callbacks, oldest first. */
  deadCallbacks: (merchantKey: string) => `DEADCALLBACKS#${merchantKey}`,
  /** The outbox index has one partition: the job reads what is due across all payments. */
  outbox: 'CALLBACKS',
  /** GSI2: payments of a day (admin list) and audit entries of one target. */
  paymentsOfDay: (day: string) => `DAY#${day}`,
  auditOf: (target: string) => `AUDITOF#${target}`,
  /** GSI1: every merchant, by name (admin list). */
  merchantsIndex: 'MERCHANTS',
  /** GSI1: a merchant's payments by order number, newest last. */
  orderIndex: (merchantKey: string, orderNumber: string) => `ORDER#${merchantKey}#${orderNumber}`,
} as const;

export const GSI1 = TABLE_SCHEMA.globalSecondaryIndexes[0].indexName;
export const QUEUE_INDEX = TABLE_SCHEMA.globalSecondaryIndexes[1].indexName;
export const GSI2 = TABLE_SCHEMA.globalSecondaryIndexes[2].indexName;
export const OUTBOX_INDEX = TABLE_SCHEMA.globalSecondaryIndexes[3].indexName;
export const TTL_ATTRIBUTE = TABLE_SCHEMA.timeToLiveAttribute;

/**
 * The callback outbox of a payment item: how many of its transactions have had their callback
 * handled, which older ones an operator asked to send again, and its place in the outbox index.
 */
export const OUTBOX_ATTRIBUTES = ['outboxPk', 'outboxSk', 'callbacksDone', 'callbackResends'] as const;

/** The ids of every operation started on a payment (a string set): a replayed request cannot start one twice. */
export const OPERATION_IDS = 'operationIds';

/** Attributes that belong to the storage layout, not to the domain object. */
export const STORAGE_ATTRIBUTES = ['pk', 'sk', 'kind', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'queuePk', 'queueSk', TTL_ATTRIBUTE, OPERATION_IDS, ...OUTBOX_ATTRIBUTES] as const;

export function withoutStorageAttributes<T>(item: Record<string, unknown>): T {
  const copy: Record<string, unknown> = { ...item };
  for (const a of STORAGE_ATTRIBUTES) delete copy[a];
  return copy as T;
}
