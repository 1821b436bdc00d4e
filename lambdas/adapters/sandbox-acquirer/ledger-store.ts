import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TTL_ATTRIBUTE } from '../dynamodb/keys';
import type { AcquirerOutcome, OperationRef } from '../../ports/acquirer';
import { conditionalPut, conditionalUpdate } from '../dynamodb/client';
import type { BalanceChange, BalanceGuard, ChargebackGuard } from './bank';
import { canonicalKey, ledgerKey, ledgerRecords, type CardFacts, type LateRequest, type LedgerEntry, type LedgerItem, type SandboxLedgerRecord } from './ledger';

const credentialKey = (ref: string) => ({ pk: `SANDBOX-CREDENTIAL#${ref}`, sk: 'CREDENTIAL' });

/** Reads a payment's ledger item (strongly consistent). */
async function readLedgerItem(db: DynamoDBDocumentClient, tableName: string, paymentId: string): Promise<LedgerItem | undefined> {
  const out = await db.send(new GetCommand({ TableName: tableName, Key: ledgerKey(paymentId), ConsistentRead: true }));
  return out.Item as LedgerItem | undefined;
}

/**
 * The acquirer's own records of one payment, oldest first; `[]` for a payment it never saw. This is
 * the truth our records are checked against (each approved record moved money once).
 */
export async function sandboxLedger(db: DynamoDBDocumentClient, tableName: string, paymentId: string): Promise<SandboxLedgerRecord[]> {
  return ledgerRecords(await readLedgerItem(db, tableName, paymentId));
}

/**
 * The sandbox's DynamoDB I/O: one ledger item per payment (ledger.ts) and the cards it keeps as
 * stored credentials. Every change of the ledger is one conditional update of that item, so the
 * bank's rules (bank.ts) hold under any concurrency; a write whose condition failed returns false
 * and the caller decides again on what is there now.
 */
/** The partition of the sandbox's dispute report. */
const NEWS_PK = 'SANDBOX#DISPUTES';
/**
 * Items one page of the report's query reads (taken ones included; about 150 bytes each, well
 * inside a page's 1 MB), and the pages one reading may take: 20,000 items, more news than a sandbox
 * stage takes in the days its taken news waits for the table's TTL.
 */
const NEWS_PAGE_ITEMS = 1_000;
const NEWS_PAGES = 20;

/** A chargeback the sandbox raises when its news comes due: of what is left then, with this reason code. */
export interface PlannedChargeback {
  readonly reasonCode: string;
}

