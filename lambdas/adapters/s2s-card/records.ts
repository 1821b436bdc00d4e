import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AcquirerOutcome } from '../../ports/acquirer';
import { conditionalPut, conditionalUpdate } from '../dynamodb/client';
import type { HashParty } from './hash';

/**
 * What the connector remembers of the operations it sent, one item per payment
 * (`pk = S2SCARD#<payment_id>`, `sk = RECORDS`), one entry per idempotency key. The gateway has no
 * idempotency key of its own for follow-ups and signs everything with the payer's e-mail and the
 * card's 6+4 digits, so before any request the connector writes its intent here (first writer of a
 * key wins; a replay never sends twice), and the answer (synchronous, or by callback) in a write
 * that only moves forward. It keeps no card number and no CVV: the 6+4 digits are what a card mask
 * shows.
 */
export type S2SOperation = 'authorization' | 'capture' | 'void' | 'refund' | 'reversal';

/**
 * sent = the request may have reached the gateway, no final answer yet; action = the customer must
 * pass 3-D Secure or a redirect; answered = final; barred = closed by reconciliation before any
 * request with the key was sent (a later request with it is refused here and never sent).
 */
export type S2SEntryState = 'sent' | 'action' | 'answered' | 'barred';

export interface S2SEntry {
  readonly key: string;
  readonly operation: S2SOperation;
  readonly state: S2SEntryState;
  readonly party: HashParty;
  readonly amountMinor: number;
  readonly currency: string;
  /** Authorizations: a sale (captured at once) or an auth waiting for CAPTURE. */
  readonly capture?: boolean;
  /** Authorizations: the gateway was asked to keep the card (req_token / recurring_init). */
  readonly storeCredential?: boolean;
  /** Authorizations: order_id sent (our key as given). */
  readonly orderId?: string;
  /** The gateway's transaction id: of the authorization, or, for a follow-up, of the payment it acts on. */
  readonly transId?: string;
  readonly outcome?: AcquirerOutcome;
  /** When the request was written here (ISO). */
  readonly at: string;
  /** Our id of the gateway account it was sent through (the payment's; the stage's own when absent). */
  readonly account?: string;
  /** Declined because the gateway refused the request before processing it (no transaction of its own). */
  readonly refused?: boolean;
  /**
   * Authorizations: until when (epoch ms) a look-up at the gateway on the customer's behalf is
   * taken; others wait for it or read what it recorded (one in flight, at most one per interval).
   */
  readonly lookupUntil?: number;
  /** Authorizations: when (epoch ms) the last such look-up finished. */
  readonly lookedAt?: number;
}

/**
 * What a CHARGEBACK callback said of its dispute. Its hash signs none of these fields, so they are
 * never the amount recorded (the gateway's reading is); they name the reason and the dates of a
 * chargeback the reading shows with the same amount.
 */
export interface DisputeHint {
  readonly amountMinor?: number;
  readonly reasonCode?: string;
  readonly chargebackDate?: string;
  readonly bankDate?: string;
  /** When the callback arrived (ISO). */
  readonly at: string;
}

interface RecordsItem {
  readonly entries: Record<string, S2SEntry>;
  readonly disputes?: readonly DisputeHint[];
}

export const s2sRecordsKey = (paymentId: string) => ({ pk: `S2SCARD#${paymentId.toLowerCase()}`, sk: 'RECORDS' });
/** Our keys are built from canonical forms: compared and stored lower-cased. */
export const canonicalKey = (key: string) => key.toLowerCase();
/** Our keys start with the payment id (`<payment>.<n>`, `<payment>.<kind>.<trans_id>`). */
export const paymentIdOfKey = (key: string) => key.split('.')[0] ?? '';

export class S2SRecords {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async entries(paymentId: string): Promise<Record<string, S2SEntry>> {
    return (await this.read(paymentId)).entries;
  }

