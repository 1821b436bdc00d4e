import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CardSummary } from '../../domain/card';
import { formatMinor } from '../../domain/money';
import type { Acquirer, AcquirerOutcome, AuthorizeRequest, FollowUpOutcome, FollowUpRequest, OperationRef } from '../../ports/acquirer';
import { SANDBOX_OTP, SANDBOX_REASONS, planAuthorization, planFollowUp, planRecurring, type FollowUpKind } from './rules';
import { isConditionFailure } from '../dynamodb/client';

type CardFacts = Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>;

export type LedgerOperation = 'sale' | 'auth' | 'recurring' | 'capture' | 'refund' | 'void' | 'reversal';
export type LedgerOutcome = 'approved' | 'declined' | 'pending';

/**
 * What the simulated acquirer remembers of one operation, keyed by our idempotency key (lower-cased:
 * our keys are built from canonical forms, so letter case never makes two operations).
 */
interface LedgerEntry {
  readonly idempotencyKey: string;
  readonly operation: LedgerOperation;
  readonly acquirerRef: string;
  readonly card: CardFacts;
  readonly amountMinor: number;
  readonly currency: string;
  readonly at: string;
  readonly seq: number;
  /** The answer, as `lookup` gives it; for a challenge, its answer once given. */
  readonly outcome: AcquirerOutcome;
  readonly status: LedgerOutcome;
  readonly returnUrl?: string;
  readonly pending?: { readonly flow: '3ds' | 'redirect'; readonly then: 'approve' | 'decline'; readonly capture: boolean; readonly storeCredential: boolean };
  /** The authorization a follow-up acts on (its key). */
  readonly of?: string;
  /** Balances of an approved authorization (sale, auth, recurring). */
  readonly capturedMinor?: number;
  readonly refundedMinor?: number;
  readonly voided?: boolean;
  readonly reversed?: boolean;
  /** Written by `close` for a key never received: a later request with it is declined. */
  readonly barred?: boolean;
}

interface LedgerItem {
  readonly entries: Record<string, LedgerEntry>;
}

/** One of the acquirer's records of a payment, as `npm run sandbox -- ledger` prints it. */
export interface SandboxLedgerRecord {
  readonly operation: LedgerOperation;
  /** Decimal, in the currency's format. */
  readonly amount: string;
  readonly currency: string;
  readonly outcome: LedgerOutcome;
  readonly idempotency_key: string;
  readonly acquirer_ref: string;
  readonly reason?: string;
  readonly at: string;
  /** The authorization a capture, refund, void or reversal acts on (its idempotency key). */
  readonly of?: string;
}

const ledgerKey = (paymentId: string) => ({ pk: `SANDBOX#${paymentId.toLowerCase()}`, sk: 'LEDGER' });
const credentialKey = (ref: string) => ({ pk: `SANDBOX-CREDENTIAL#${ref}`, sk: 'CREDENTIAL' });
const canonical = (key: string) => key.toLowerCase();
const newRef = () => `sbx_${randomUUID().replace(/-/g, '')}`;
const NO_CARD: CardFacts = { mask: '', expMonth: 0, expYear: 0 };

export const SANDBOX_CLOSED_REASONS = {
  neverReceived: 'Closed before it was received.',
  abandoned: 'The confirmation was closed before the customer finished it.',
} as const;

/** The acquirer's own records of one payment, oldest first. */
export async function sandboxLedger(db: DynamoDBDocumentClient, tableName: string, paymentId: string): Promise<SandboxLedgerRecord[]> {
  const out = await db.send(new GetCommand({ TableName: tableName, Key: ledgerKey(paymentId), ConsistentRead: true }));
  const entries = Object.values((out.Item as LedgerItem | undefined)?.entries ?? {});
  return entries
    .sort((a, b) => a.seq - b.seq)
    .map((e) => ({
      operation: e.operation,
      amount: formatMinor(e.amountMinor, e.currency),
      currency: e.currency,
      outcome: e.status,
      idempotency_key: e.idempotencyKey,
      acquirer_ref: e.acquirerRef,
      ...(e.outcome.kind === 'declined' ? { reason: e.outcome.reason } : {}),
      at: e.at,
      ...(e.of ? { of: e.of } : {}),
    }));
}