export class SandboxLedgerStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  ledger(paymentId: string): Promise<LedgerItem | undefined> {
    return readLedgerItem(this.db, this.tableName, paymentId);
  }

  async entry(ref: OperationRef): Promise<LedgerEntry | undefined> {
    return (await this.ledger(ref.paymentId))?.entries[canonicalKey(ref.idempotencyKey)];
  }

  /** Records an entry under its key: the first writer of a key wins; everyone else gets the winner's entry. */
  async record(paymentId: string, entry: LedgerEntry): Promise<{ entry: LedgerEntry; won: boolean }> {
    for (let i = 0; i < 3; i++) {
      if (await this.update(paymentId, 'SET #e.#k = :entry', 'attribute_not_exists(#e.#k)', { '#k': entry.idempotencyKey }, { ':entry': entry })) return { entry, won: true };
      const ledger = await this.ledger(paymentId);
      const winner = ledger?.entries[entry.idempotencyKey];
      if (winner) return { entry: winner, won: false };
      // The payment's first operation: its ledger item is created, then the entry written.
      if (!ledger) await this.createLedger(paymentId);
    }
    throw new Error(`sandbox: could not record ${entry.idempotencyKey}`);
  }

  /**
   * Records an approved follow-up and changes its authorization's balances in one write, on
   * condition that the key is new and the bank's guard still holds (bank.ts guardHolds).
   */
  recordFollowUp(paymentId: string, entry: LedgerEntry, authorization: { readonly key: string; readonly acquirerRef: string }, guard: BalanceGuard, change: BalanceChange): Promise<boolean> {
    const values: Record<string, unknown> = { ':entry': entry, ':approved': 'approved', ':authRef': authorization.acquirerRef, ':no': false, ':captured': guard.capturedMinor, ':zero': 0 };
    const conditions = [
      'attribute_not_exists(#e.#k)',
      '#e.#a.#s = :approved',
      '#e.#a.acquirerRef = :authRef',
      '(attribute_not_exists(#e.#a.voided) OR #e.#a.voided = :no)',
      '(attribute_not_exists(#e.#a.reversed) OR #e.#a.reversed = :no)',
      '#e.#a.capturedMinor = :captured',
      // A chargeback written meanwhile leaves nothing to refund, void or reverse (bank.ts).
      '(attribute_not_exists(#e.#a.chargedBackMinor) OR #e.#a.chargedBackMinor = :zero)',
    ];
    if (guard.refundedAtMostMinor !== undefined) {
      conditions.push('#e.#a.refundedMinor <= :room');
      values[':room'] = guard.refundedAtMostMinor;
    }
    let set: string;
    if (change.kind === 'capture' || change.kind === 'refund') {
      set = change.kind === 'capture' ? '#e.#a.capturedMinor = :amount' : '#e.#a.refundedMinor = #e.#a.refundedMinor + :amount';
      values[':amount'] = change.amountMinor;
    } else {
      set = change.kind === 'void' ? '#e.#a.voided = :yes' : '#e.#a.reversed = :yes';
      values[':yes'] = true;
    }
    return this.update(paymentId, `SET #e.#k = :entry, ${set}`, conditions.join(' AND '), { '#k': entry.idempotencyKey, '#a': authorization.key, '#s': 'status' }, values);
  }

  /**
   * Records a chargeback and adds it to its authorization's balance in one write, on condition that
   * the key is new and the balances are still those it was decided on (bank.ts decideChargeback).
   */
  recordChargeback(paymentId: string, entry: LedgerEntry, authorizationKey: string, guard: ChargebackGuard): Promise<boolean> {
    const conditions = [
      'attribute_not_exists(#e.#k)',
      '#e.#a.#s = :approved',
      '#e.#a.capturedMinor = :captured',
      '(attribute_not_exists(#e.#a.refundedMinor) OR #e.#a.refundedMinor = :refunded)',
      guard.chargedBackMinor === 0 ? '(attribute_not_exists(#e.#a.chargedBackMinor) OR #e.#a.chargedBackMinor = :cb)' : '#e.#a.chargedBackMinor = :cb',
    ];
    return this.update(paymentId, 'SET #e.#k = :entry, #e.#a.chargedBackMinor = :total', conditions.join(' AND '), { '#k': entry.idempotencyKey, '#a': authorizationKey, '#s': 'status' }, {
      ':entry': entry,
      ':approved': 'approved',
      ':captured': guard.capturedMinor,
      ':refunded': guard.refundedMinor,
      ':cb': guard.chargedBackMinor,
      ':total': guard.chargedBackMinor + entry.amountMinor,
    });
  }

  /**
   * The sandbox's dispute report: news of a payment due at `dueAt` (one item each), with what to
   * raise then for a planned chargeback (the chargeback test card).
   */
  async putNews(paymentId: string, dueAt: Date, plan?: PlannedChargeback): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { pk: NEWS_PK, sk: `${dueAt.toISOString()}#${paymentId.toLowerCase()}`, kind: 'sandbox-dispute-news', paymentId: paymentId.toLowerCase(), ...(plan ? { plan } : {}) } }));
  }

  /**
   * News due by `now` and not taken yet, soonest first, at most `limit`. Taken news stays in the
   * partition until its TTL, ahead of newer news in key order, and a query's Limit counts the items
   * it reads before its filter drops the taken ones: one page of `limit` read a day's first taken
   * news and nothing after it. The query is followed page by page until `limit` are found, the due
   * news ends, or NEWS_PAGES pages were read.
   */
  async dueNews(now: Date, limit: number): Promise<{ readonly sk: string; readonly paymentId: string; readonly plan?: PlannedChargeback }[]> {
    const due: { readonly sk: string; readonly paymentId: string; readonly plan?: PlannedChargeback }[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    for (let page = 0; page < NEWS_PAGES && due.length < limit; page++) {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk AND sk <= :until',
          FilterExpression: 'attribute_not_exists(taken)',
          ExpressionAttributeValues: { ':pk': NEWS_PK, ':until': `${now.toISOString()}#\uffff` },
          Limit: NEWS_PAGE_ITEMS,
          ConsistentRead: true,
          ...(ExclusiveStartKey ? { ExclusiveStartKey } : {}),
        }),
      );
      for (const i of out.Items ?? []) due.push({ sk: String(i.sk), paymentId: String(i.paymentId), ...(i.plan ? { plan: i.plan as PlannedChargeback } : {}) });
      ExclusiveStartKey = out.LastEvaluatedKey;
      if (!ExclusiveStartKey) break;
    }
    return due.slice(0, limit);
  }

  /**
   * News taken by the platform: marked, and removed by the table's TTL a day later (the functions
   * delete nothing; a taken item is skipped by `dueNews` meanwhile).
   */
  async takeNews(sk: string, now: Date): Promise<void> {
    await this.db.send(new UpdateCommand({ TableName: this.tableName, Key: { pk: NEWS_PK, sk }, UpdateExpression: 'SET taken = :yes, #ttl = :ttl', ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE }, ExpressionAttributeValues: { ':yes': true, ':ttl': Math.floor(now.getTime() / 1000) + 86_400 } }));
  }

  /** Closes a challenge still pending with its final (declined) answer. */
  closePending(ref: OperationRef, outcome: AcquirerOutcome): Promise<boolean> {
    return this.update(
      ref.paymentId,
      'SET #e.#k.outcome = :o, #e.#k.#s = :s, #e.#k.closed = :closed REMOVE #e.#k.pending',
      'attribute_exists(#e.#k.pending)',
      { '#k': canonicalKey(ref.idempotencyKey), '#s': 'status' },
      { ':o': outcome, ':s': 'declined', ':closed': 'abandoned' },
    );
  }

  /** Answers a challenge still pending: its outcome and, approved, its balances. */
  answerPending(ref: OperationRef, outcome: AcquirerOutcome, capturedMinor: number): Promise<boolean> {
    return this.update(
      ref.paymentId,
      'SET #e.#k.outcome = :o, #e.#k.#s = :s, #e.#k.capturedMinor = :c, #e.#k.refundedMinor = :z REMOVE #e.#k.pending',
      'attribute_exists(#e.#k.pending)',
      { '#k': canonicalKey(ref.idempotencyKey), '#s': 'status' },
      { ':o': outcome, ':s': outcome.kind === 'approved' ? 'approved' : 'declined', ':c': capturedMinor, ':z': 0 },
    );
  }

  /** Counts a wrong one-time code, on condition that the challenge is pending with `was` wrong codes. */
  countWrongCode(ref: OperationRef, was: number): Promise<boolean> {
    return this.update(
      ref.paymentId,
      'SET #e.#k.pending.wrongCodes = :n',
      'attribute_exists(#e.#k.pending) AND (attribute_not_exists(#e.#k.pending.wrongCodes) OR #e.#k.pending.wrongCodes = :was)',
      { '#k': canonicalKey(ref.idempotencyKey) },
      { ':n': was + 1, ':was': was },
    );
  }

  /** Notes the first late request with a barred key (what it asked for). */
  async noteLate(paymentId: string, key: string, late: LateRequest): Promise<void> {
    await this.update(paymentId, 'SET #e.#k.late = :late', '#e.#k.closed = :barred AND attribute_not_exists(#e.#k.late)', { '#k': key }, { ':late': late, ':barred': 'barred' });
  }

  /** An approval; one that keeps the card stores what the sandbox knows of it under `credentialRef`. */
  async approval(acquirerRef: string, card: CardFacts, credentialRef: string | undefined): Promise<AcquirerOutcome> {
    if (!credentialRef) return { kind: 'approved', acquirerRef };
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...credentialKey(credentialRef), kind: 'sandbox-credential', card } }));
    return { kind: 'approved', acquirerRef, storedCredentialRef: credentialRef };
  }

  async credential(credentialRef: string): Promise<CardFacts | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: credentialKey(credentialRef) }));
    return out.Item?.card as CardFacts | undefined;
  }

  private async createLedger(paymentId: string): Promise<void> {
    await conditionalPut(this.db, {
      TableName: this.tableName,
      Item: { ...ledgerKey(paymentId), kind: 'sandbox-ledger', paymentId: paymentId.toLowerCase(), entries: {} },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  }

  /** One conditional update of the payment's ledger item (which must exist): false when the condition did not hold. */
  private update(paymentId: string, expression: string, condition: string, names: Record<string, string>, values: Record<string, unknown>): Promise<boolean> {
    return conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: ledgerKey(paymentId),
      UpdateExpression: expression,
      ConditionExpression: `attribute_exists(pk) AND ${condition}`,
      ExpressionAttributeNames: { '#e': 'entries', ...names },
      ExpressionAttributeValues: values,
    });
  }
}