  /** The payment's entries and the dispute hints of its CHARGEBACK callbacks (oldest first), in one read. */
  async read(paymentId: string): Promise<{ entries: Record<string, S2SEntry>; disputes: readonly DisputeHint[] }> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: s2sRecordsKey(paymentId), ConsistentRead: true }));
    const item = out.Item as RecordsItem | undefined;
    return { entries: item?.entries ?? {}, disputes: item?.disputes ?? [] };
  }

  /** Keeps a CHARGEBACK callback's hint (a repeated callback adds a copy; readers match by amount). */
  async noteDispute(paymentId: string, hint: DisputeHint): Promise<void> {
    await this.update(paymentId, 'SET #d = list_append(if_not_exists(#d, :none), :hint)', 'attribute_exists(pk)', { '#d': 'disputes' }, { ':none': [], ':hint': [hint] });
  }

  async entry(paymentId: string, key: string): Promise<S2SEntry | undefined> {
    return (await this.entries(paymentId))[canonicalKey(key)];
  }

  /** Writes the entry unless its key has one: `won` tells whether this write is the one recorded. */
  async intend(paymentId: string, entry: S2SEntry): Promise<{ entry: S2SEntry; won: boolean }> {
    for (let round = 0; round < 3; round++) {
      if (await this.update(paymentId, 'SET #e.#k = :entry', 'attribute_exists(pk) AND attribute_not_exists(#e.#k)', { '#e': 'entries', '#k': entry.key }, { ':entry': entry })) return { entry, won: true };
      const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: s2sRecordsKey(paymentId), ConsistentRead: true }));
      const item = out.Item as RecordsItem | undefined;
      const winner = item?.entries[entry.key];
      if (winner) return { entry: winner, won: false };
      if (!item) await this.createItem(paymentId);
    }
    throw new Error(`s2s-card: could not record ${entry.key}`);
  }

  /**
   * Moves an entry forward: from `sent` or `action` (or `barred`, when the gateway turns out to have
   * the operation after all) to the given state. Returns the entry as it is afterwards.
   */
  async advance(paymentId: string, key: string, change: { state: S2SEntryState; outcome?: AcquirerOutcome; transId?: string; refused?: boolean }): Promise<S2SEntry | undefined> {
    const names: Record<string, string> = { '#e': 'entries', '#k': canonicalKey(key), '#s': 'state' };
    const values: Record<string, unknown> = { ':state': change.state, ':answered': 'answered' };
    const sets = ['#e.#k.#s = :state'];
    if (change.refused) {
      sets.push('#e.#k.refused = :refused');
      values[':refused'] = true;
    }
    if (change.outcome) {
      sets.push('#e.#k.outcome = :outcome');
      values[':outcome'] = change.outcome;
    }
    if (change.transId) {
      sets.push('#e.#k.transId = :transId');
      values[':transId'] = change.transId;
    }
    // A final answer is never replaced: a late or repeated callback changes nothing.
    await this.update(paymentId, `SET ${sets.join(', ')}`, 'attribute_exists(#e.#k) AND #e.#k.#s <> :answered', names, values);
    return this.entry(paymentId, key);
  }

  /**
   * Records the final answers of several follow-ups in one write, on condition that none of them
   * was answered meanwhile: answers computed by counting (ledger-reading.ts) are only right
   * together, so a reading that lost a race to another is computed again, never half applied.
   * Returns false when the condition failed.
   */
  async answerTogether(paymentId: string, answers: ReadonlyMap<string, AcquirerOutcome>): Promise<boolean> {
    if (!answers.size) return true;
    const names: Record<string, string> = { '#e': 'entries', '#s': 'state', '#o': 'outcome' };
    const values: Record<string, unknown> = { ':answered': 'answered', ':sent': 'sent' };
    const sets: string[] = [];
    const conditions: string[] = [];
    [...answers].forEach(([key, outcome], i) => {
      names[`#k${i}`] = canonicalKey(key);
      values[`:o${i}`] = outcome;
      sets.push(`#e.#k${i}.#s = :answered`, `#e.#k${i}.#o = :o${i}`);
      conditions.push(`#e.#k${i}.#s = :sent`);
    });
    return this.update(paymentId, `SET ${sets.join(', ')}`, conditions.join(' AND '), names, values);
  }

  /**
   * Takes the right to ask the gateway about an authorization for the customer's page: won when no
   * other look-up holds it (`lookupUntil` passed). The holder sets it to `until`; `release` then
   * shortens it to the minimum interval between look-ups.
   */
  async takeLookup(paymentId: string, key: string, nowMs: number, untilMs: number): Promise<boolean> {
    return this.update(paymentId, 'SET #e.#k.#l = :until', 'attribute_exists(#e.#k) AND (attribute_not_exists(#e.#k.#l) OR #e.#k.#l <= :now)', { '#e': 'entries', '#k': canonicalKey(key), '#l': 'lookupUntil' }, { ':until': untilMs, ':now': nowMs });
  }

  async releaseLookup(paymentId: string, key: string, untilMs: number, doneMs: number): Promise<void> {
    await this.update(paymentId, 'SET #e.#k.#l = :until, #e.#k.#d = :done', 'attribute_exists(#e.#k)', { '#e': 'entries', '#k': canonicalKey(key), '#l': 'lookupUntil', '#d': 'lookedAt' }, { ':until': untilMs, ':done': doneMs });
  }

  /** One conditional update of the payment's records item: false when its condition did not hold. */
  private update(paymentId: string, expression: string, condition: string, names: Record<string, string>, values: Record<string, unknown>): Promise<boolean> {
    return conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: s2sRecordsKey(paymentId),
      UpdateExpression: expression,
      ConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });
  }

  private async createItem(paymentId: string): Promise<void> {
    await conditionalPut(this.db, {
      TableName: this.tableName,
      Item: { ...s2sRecordsKey(paymentId), kind: 's2s-card-records', entries: {} },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  }
}
