/**
 * The single table's key schema, shared by the CDK table and the local runner's table, so the
 * local engine has exactly the indexes the cloud has.
 */
export const TABLE_SCHEMA = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'ttl',
  /**
   * Every index projects only its keys (or one attribute), so an entry stays far under 1 KB and a
   * change of the item that leaves the entry alone costs the index nothing. Readers fetch the items
   * by key. The sharded ones spread a hot key over SHARDS partitions (lambdas/adapters/dynamodb/keys.ts).
   */
  globalSecondaryIndexes: [
    /** Lookups: a merchant's payments by order number, the merchants by name, dead callbacks and audit history by target. */
    { indexName: 'lookup', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: [] as readonly string[] },
    /**
     * The work queues, sparse and sharded: a payment is in one only while background work is due
     * on it (an attempt in flight to reconcile, an authorization to capture).
     */
    { indexName: 'work', partitionKey: 'workPk', sortKey: 'workSk', projection: [] as readonly string[] },
    /**
     * The admin search: a merchant's payments of a day, sharded, newest first. Keys only, so a change
     * of status leaves the entry alone and costs the index nothing (ADR 0043); a search by status
     * reads the payments the entries name. It replaced `search`, which projected the status.
     */
    { indexName: 'searchKeys', partitionKey: 'searchPk', sortKey: 'searchSk', projection: [] as readonly string[] },
    /**
     * The callback outbox, sparse and sharded: a payment is in it while a callback of it is waiting
     * to be delivered. Every write that appends a transaction puts it there in the same write. It
     * carries the merchant (which never changes, so it costs no extra write): the relay's lanes.
     */
    { indexName: 'sending', partitionKey: 'sendPk', sortKey: 'sendSk', projection: ['merchantKey'] as readonly string[] },
  ],
} as const;

/**
 * Indexes of earlier layouts, which a table keeps for a while when it is migrated; nothing of this
 * version reads them. The four of the layout before the sharded one projected whole items
 * (docs/operations.md, "Migrating an existing table to the sharded indexes"); `search` projected the
 * status, so every change of status wrote it again, and `searchKeys` replaced it ("Migrating the
 * search index to keys only"). A kept index is synthesized exactly as it was deployed.
 */
export const LEGACY_INDEXES = [
  { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' },
  { indexName: 'queue', partitionKey: 'queuePk', sortKey: 'queueSk', projection: 'ALL' },
  { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk', projection: 'ALL' },
  { indexName: 'outbox', partitionKey: 'outboxPk', sortKey: 'outboxSk', projection: 'ALL' },
  { indexName: 'search', partitionKey: 'searchPk', sortKey: 'searchSk', projection: ['status'] },
] as const;

export type LegacyIndexName = (typeof LEGACY_INDEXES)[number]['indexName'];

/** What `legacy` stands for in `tableIndexes`: the four indexes of the layout before the sharded one. */
const UNSHARDED_INDEXES: readonly LegacyIndexName[] = ['gsi1', 'queue', 'gsi2', 'outbox'];

/** The context value `tableIndexes` that names the indexes of the table (default: the current four). */
export const TABLE_INDEXES_CONTEXT = 'tableIndexes';

/**
 * The indexes a `tableIndexes` value names, in the order given; `legacy` stands for the four of the
 * unsharded layout, an old index is otherwise named by itself (`search`). Every current index must
 * be named once the functions of this version run, so the stack accepts any subset (the migrations'
 * table-only steps) and says what is missing in its message.
 */
export function tableIndexesFromContext(value: unknown): { current: IndexName[]; legacy: LegacyIndexName[] } {
  const all = TABLE_SCHEMA.globalSecondaryIndexes.map((g) => g.indexName);
  if (value === undefined || value === null || value === '') return { current: [...all], legacy: [] };
  const names = String(value)
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const legacyNames = LEGACY_INDEXES.map((g) => g.indexName) as string[];
  const current: IndexName[] = [];
  const legacy: LegacyIndexName[] = [];
  for (const name of names) {
    if (name === 'legacy') legacy.push(...UNSHARDED_INDEXES);
    else if ((all as string[]).includes(name)) current.push(name as IndexName);
    else if (legacyNames.includes(name)) legacy.push(name as LegacyIndexName);
    else throw new Error(`Context ${TABLE_INDEXES_CONTEXT}: unknown index ${JSON.stringify(name)}; indexes are ${[...all, ...legacyNames, 'legacy'].join(', ')}`);
  }
  return { current: [...new Set(current)], legacy: [...new Set(legacy)] };
}

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
  /** The S2S CARD connector's records of what it sent, one item per payment (lambdas/adapters/s2s-card/records.ts). */
  S2SCARD: 'S2SCARD#',
  /** A merchant's signed requests in one second (lambdas/adapters/dynamodb/merchant-rate.ts), gone by TTL. */
  RATE: 'RATE#',
  /**
   * An operator's running counts and exports, one item per slot (lambdas/adapters/dynamodb/search-leases.ts):
   * a slot is taken by a conditional update and lapses with its function's deadline; gone by TTL.
   */
  SEARCHLEASE: 'SEARCHLEASE#',
  /** The merchants' acquirer accounts, one item each (lambdas/adapters/dynamodb/acquirer-accounts.ts); their passwords are in Secrets Manager. */
  ACCOUNT: 'ACCOUNT#',
  /** The chargebacks acquirers reported, one partition per month (lambdas/adapters/dynamodb/disputes.ts). */
  DISPUTE: 'DISPUTE#',
  /** A merchant's settled payments of a month, added to as each settled until ADR 0043: no longer written or read, left in the table. */
  TALLY: 'TALLY#',
  /** A merchant's settled payments of a closed day, as the chargeback-rate reading counted them (lambdas/adapters/dynamodb/settled-days.ts). */
  SETTLEDDAY: 'SETTLEDDAY#',
  /** A payment's e-mail receipt, queued once by its callback delivery and sent by the receipt job (lambdas/adapters/dynamodb/receipt-outbox.ts). */
  RECEIPT: 'RECEIPT#',
  /** An address that bounced for good or complained, by SHA-256 digest (lambdas/adapters/dynamodb/receipt-outbox.ts): later receipts to it are skipped. */
  SUPPRESSION: 'SUPPRESSION#',
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
      Projection: g.projection.length ? { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...g.projection] } : { ProjectionType: 'KEYS_ONLY' as const },
    })),
  };
}
