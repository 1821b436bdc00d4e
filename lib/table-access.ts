import { ITEM_KINDS, TABLE_SCHEMA, type IndexName, type ItemKind } from './table-schema';

/**
 * What a function may do to the single table, declared per route (lib/routes.ts) and job
 * (lib/jobs.ts): which item kinds it reads and writes with which actions, and which indexes it
 * queries. The stack turns a declaration into IAM statements (tablePolicy below) whose item actions
 * are bound to the kinds' partition key prefixes with `dynamodb:LeadingKeys`; nothing else is
 * granted. ADR 0018 explains the model and its limits.
 *
 * Declarations follow the code: test/integration/table-access.test.ts and every integration test
 * record what each function really sends to DynamoDB and fail on anything its declaration does not
 * allow (test/support/table-access.ts).
 */

/** The item actions the code may use. DeleteItem is used once (expiredLinkCleanup); ConditionCheckItem nowhere. */
export type ItemAction = 'GetItem' | 'BatchGetItem' | 'Query' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'ConditionCheckItem';

export const WRITE_ACTIONS: readonly ItemAction[] = ['PutItem', 'UpdateItem', 'DeleteItem'];

export interface TableAccess {
  /** Per item kind, the actions allowed on items of that kind (on the table itself). */
  readonly items: { readonly [K in ItemKind]?: readonly ItemAction[] };
  /** The indexes it queries (Query is the only action on an index). */
  readonly indexes: readonly IndexName[];
}

export interface TableAccessPart {
  readonly items?: TableAccess['items'];
  readonly indexes?: readonly IndexName[];
}

/** The union of the parts: every action of every part on each kind, every index of every part. */
export function tableAccess(...parts: readonly TableAccessPart[]): TableAccess {
  const items: { [K in ItemKind]?: ItemAction[] } = {};
  const indexes = new Set<IndexName>();
  for (const part of parts) {
    for (const [kind, actions] of Object.entries(part.items ?? {}) as [ItemKind, readonly ItemAction[]][]) {
      items[kind] = [...new Set([...(items[kind] ?? []), ...actions])].sort();
    }
    for (const index of part.indexes ?? []) indexes.add(index);
  }
  return { items, indexes: [...indexes].sort() };
}

export const NO_TABLE_ACCESS: TableAccess = tableAccess();

/** Whether a declaration lets its function change any item (PutItem, UpdateItem or DeleteItem). */
export const writesTable = (access: TableAccess): boolean =>
  Object.values(access.items).some((actions) => actions?.some((a) => WRITE_ACTIONS.includes(a)));

/**
 * Building blocks, each named by the code that needs it. A route or job takes the blocks of the
 * code it runs, plus what is particular to it.
 */