let sequence = 0;
const nextSeq = () => Date.now() * 1000 + (sequence++ % 1000);

/**
 * A simulated acquirer with the platform's test cards. Its memory lives in the service's table under
 * its own keys, one ledger item per payment, as a real acquirer's would live on its side; every
 * operation is one conditional write of that item, so its money rules (capture once and at most the
 * authorized amount, refunds up to what was captured, no void after a refund, no refund after a
 * void or reversal) hold under any concurrency. It never sees more of a card than a CardSummary.
 */
export class SandboxAcquirer implements Acquirer {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async authorize(request: AuthorizeRequest): Promise<AcquirerOutcome> {
    const key = canonical(request.idempotencyKey);
    const existing = (await this.ledger(request.paymentId))?.entries[key];
    if (existing) return answerOf(existing);
    const acquirerRef = newRef();
    const operation: LedgerOperation = request.recurring ? 'recurring' : request.capture ? 'sale' : 'auth';
    const base = { idempotencyKey: key, operation, acquirerRef, amountMinor: request.amountMinor, currency: request.currency, returnUrl: request.returnUrl };
    const card = await this.cardOf(request);
    if (!card) return this.record(request.paymentId, { ...base, card: NO_CARD, outcome: { kind: 'declined', acquirerRef, reason: SANDBOX_REASONS.recurringUnavailable }, status: 'declined' });
    const approvedEntry = async () => ({ ...base, card, outcome: await this.approved(acquirerRef, card, request.storeCredential), status: 'approved' as const, capturedMinor: request.capture ? request.amountMinor : 0, refundedMinor: 0 });
    if (request.instrument.kind === 'stored' && request.recurring) {
      const plan = planRecurring(card, request.amountMinor, request.attempt);
      return plan.kind === 'approve'
        ? this.record(request.paymentId, await approvedEntry())
        : this.record(request.paymentId, { ...base, card, outcome: { kind: 'declined', acquirerRef, reason: plan.reason, soft: plan.soft }, status: 'declined' });
    }
    const plan = planAuthorization(card);
    switch (plan.kind) {
      case 'approve':
        return this.record(request.paymentId, await approvedEntry());
      case 'decline':
        return this.record(request.paymentId, { ...base, card, outcome: { kind: 'declined', acquirerRef, reason: plan.reason }, status: 'declined' });
      case 'challenge': {
        const url = `${new URL(request.returnUrl).origin}/sandbox/challenge/${encodeURIComponent(key)}`;
        return this.record(request.paymentId, {
          ...base,
          card,
          outcome: { kind: 'action', acquirerRef, flow: plan.flow, url },
          status: 'pending',
          pending: { flow: plan.flow, then: plan.then, capture: request.capture, storeCredential: request.storeCredential },
        });
      }
      case 'no-answer': {
        // The acquirer approves, but its answer is lost on the way: the caller hears nothing.
        const recorded = await this.recordEntry(request.paymentId, await approvedEntry());
        return recorded.acquirerRef === acquirerRef ? { kind: 'unknown', acquirerRef, reason: SANDBOX_REASONS.unknown } : answerOf(recorded);
      }
    }
  }

  async completeAction(ref: OperationRef): Promise<AcquirerOutcome> {
    const entry = await this.entry(ref);
    if (!entry) throw new Error(`sandbox: no attempt ${ref.idempotencyKey}`);
    return entry.outcome;
  }

  async lookup(ref: OperationRef): Promise<AcquirerOutcome | undefined> {
    return (await this.entry(ref))?.outcome;
  }

