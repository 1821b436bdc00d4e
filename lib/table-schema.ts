/**
 * The single table's key schema, shared by the CDK table and the local runner's table, so the
 * local engine has exactly the indexes the cloud has.
 */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'ttl',
  globalSecondaryIndexes: [
    /** A merchant's payments by order number (status by order_id). */
    { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    /**
     * A sparse work-queue index: a payment is in it only while background work is due on it (an
     * attempt in flight to reconcile, an authorization to capture). Jobs read only what is due.
     */
    { indexName: 'queue', partitionKey: 'queuePk', sortKey: 'queueSk' },
    /** The admin portal's lists: payments by day, audit entries by what they are about. */
    { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
    /**
     * The callback outbox, sparse: a payment is in it while a callback of it is waiting to be
     * delivered. Every write that appends a transaction puts it there in the same write.
     */
    { indexName: 'outbox', partitionKey: 'outboxPk', sortKey: 'outboxSk' },
  ],
} as const;

/**
 * Every kind of item by the prefix of its partition key (lambdas/adapters/dynamodb/keys.ts and the
 * sandbox acquirer's ledger build the keys). IAM grants name these prefixes (`dynamodb:LeadingKeys`,
 * lib/table-access.ts), so no prefix may begin another one; test/unit/table-access.test.ts checks
 * that every key the code builds has exactly one of them.
 */
export const ITEM_KINDS = {
  PAYMENT: 'PAYMENT#',
  MERCHANT: 'MERCHANT#',
  CARDTOKEN: 'CARDTOKEN#',
  RECURRING: 'RECURRING#',
  OPERATOR: 'OPERATOR#',
  AUDIT: 'AUDIT#',
  /** Marks an audit entry id as written, so an id is appended once (lambdas/adapters/dynamodb/audit-log.ts). */
  AUDITID: 'AUDITID#',
  REQUESTKEY: 'REQUESTKEY#',
  ENDPOINT: 'ENDPOINT#',
  SANDBOX: 'SANDBOX#',
  SANDBOX_CREDENTIAL: 'SANDBOX-CREDENTIAL#',
} as const;

export type ItemKind = keyof typeof ITEM_KINDS;
export type IndexName = (typeof TABLE_SCHEMA.globalSecondaryIndexes)[number]['indexName'];

/** CreateTable input for engines that speak the DynamoDB API (the local runner, tests). */
export function createTableInput(tableName: string) {
  const keyAttributes = new Set<string>([TABLE_SCHEMA.partitionKey, TABLE_SCHEMA.sortKey]);
  for (const g of TABLE_SCHEMA.globalSecondaryIndexes) {
    keyAttributes.add(g.partitionKey);
    keyAttributes.add(g.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...keyAttributes].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: TABLE_SCHEMA.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE_SCHEMA.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: TABLE_SCHEMA.globalSecondaryIndexes.map((g) => ({
      IndexName: g.indexName,
      KeySchema: [
        { AttributeName: g.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: g.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}