export const ACCESS = {
  /**
   * The merchant chain's Idempotency-Key (lambdas/middleware/merchant-endpoint.ts): claimed by a
   * conditional put, read when another run holds it, taken over or answered by conditional updates.
   */
  requestKeyClaim: { items: { REQUESTKEY: ['GetItem', 'PutItem', 'UpdateItem'] } },
  /** The Idempotency-Key of a read (payment status): only its body checked, by one conditional put. */
  requestKeyCheck: { items: { REQUESTKEY: ['PutItem'] } },
  /** Reading a payment by id (findPayment): its state and details items, one query of its partition. */
  paymentRead: { items: { PAYMENT: ['Query'] } },
  /**
   * Every change of a payment is one conditional UpdateItem of its state item, read before it
   * (findPayment, transition; the details read by key when the function has not read them yet).
   */
  paymentChange: { items: { PAYMENT: ['GetItem', 'Query', 'UpdateItem'] } },
  /**
   * Every merchant API request (lambdas/middleware/merchant-gate.ts, ADR 0025): a key missing from
   * the secret cache is looked up in the directory first (one consistent read of the merchant), and
   * a verified request takes one of its merchant's requests of this second (a conditional increment).
   */
  merchantGate: { items: { MERCHANT: ['GetItem'], RATE: ['UpdateItem'] } },
  /**
   * A count or export takes one of its operator's slots and gives it back (conditional updates of
   * SEARCHLEASE# items, never a delete): the portal's bulk reads bounded per operator.
   */
  searchLease: { items: { SEARCHLEASE: ['UpdateItem'] } },
  /** A merchant's settings read by key (merchantOf / merchants.find): never written by this. */
  merchantSettingsRead: { items: { MERCHANT: ['GetItem'] } },
  /** A webhook secret rotation noted on the merchant (one attribute, markWebhookSecretRotated), so callbacks sign with it at once. */
  webhookSecretRotation: { items: { MERCHANT: ['UpdateItem'] } },
  /** The merchants by name: keys from the lookup index, then the merchants by key. */
  merchantList: { items: { MERCHANT: ['BatchGetItem'] }, indexes: ['lookup'] },
  /** Payments found through a keys-only index (search, order number, dead callbacks), read by key (state and details items). */
  paymentsByKey: { items: { PAYMENT: ['BatchGetItem'] } },
  /*
   * Every block below that reaches the S2S CARD connector reads the payment's acquirer account by key
   * (ACCOUNT GetItem: docs/acquirer-accounts.md); on a sandbox stage the grant is there unused.
   */
  /**
   * The sandbox acquirer answering a follow-up (capture, void, refund, reversal) or making an
   * operation final (close): its ledger item per payment, created once and changed by conditional
   * updates (lambdas/adapters/sandbox-acquirer).
   */
  acquirerFollowUps: { items: { ACCOUNT: ['GetItem'], SANDBOX: ['GetItem', 'PutItem', 'UpdateItem'], S2SCARD: ['GetItem', 'PutItem', 'UpdateItem'] } },
  /**
   * Reading a payment's chargebacks: the sandbox's ledger, or the S2S CARD records' dispute hints;
   * each one written to the month's disputes log (DISPUTE#, a put per chargeback, replaced when written again).
   */
  acquirerChargebacks: { items: { ACCOUNT: ['GetItem'], SANDBOX: ['GetItem'], S2SCARD: ['GetItem'], DISPUTE: ['PutItem'] } },
  /** The acquirer accounts by id: keys from the lookup index, then the accounts by key. */
  accountList: { items: { ACCOUNT: ['BatchGetItem'] }, indexes: ['lookup'] },
  /**
   * A merchant's acquirer account read by key: the connector (which account a payment goes through),
   * a merchant linked to one (it must exist), the checkout page (a linked merchant's Google Pay parameters).
   */
  accountRead: { items: { ACCOUNT: ['GetItem'] } },
  /**
   * A month's chargeback rates (lambdas/use-cases/admin/disputes.ts): the month's chargebacks (one
   * partition), and for each merchant charged back its settled payments (settled-months.ts): the
   * days kept of its month (one partition), a closed day not kept yet counted from the search index
   * with the payments read by key and then kept (a put per day), a kept day's payments that might
   * still settle read by key again.
   */
  disputesRead: { items: { DISPUTE: ['Query'], SETTLEDDAY: ['PutItem', 'Query'], PAYMENT: ['BatchGetItem'] }, indexes: ['searchKeys'] },
  /**
   * Lookups and the result after a challenge: the sandbox only reads; the S2S CARD connector records
   * the final status the gateway gives (one forward-only update of its own records).
   */
  acquirerLookups: { items: { ACCOUNT: ['GetItem'], SANDBOX: ['GetItem'], S2SCARD: ['GetItem', 'UpdateItem'] } },
  /**
   * A customer's authorization: recorded in the ledger, with the card kept as a stored credential
   * when the session asks for a token or a recurring chain (put), and a saved card's read (get).
   */
  acquirerAuthorizations: { items: { ACCOUNT: ['GetItem'], SANDBOX: ['GetItem', 'PutItem', 'UpdateItem'], SANDBOX_CREDENTIAL: ['GetItem', 'PutItem'], S2SCARD: ['GetItem', 'PutItem', 'UpdateItem'] } },
  /** A merchant-initiated charge (recurring, retry) uses the stored credential and never stores one (`storeCredential: false`). */
  acquirerMerchantInitiated: { items: { ACCOUNT: ['GetItem'], SANDBOX: ['GetItem', 'PutItem', 'UpdateItem'], SANDBOX_CREDENTIAL: ['GetItem'], S2SCARD: ['GetItem', 'PutItem', 'UpdateItem'] } },
  /**
   * The S2S CARD gateway's callbacks: its records read (to verify the hash), what the gateway
   * confirms recorded, the payment made due (PaymentStore.hurry); a CHARGEBACK's news counted on the
   * payment by a guarded update (read back when its guard fails).
   */
  acquirerNotifications: { items: { ACCOUNT: ['GetItem'], S2SCARD: ['GetItem', 'UpdateItem'], PAYMENT: ['GetItem', 'Query', 'UpdateItem'] } },
  /**
   * The sandbox's dispute report (SANDBOX#DISPUTES, lambdas/adapters/sandbox-acquirer/disputes.ts):
   * news put when the chargeback test card settles (a sale or a capture), read by the reconciler and
   * marked taken (a TTL removes it), a planned chargeback written to the ledger then.
   */
  acquirerDisputeReport: { items: { SANDBOX: ['GetItem', 'Query', 'PutItem', 'UpdateItem'] } },
  /** The customer's answer on the sandbox's challenge page: one conditional update; an approval may store the card. */
  acquirerChallengeAnswers: { items: { SANDBOX: ['GetItem', 'UpdateItem'], SANDBOX_CREDENTIAL: ['PutItem'] } },
  /**
   * Recording an approved first payment issues the card token and recurring chain its session asked
   * for (record-outcome.ts issueTokens), each written once.
   */
  tokenIssue: { items: { CARDTOKEN: ['PutItem'], RECURRING: ['PutItem'] } },
  /** Paying with a saved card reads its token again (it may have expired since the session). */
  savedCardRead: { items: { CARDTOKEN: ['GetItem'] } },
  /**
   * Delivering a payment's callbacks (lambdas/use-cases/deliver-callbacks.ts): the lease and cursor
   * on the payment item, one delivery record per callback (under the payment's partition), the
   * notification URL's health, and the merchant's notification URL. The relay also reads what is due
   * from the outbox index; the stream dispatcher is handed the payments. An approval's delivery
   * queues its e-mail receipt first (one conditional put per payment, lambdas/use-cases/queue-receipt.ts).
   */
  callbackDelivery: { items: { PAYMENT: ['Query', 'PutItem', 'UpdateItem'], ENDPOINT: ['GetItem', 'PutItem'], MERCHANT: ['GetItem'], RECEIPT: ['PutItem'] } },
  /**
   * The receipt job (lambdas/use-cases/receipts.ts): the due receipts from the work index's `receipt`
   * queue, each claimed, retried or ended by a conditional update, its address looked up in the
   * suppression list (by digest, GetItem).
   */
  receiptSending: { items: { RECEIPT: ['UpdateItem'], SUPPRESSION: ['GetItem'] }, indexes: ['work'] },
  /** SES's bounces and complaints suppress an address: one update of its digest's item (lambdas/use-cases/mail-feedback.ts). */
  mailFeedback: { items: { SUPPRESSION: ['UpdateItem'] } },
  /**
   * The stream dispatcher drops the details item of a link DynamoDB's TTL removed unpaid (its state
   * item is gone; payment-store.ts forgetExpiredLink): the only delete anywhere.
   */
  expiredLinkCleanup: { items: { PAYMENT: ['DeleteItem'] } },
  /**
   * Appending to the audit log (lambdas/adapters/dynamodb/audit-log.ts): the entry id's marker is
   * read and written once, the day's chain is read for its last entry (Query), and the entry is
   * put in the next slot (PutItem, `attribute_not_exists`). Nobody may update or delete either:
   * every writer also holds an explicit Deny (tablePolicy).
   */
  auditAppend: { items: { AUDIT: ['PutItem', 'Query'], AUDITID: ['GetItem', 'PutItem'] } },
  /** Reading a day's chain of audit entries (its head, or all of it): queries of the day's partition only. */
  auditRead: { items: { AUDIT: ['Query'] } },
  /** An operator page's audit history of one payment or merchant (the AUDITOF# partitions of the lookup index, then the entries by key). */
  auditHistory: { items: { AUDIT: ['BatchGetItem'] }, indexes: ['lookup'] },
} as const satisfies Record<string, TableAccessPart>;