  async close(ref: OperationRef): Promise<AcquirerOutcome> {
    const key = canonical(ref.idempotencyKey);
    for (let i = 0; i < 5; i++) {
      const entry = await this.entry(ref);
      if (!entry) {
        const barred = await this.recordEntry(ref.paymentId, {
          idempotencyKey: key,
          operation: operationOfKey(key),
          acquirerRef: '',
          card: NO_CARD,
          amountMinor: 0,
          currency: 'USD',
          outcome: { kind: 'declined', acquirerRef: '', reason: SANDBOX_CLOSED_REASONS.neverReceived },
          status: 'declined',
          barred: true,
        });
        return barred.outcome;
      }
      if (!entry.pending) return entry.outcome;
      const outcome: AcquirerOutcome = { kind: 'declined', acquirerRef: entry.acquirerRef, reason: SANDBOX_CLOSED_REASONS.abandoned };
      try {
        await this.update(ref.paymentId, 'SET #e.#k.outcome = :o, #e.#k.#s = :s REMOVE #e.#k.pending', 'attribute_exists(#e.#k.pending)', { '#k': key, '#s': 'status' }, { ':o': outcome, ':s': 'declined' });
        return outcome;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    }
    throw new Error(`sandbox: could not close ${key}`);
  }

  capture(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('capture', request);
  }

  void(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('void', request);
  }

  refund(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('refund', request);
  }

  reverse(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('reversal', request);
  }

  /** What the simulated challenge page shows: the flow, or no flow when nothing is pending (answered or closed). */
  async challenge(idempotencyKey: string): Promise<{ flow?: '3ds' | 'redirect'; returnUrl: string } | undefined> {
    const entry = await this.entry(refOfKey(idempotencyKey));
    if (!entry?.returnUrl) return undefined;
    return { flow: entry.pending?.flow, returnUrl: entry.returnUrl };
  }

  /**
   * The customer's answer on the simulated challenge page. A 3-D Secure challenge passes with the
   * sandbox code on a card that passes; a redirect passes when confirmed. Answered once; a challenge
   * that was answered or closed (the reconciler gave up on it) changes nothing any more.
   */
  async answerChallenge(idempotencyKey: string, answer: { code?: string; confirm: boolean }): Promise<string | undefined> {
    const ref = refOfKey(idempotencyKey);
    const entry = await this.entry(ref);
    if (!entry?.returnUrl) return undefined;
    const pending = entry.pending;
    if (!pending) return entry.returnUrl;
    const passed = answer.confirm && pending.then === 'approve' && (pending.flow === 'redirect' || answer.code === SANDBOX_OTP);
    const outcome: AcquirerOutcome = passed
      ? await this.approved(entry.acquirerRef, entry.card, pending.storeCredential)
      : { kind: 'declined', acquirerRef: entry.acquirerRef, reason: pending.flow === '3ds' ? SANDBOX_REASONS.threeDsFailed : SANDBOX_REASONS.redirectFailed };
    try {
      await this.update(
        ref.paymentId,
        'SET #e.#k.outcome = :o, #e.#k.#s = :s, #e.#k.capturedMinor = :c, #e.#k.refundedMinor = :z REMOVE #e.#k.pending',
        'attribute_exists(#e.#k.pending)',
        { '#k': canonical(idempotencyKey), '#s': 'status' },
        { ':o': outcome, ':s': passed ? 'approved' : 'declined', ':c': passed && pending.capture ? entry.amountMinor : 0, ':z': 0 },
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
    return entry.returnUrl;
  }

  /**
   * A capture, refund, void or reversal: decided on the authorization's balances and written in one
   * conditional update together with them, so concurrent follow-ups can never both pass a rule.
   */
  private async followUp(kind: FollowUpKind | 'reversal', request: FollowUpRequest): Promise<FollowUpOutcome> {
    const key = canonical(request.idempotencyKey);
    const authKey = canonical(request.authorization.idempotencyKey);
    // Each round decides on the balances it read; a lost race reads again (like an acquirer's own
    // serialization, it never fails the request because of concurrency).
    for (let round = 0; round < 100; round++) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * Math.min(50, 2 ** round))));
      const ledger = await this.ledger(request.paymentId);
      const existing = ledger?.entries[key];
      if (existing) return answerOf(existing) as FollowUpOutcome;
      const auth = ledger?.entries[authKey];
      const acquirerRef = newRef();
      const base = { idempotencyKey: key, operation: kind, acquirerRef, card: auth?.card ?? NO_CARD, amountMinor: request.amountMinor, currency: request.currency, of: authKey };
      const decline = (reason: string) => this.record(request.paymentId, { ...base, outcome: { kind: 'declined', acquirerRef, reason }, status: 'declined' }) as Promise<FollowUpOutcome>;
      if (!auth || auth.status !== 'approved' || auth.acquirerRef !== request.authorization.acquirerRef) return decline(SANDBOX_FOLLOW_UP_REASONS.unknownAuthorization);
      const plan = kind === 'reversal' ? { kind: 'approve' as const } : planFollowUp(kind, auth.card);
      if (plan.kind === 'decline') return decline(plan.reason);
      const rule = balanceRule(kind, auth, request.amountMinor);
      if ('refused' in rule) return decline(rule.refused);
      const entry: LedgerEntry = { ...base, at: new Date().toISOString(), seq: nextSeq(), outcome: { kind: 'approved', acquirerRef }, status: 'approved' };
      try {
        await this.update(
          request.paymentId,
          `SET #e.#k = :entry, ${rule.set}`,
          `attribute_not_exists(#e.#k) AND #e.#a.#s = :approved AND ${rule.condition}`,
          { '#k': key, '#a': authKey, '#s': 'status' },
          { ':entry': entry, ':approved': 'approved', ...rule.values },
        );
        return entry.outcome as FollowUpOutcome;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        // Another operation changed the balances (or answered this key) first: decide again.
      }
    }
    throw new Error(`sandbox: ${kind} ${key} kept losing races`);
  }

  private async approved(acquirerRef: string, card: CardFacts, storeCredential: boolean): Promise<AcquirerOutcome> {
    if (!storeCredential) return { kind: 'approved', acquirerRef };
    const storedCredentialRef = `sbxcred_${randomUUID().replace(/-/g, '')}`;
    await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...credentialKey(storedCredentialRef), kind: 'sandbox-credential', card } }));
    return { kind: 'approved', acquirerRef, storedCredentialRef };
  }

  private async cardOf(request: AuthorizeRequest): Promise<CardFacts | undefined> {
    if (request.instrument.kind === 'card') {
      const c = request.instrument.card;
      return { mask: `${c.pan.slice(0, 6)}****${c.pan.slice(-4)}`, expMonth: c.expMonth, expYear: c.expYear };
    }
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: credentialKey(request.instrument.storedCredentialRef) }));
    return out.Item?.card as CardFacts | undefined;
  }

  private async record(paymentId: string, entry: Omit<LedgerEntry, 'at' | 'seq'>): Promise<AcquirerOutcome> {
    return answerOf(await this.recordEntry(paymentId, entry));
  }

  /** The first writer of an idempotency key wins; everyone else gets the winner's entry. */
  private async recordEntry(paymentId: string, partial: Omit<LedgerEntry, 'at' | 'seq'>): Promise<LedgerEntry> {
    const entry: LedgerEntry = { ...partial, at: new Date().toISOString(), seq: nextSeq() };
    for (let i = 0; i < 2; i++) {
      try {
        await this.update(paymentId, 'SET #e.#k = :entry', 'attribute_not_exists(#e.#k)', { '#k': entry.idempotencyKey }, { ':entry': entry });
        return entry;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const ledger = await this.ledger(paymentId);
        const winner = ledger?.entries[entry.idempotencyKey];
        if (winner) return winner;
        // The payment's first operation: its ledger item is created, then the entry written.
        if (!ledger) await this.ensureLedger(paymentId);
      }
    }
    throw new Error(`sandbox: could not record ${entry.idempotencyKey}`);
  }

  private async ensureLedger(paymentId: string): Promise<void> {
    try {
      await this.db.send(new PutCommand({ TableName: this.tableName, Item: { ...ledgerKey(paymentId), kind: 'sandbox-ledger', paymentId, entries: {} }, ConditionExpression: 'attribute_not_exists(pk)' }));
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  private update(paymentId: string, expression: string, condition: string, names: Record<string, string>, values: Record<string, unknown>) {
    return this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: ledgerKey(paymentId),
        UpdateExpression: expression,
        ConditionExpression: `attribute_exists(pk) AND ${condition}`,
        ExpressionAttributeNames: { '#e': 'entries', ...names },
        ExpressionAttributeValues: values,
      }),
    );
  }

  private async ledger(paymentId: string): Promise<LedgerItem | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: ledgerKey(paymentId), ConsistentRead: true }));
    return out.Item as LedgerItem | undefined;
  }

  private async entry(ref: OperationRef): Promise<LedgerEntry | undefined> {
    return (await this.ledger(ref.paymentId))?.entries[canonical(ref.idempotencyKey)];
  }
}

