import { TABLE_SCHEMA } from '../../../lib/table-schema';

/** The single-table key design: every item kind and access pattern in one place. */
export const key = {
  merchant: (merchantKey: string) => ({ pk: `MERCHANT#${merchantKey}`, sk: 'PROFILE' }),
  payment: (paymentId: string) => ({ pk: `PAYMENT#${paymentId}`, sk: 'PAYMENT' }),
  cardToken: (token: string) => ({ pk: `CARDTOKEN#${token}`, sk: 'CARDTOKEN' }),
  recurringChain: (token: string) => ({ pk: `RECURRING#${token}`, sk: 'CHAIN' }),
  operator: (username: string) => ({ pk: `OPERATOR#${username}`, sk: 'OPERATOR' }),
  audit: (day: string, sortKey: string) => ({ pk: `AUDIT#${day}`, sk: sortKey }),
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
export const TTL_ATTRIBUTE = TABLE_SCHEMA.timeToLiveAttribute;

/** Attributes that belong to the storage layout, not to the domain object. */
export const STORAGE_ATTRIBUTES = ['pk', 'sk', 'kind', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'queuePk', 'queueSk', TTL_ATTRIBUTE] as const;

export function withoutStorageAttributes<T>(item: Record<string, unknown>): T {
  const copy: Record<string, unknown> = { ...item };
  for (const a of STORAGE_ATTRIBUTES) delete copy[a];
  return copy as T;
}