/** An IAM policy statement as CloudFormation has it (and iam.PolicyStatement.fromJson reads it). */
export interface PolicyStatementJson {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string[];
  readonly Resource: string[];
  readonly Condition?: Record<string, Record<string, string | string[]>>;
}

/**
 * What nobody may do to an audit entry or its id's marker, whatever a later grant says (ADR 0002).
 * PutItem cannot be denied to the writers: an entry is written once with `attribute_not_exists`,
 * and IAM has no condition key for a write's condition expression (an overwrite shows as a break
 * of the hash chain instead). BatchWriteItem is granted to nobody and denied so a later grant cannot
 * reopen the log; inside TransactWriteItems each update or delete is authorized as the single
 * action, so the Deny covers transactions too.
 */
export const AUDIT_DENIED_ACTIONS = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'];
const AUDIT_KINDS: readonly ItemKind[] = ['AUDIT', 'AUDITID'];

const leadingKeyPattern = (kind: ItemKind) => `${ITEM_KINDS[kind]}*`;

/**
 * The IAM statements of a declaration, on the table's ARN and its indexes' ARNs:
 * - one Allow per distinct set of item actions, on the table, for items whose partition key starts
 *   with one of that set's prefixes: `ForAllValues:StringLike dynamodb:LeadingKeys`, so a batch is
 *   allowed only if every key in it is, and `Null: false`, so a request without a partition key
 *   (none is granted; Scan would be one) can never pass the ForAllValues test vacuously;
 * - one Allow of Query on exactly the indexes declared (an index has no partition condition: its
 *   partitions are not item kinds);
 * - for every function that may write, the explicit Deny that keeps the audit log append-only.
 */