export const SANDBOX_FOLLOW_UP_REASONS = {
  unknownAuthorization: 'Unknown authorization.',
  alreadyCaptured: 'The authorization was already captured or released.',
  captureTooBig: 'Capture amount exceeds the authorized amount.',
  notCaptured: 'Nothing was captured.',
  voidedOrReversed: 'The payment was voided or reversed.',
  refunded: 'The payment has refunds.',
  refundTooBig: 'Refund exceeds the captured amount not yet refunded.',
} as const;

/** The acquirer's money rule for a follow-up on an authorization, as a condition on its balances. */
function balanceRule(kind: FollowUpKind | 'reversal', auth: LedgerEntry, amountMinor: number): { refused: string } | { condition: string; set: string; values: Record<string, unknown> } {
  const captured = auth.capturedMinor ?? 0;
  const refunded = auth.refundedMinor ?? 0;
  const closed = auth.voided || auth.reversed;
  const open = '(attribute_not_exists(#e.#a.voided) OR #e.#a.voided = :no) AND (attribute_not_exists(#e.#a.reversed) OR #e.#a.reversed = :no)';
  const R = SANDBOX_FOLLOW_UP_REASONS;
  switch (kind) {
    case 'capture':
      if (auth.operation !== 'auth' || captured > 0 || closed) return { refused: R.alreadyCaptured };
      if (amountMinor > auth.amountMinor) return { refused: R.captureTooBig };
      return { condition: `#e.#a.capturedMinor = :zero AND ${open}`, set: '#e.#a.capturedMinor = :amount', values: { ':zero': 0, ':no': false, ':amount': amountMinor } };
    case 'void':
      if (closed) return { refused: R.voidedOrReversed };
      if (captured === 0) return { refused: R.notCaptured };
      if (refunded > 0) return { refused: R.refunded };
      return { condition: `#e.#a.capturedMinor = :captured AND #e.#a.refundedMinor = :zero AND ${open}`, set: '#e.#a.voided = :yes', values: { ':captured': captured, ':zero': 0, ':no': false, ':yes': true } };
    case 'refund':
      if (closed) return { refused: R.voidedOrReversed };
      if (captured === 0) return { refused: R.notCaptured };
      if (refunded + amountMinor > captured) return { refused: R.refundTooBig };
      return {
        condition: `#e.#a.capturedMinor = :captured AND #e.#a.refundedMinor = :refunded AND ${open}`,
        set: '#e.#a.refundedMinor = :next',
        values: { ':captured': captured, ':refunded': refunded, ':no': false, ':next': refunded + amountMinor },
      };
    case 'reversal':
      // An uncaptured authorization is released; an approved sale is reversed whole if nothing was given back.
      if (closed) return { refused: R.voidedOrReversed };
      if (refunded > 0) return { refused: R.refunded };
      if (auth.operation === 'auth' && captured > 0) return { refused: R.alreadyCaptured };
      return { condition: `#e.#a.capturedMinor = :captured AND #e.#a.refundedMinor = :zero AND ${open}`, set: '#e.#a.reversed = :yes', values: { ':captured': captured, ':zero': 0, ':no': false, ':yes': true } };
  }
}

/** What the caller is told for a recorded entry (a barred key is a decline). */
function answerOf(entry: LedgerEntry): AcquirerOutcome {
  return entry.outcome;
}

/** The kind of operation one of our keys names (`<payment>.<n>`, `<payment>.<kind>.<trans_id>`). */
function operationOfKey(key: string): LedgerOperation {
  const kind = key.split('.')[1];
  return kind === 'capture' || kind === 'refund' || kind === 'void' || kind === 'reversal' ? kind : 'sale';
}

/** Our keys start with the payment id. */
function refOfKey(idempotencyKey: string): OperationRef {
  return { paymentId: idempotencyKey.split('.')[0] ?? '', idempotencyKey };
}