export function tablePolicy(access: TableAccess, tableArn: string): PolicyStatementJson[] {
  const byActions = new Map<string, { actions: ItemAction[]; kinds: ItemKind[] }>();
  for (const [kind, actions] of Object.entries(access.items) as [ItemKind, readonly ItemAction[]][]) {
    if (!actions.length) continue;
    const sorted = [...new Set(actions)].sort();
    const group = byActions.get(sorted.join()) ?? { actions: sorted, kinds: [] };
    group.kinds.push(kind);
    byActions.set(sorted.join(), group);
  }
  const statements: PolicyStatementJson[] = [...byActions.values()]
    .sort((a, b) => a.actions.join().localeCompare(b.actions.join()))
    .map(({ actions, kinds }) => ({
      Effect: 'Allow',
      Action: actions.map((a) => `dynamodb:${a}`),
      Resource: [tableArn],
      Condition: {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': kinds.map(leadingKeyPattern).sort() },
        Null: { 'dynamodb:LeadingKeys': 'false' },
      },
    }));
  if (access.indexes.length) {
    const known = TABLE_SCHEMA.globalSecondaryIndexes.map((i) => i.indexName as IndexName);
    const unknown = access.indexes.filter((i) => !known.includes(i));
    if (unknown.length) throw new Error(`Unknown index in a table access declaration: ${unknown.join(', ')}`);
    statements.push({ Effect: 'Allow', Action: ['dynamodb:Query'], Resource: access.indexes.map((i) => `${tableArn}/index/${i}`) });
  }
  if (writesTable(access)) {
    statements.push({
      Effect: 'Deny',
      Action: [...AUDIT_DENIED_ACTIONS],
      Resource: [tableArn],
      Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': AUDIT_KINDS.map(leadingKeyPattern) } },
    });
  }
  return statements;
}

/** The item kinds only one acquirer uses: a stage's functions are granted those of its own acquirer only. */
const ACQUIRER_KINDS: Readonly<Record<'sandbox' | 's2s-card', readonly ItemKind[]>> = {
  sandbox: ['SANDBOX', 'SANDBOX_CREDENTIAL'],
  's2s-card': ['S2SCARD'],
};

/** A declaration as granted on a stage whose acquirer is `acquirer`: the other acquirers' kinds left out. */
export function accessForAcquirer(access: TableAccess, acquirer: 'sandbox' | 's2s-card'): TableAccess {
  const foreign = Object.entries(ACQUIRER_KINDS).filter(([name]) => name !== acquirer).flatMap(([, kinds]) => kinds);
  const items = Object.fromEntries(Object.entries(access.items).filter(([kind]) => !foreign.includes(kind as ItemKind)));
  return { items, indexes: access.indexes };
}

/** Whether a declaration reaches the acquirer's records, i.e. its function calls the acquirer. */
export const callsAcquirer = (access: TableAccess): boolean => Object.keys(ACQUIRER_KINDS).some((name) => ACQUIRER_KINDS[name as 'sandbox'].some((kind) => access.items[kind] !== undefined));
