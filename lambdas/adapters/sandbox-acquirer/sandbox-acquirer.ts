import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { PutCommand, UpdateCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isKnownCurrency } from '../../domain/money';
import type { Acquirer, AcquirerOutcome, AuthorizeRequest, FollowUpOutcome, FollowUpRequest, OperationRef } from '../../ports/acquirer';
import { isConditionFailure } from '../dynamodb/client';
import { ledgerKey, readLedgerItem, type CardFacts, type LateRequest, type LedgerEntry, type LedgerItem, type LedgerOperation } from './ledger';
import { SANDBOX_CODE_TRIES, SANDBOX_OTP, SANDBOX_REASONS, planAuthorization, planFollowUp, planRecurring } from './rules';

export { sandboxLedger, ledgerRecords, type CardFacts, type LedgerOperation, type LedgerOutcome, type SandboxLedgerRecord } from './ledger';

/** The follow-ups the sandbox records; `reversal` releases an authorization or reverses a whole sale. */
export type SandboxFollowUp = 'capture' | 'void' | 'refund' | 'reversal';

export const SANDBOX_CLOSED_REASONS = {
  /** A key closed before any request with it arrived; a late request with it gets this answer. */
  neverReceived: 'Closed before it was received.',
  /** A challenge or redirect closed while the customer had not answered it. */
  abandoned: 'The customer did not complete the confirmation.',
} as const;

/** Why the sandbox refuses a request that would move money wrongly (it declines; it never throws). */
export const SANDBOX_FOLLOW_UP_REASONS = {
  invalidAmount: 'Invalid amount.',
  unknownCurrency: 'Unknown currency.',
  unknownAuthorization: 'Unknown authorization.',
  notApproved: 'The authorization was not approved.',
  currencyMismatch: 'The currency differs from the authorization.',
  capturedAtAuthorization: 'The payment was captured when it was authorized.',
  alreadyCaptured: 'The authorization was already captured.',
  released: 'The authorization was released.',
  captureTooBig: 'Capture amount exceeds the authorized amount.',
  notCaptured: 'Nothing was captured.',
  voided: 'The payment was voided.',
  reversed: 'The payment was reversed.',
  refunded: 'The payment has refunds.',
  refundTooBig: 'Refund exceeds the captured amount not yet refunded.',
} as const;

/** What the simulated challenge page shows for an authorization that asked the customer to confirm. */
export interface ChallengeView {
  readonly paymentId: string;
  readonly flow: '3ds' | 'redirect';
  /** open = waiting for the customer; finished = answered; closed = closed unanswered (answers are refused). */
  readonly state: 'open' | 'finished' | 'closed';
}

/** What became of the customer's answer on the challenge page. */
export interface ChallengeAnswer {
  /**
   * approved / declined = this answer decided it; retry = a wrong one-time code, the challenge is
   * still open (`codeTriesLeft`); finished = answered before; closed = refused, it was closed.
   */
  readonly result: 'approved' | 'declined' | 'retry' | 'finished' | 'closed';
  readonly codeTriesLeft?: number;
  readonly flow: '3ds' | 'redirect';
  readonly paymentId: string;
}

const credentialKey = (ref: string) => ({ pk: `SANDBOX-CREDENTIAL#${ref}`, sk: 'CREDENTIAL' });
/** Keys are canonical: our keys are UUIDs and words, so they are compared and stored lower-cased. */
const canonical = (key: string) => key.toLowerCase();
const newRef = () => `sbx_${randomUUID().replace(/-/g, '')}`;
const NO_CARD: CardFacts = { mask: '', expMonth: 0, expYear: 0 };
const validAmount = (amountMinor: number) => Number.isSafeInteger(amountMinor) && amountMinor > 0;
/** DynamoDB stores finite numbers only: an unusable amount is kept as 0 on its (declined) record. */
const storableAmount = (amountMinor: number) => (Number.isFinite(amountMinor) ? amountMinor : 0);

/** A short random wait before a lost race is decided again. */
const pause = (round: number) => new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * Math.min(50, 2 ** round))));

let sequence = 0;
const nextSeq = () => Date.now() * 1000 + (sequence++ % 1000);

type NewEntry = Omit<LedgerEntry, 'at' | 'seq'>;

/**
 * A simulated acquirer with the platform's test cards (rules.ts, docs/sandbox.md). Its memory lives in
 * the service's table under its own keys, one ledger item per payment, as a real acquirer's would live
 * on its side. Every change is one conditional write of that item: the first writer of an idempotency
 * key wins and everyone else gets the winner's answer, and a follow-up is approved only in the same
 * write that changes the authorization's balances under the money rules (capture once and at most the
 * authorized amount; void only of a capture with nothing refunded; refunds up to what was captured;
 * nothing after a void or reversal), so they hold under any concurrency. It never sees more of a card
 * than its mask and expiry after the request.
 */
export class SandboxAcquirer implements Acquirer {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async authorize(request: AuthorizeRequest): Promise<AcquirerOutcome> {
    const key = canonical(request.idempotencyKey);
    const operation: LedgerOperation = request.recurring ? 'recurring' : request.capture ? 'sale' : 'auth';
    const existing = await this.entry(request);
    if (existing) return this.replay(request.paymentId, existing, () => this.lateOf(operation, request));

    const acquirerRef = newRef();
    const base = {
      idempotencyKey: key,
      operation,
      acquirerRef,
      amountMinor: storableAmount(request.amountMinor),
      currency: request.currency,
      capture: request.capture,
    };
    const card = await this.cardOf(request);
    const declined = (reason: string, facts: CardFacts = card ?? NO_CARD, soft?: boolean): NewEntry => ({
      ...base,
      card: facts,
      outcome: { kind: 'declined', acquirerRef, reason, ...(soft ? { soft } : {}) },
      status: 'declined',
    });
    const approved = async (facts: CardFacts): Promise<NewEntry> => ({
      ...base,
      card: facts,
      outcome: await this.approved(acquirerRef, facts, request.storeCredential),
      status: 'approved',
      capturedMinor: request.capture ? request.amountMinor : 0,
      refundedMinor: 0,
    });
    const answer = (entry: NewEntry) => this.record(request.paymentId, entry, () => this.lateOf(operation, request));

    if (!validAmount(request.amountMinor)) return answer(declined(SANDBOX_FOLLOW_UP_REASONS.invalidAmount));
    if (!isKnownCurrency(request.currency)) return answer(declined(SANDBOX_FOLLOW_UP_REASONS.unknownCurrency));
    if (!card) return answer(declined(SANDBOX_REASONS.recurringUnavailable));
    if (request.instrument.kind === 'stored' && request.recurring) {
      const plan = planRecurring(card, request.amountMinor, request.attempt);
      return plan.kind === 'approve' ? answer(await approved(card)) : answer(declined(plan.reason, card, plan.soft));
    }
    const plan = planAuthorization(card);
    switch (plan.kind) {
      case 'approve':
        return answer(await approved(card));
      case 'decline':
        return answer(declined(plan.reason));
      case 'challenge': {
        // The page has a key of its own, unguessable; where the customer returns is never stored
        // (it names the checkout link): the checkout hands it to the page through the browser.
        const pageKey = `${key}.${randomBytes(16).toString('base64url')}`;
        const url = `${new URL(request.returnUrl).origin}/sandbox/challenge/${pageKey}`;
        return answer({
          ...base,
          card,
          challengeKey: pageKey,
          outcome: { kind: 'action', acquirerRef, flow: plan.flow, url },
          status: 'pending',
          challenge: plan.flow,
          pending: { flow: plan.flow, then: plan.then, capture: request.capture, storeCredential: request.storeCredential },
        });
      }
      case 'no-answer': {
        // The acquirer approves, but its answer is lost on the way: the caller hears nothing. Asking
        // again (lookup, close, the same request) gets the approval.
        const { entry, won } = await this.recordEntry(request.paymentId, await approved(card));
        if (won) return { kind: 'unknown', acquirerRef, reason: SANDBOX_REASONS.unknown };
        return this.replay(request.paymentId, entry, () => this.lateOf(operation, request));
      }
    }
  }

  /** The result after the customer's challenge or redirect: `action` while still unanswered. */
  async completeAction(ref: OperationRef): Promise<AcquirerOutcome> {
    const entry = await this.entry(ref);
    return entry?.outcome ?? { kind: 'unknown', acquirerRef: '', reason: 'The acquirer has no operation with this key.' };
  }

  async lookup(ref: OperationRef): Promise<AcquirerOutcome | undefined> {
    return (await this.entry(ref))?.outcome;
  }

  /**
   * Makes an operation final. A challenge still pending is closed and declined (its page refuses
   * answers from now on); a key never received is barred: a declined entry is written under it, so a
   * late request with it gets that answer and moves no money. Anything else keeps its recorded answer
   * (08/38: the approval whose answer was lost).
   */
  async close(ref: OperationRef): Promise<AcquirerOutcome> {
    const key = canonical(ref.idempotencyKey);
    for (let round = 0; round < 100; round++) {
      if (round > 0) await pause(round);
      const entry = await this.entry(ref);
      if (!entry) {
        const acquirerRef = newRef();
        const { entry: recorded, won } = await this.recordEntry(ref.paymentId, {
          idempotencyKey: key,
          operation: operationOfKey(key),
          acquirerRef,
          card: NO_CARD,
          amountMinor: 0,
          currency: '',
          outcome: { kind: 'declined', acquirerRef, reason: SANDBOX_CLOSED_REASONS.neverReceived },
          status: 'declined',
          closed: 'barred',
        });
        if (won) return recorded.outcome;
        // The request itself arrived first: decide on what it recorded.
        continue;
      }
      if (!entry.pending) return entry.outcome;
      const outcome: AcquirerOutcome = { kind: 'declined', acquirerRef: entry.acquirerRef, reason: SANDBOX_CLOSED_REASONS.abandoned };
      try {
        await this.update(
          ref.paymentId,
          'SET #e.#k.outcome = :o, #e.#k.#s = :s, #e.#k.closed = :closed REMOVE #e.#k.pending',
          'attribute_exists(#e.#k.pending)',
          { '#k': key, '#s': 'status' },
          { ':o': outcome, ':s': 'declined', ':closed': 'abandoned' },
        );
        return outcome;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        // The customer answered just before: that answer is final.
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

  /** The simulated challenge page by its own key; undefined when there is no such page. */
  async challenge(pageKey: string): Promise<ChallengeView | undefined> {
    const found = await this.challengeOf(pageKey);
    if (!found) return undefined;
    const { entry, ref, flow } = found;
    return { paymentId: ref.paymentId, flow, state: entry.pending ? 'open' : entry.closed ? 'closed' : 'finished' };
  }

  /** The entry a page key belongs to: `<idempotency key>.<random>`, compared in constant time. */
  private async challengeOf(pageKey: string): Promise<{ entry: LedgerEntry; ref: OperationRef; flow: '3ds' | 'redirect' } | undefined> {
    const cut = pageKey.lastIndexOf('.');
    if (cut <= 0) return undefined;
    const ref = refOfKey(pageKey.slice(0, cut));
    const entry = await this.entry(ref);
    const flow = entry?.challenge ?? entry?.pending?.flow;
    if (!entry?.challengeKey || !flow) return undefined;
    const given = Buffer.from(pageKey);
    const stored = Buffer.from(entry.challengeKey);
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) return undefined;
    return { entry, ref, flow };
  }

  /**
   * The customer's answer on the simulated challenge page. A 3-D Secure challenge passes with the
   * sandbox code on a card that passes; a redirect passes when confirmed. It is answered once, in a
   * write conditional on the challenge still pending: an answer to a challenge answered before
   * changes nothing, and one to a closed challenge is refused.
   */
  async answer(pageKey: string, answer: { code?: string; confirm: boolean }): Promise<ChallengeAnswer | undefined> {
    const found = await this.challengeOf(pageKey);
    return found ? this.answerEntry(found.ref, found.entry, found.flow, answer) : undefined;
  }

  /** The same answer by the authorization's idempotency key (tests and the money model). */
  async answerChallenge(idempotencyKey: string, answer: { code?: string; confirm: boolean }): Promise<ChallengeAnswer['result'] | undefined> {
    const ref = refOfKey(idempotencyKey);
    const entry = await this.entry(ref);
    const flow = entry?.challenge ?? entry?.pending?.flow;
    return entry && flow ? (await this.answerEntry(ref, entry, flow, answer)).result : undefined;
  }

  private async answerEntry(ref: OperationRef, entry: LedgerEntry, flow: '3ds' | 'redirect', answer: { code?: string; confirm: boolean }): Promise<ChallengeAnswer> {
    const paymentId = ref.paymentId;
    const pending = entry.pending;
    if (!pending) return { result: entry.closed ? 'closed' : 'finished', flow, paymentId };
    // A mistyped code is asked again, as issuers do; only the last allowed wrong code declines.
    const wrongCodes = pending.wrongCodes ?? 0;
    if (answer.confirm && pending.flow === '3ds' && answer.code !== SANDBOX_OTP && wrongCodes + 1 < SANDBOX_CODE_TRIES) {
      try {
        await this.update(
          ref.paymentId,
          'SET #e.#k.pending.wrongCodes = :n',
          'attribute_exists(#e.#k.pending) AND (attribute_not_exists(#e.#k.pending.wrongCodes) OR #e.#k.pending.wrongCodes = :was)',
          { '#k': canonical(ref.idempotencyKey) },
          { ':n': wrongCodes + 1, ':was': wrongCodes },
        );
        return { result: 'retry', flow, paymentId, codeTriesLeft: SANDBOX_CODE_TRIES - wrongCodes - 1 };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        // Answered, closed or mistyped in another tab a moment before: decide on what is there now.
        const now = await this.entry(ref);
        return now ? this.answerEntry(ref, now, flow, answer) : { result: 'finished', flow, paymentId };
      }
    }
    const passed = answer.confirm && pending.then === 'approve' && (pending.flow === 'redirect' || answer.code === SANDBOX_OTP);
    const outcome: AcquirerOutcome = passed
      ? await this.approved(entry.acquirerRef, entry.card, pending.storeCredential)
      : { kind: 'declined', acquirerRef: entry.acquirerRef, reason: pending.flow === '3ds' ? SANDBOX_REASONS.threeDsFailed : SANDBOX_REASONS.redirectFailed };
    try {
      await this.update(
        ref.paymentId,
        'SET #e.#k.outcome = :o, #e.#k.#s = :s, #e.#k.capturedMinor = :c, #e.#k.refundedMinor = :z REMOVE #e.#k.pending',
        'attribute_exists(#e.#k.pending)',
        { '#k': canonical(ref.idempotencyKey), '#s': 'status' },
        { ':o': outcome, ':s': passed ? 'approved' : 'declined', ':c': passed && pending.capture ? entry.amountMinor : 0, ':z': 0 },
      );
      return { result: passed ? 'approved' : 'declined', flow, paymentId };
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
      // Answered in another tab, or closed by reconciliation, a moment before.
      const now = await this.entry(ref);
      return { result: now?.closed ? 'closed' : 'finished', flow, paymentId };
    }
  }


  /**
   * A capture, refund, void or reversal. Declined when the authorization does not allow it (the money
   * rules, the test cards' triggers); approved only by one conditional write that checks the rule on
   * the authorization's balances and changes them, so concurrent follow-ups can never both pass.
   */
  private async followUp(kind: SandboxFollowUp, request: FollowUpRequest): Promise<FollowUpOutcome> {
    const key = canonical(request.idempotencyKey);
    const authKey = canonical(request.authorization.idempotencyKey);
    const late = (): LateRequest => ({ operation: kind, amountMinor: storableAmount(request.amountMinor), currency: request.currency, card: NO_CARD, at: new Date().toISOString() });
    // Each round decides on the balances it read; a lost race reads again (like an acquirer's own
    // serialization, it never fails the request because of concurrency).
    for (let round = 0; round < 100; round++) {
      if (round > 0) await pause(round);
      const ledger = await this.ledger(request.paymentId);
      const existing = ledger?.entries[key];
      if (existing) return (await this.replay(request.paymentId, existing, late)) as FollowUpOutcome;
      const auth = ledger?.entries[authKey];
      const acquirerRef = newRef();
      const base = { idempotencyKey: key, operation: kind, acquirerRef, card: auth?.card ?? NO_CARD, currency: request.currency, of: authKey };
      const decision = decideFollowUp(kind, auth, request);
      if ('refused' in decision) {
        const entry: NewEntry = { ...base, amountMinor: storableAmount(request.amountMinor), outcome: { kind: 'declined', acquirerRef, reason: decision.refused }, status: 'declined' };
        return (await this.record(request.paymentId, entry, late)) as FollowUpOutcome;
      }
      const entry: LedgerEntry = { ...base, amountMinor: decision.amountMinor, at: new Date().toISOString(), seq: nextSeq(), outcome: { kind: 'approved', acquirerRef }, status: 'approved' };
      try {
        await this.update(
          request.paymentId,
          `SET #e.#k = :entry, ${decision.set}`,
          `attribute_not_exists(#e.#k) AND #e.#a.#s = :approved AND #e.#a.acquirerRef = :authRef AND ${decision.condition}`,
          { '#k': key, '#a': authKey, '#s': 'status' },
          { ':entry': entry, ':approved': 'approved', ':authRef': request.authorization.acquirerRef, ...decision.values },
        );
        return entry.outcome as FollowUpOutcome;
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        // Another operation changed the balances (or answered this key) first: decide again.
      }
    }
    throw new Error(`sandbox: ${kind} ${key} kept losing races`);
  }

  /** A request with a key already recorded gets the recorded answer; on a barred key it is noted as late. */
  private async replay(paymentId: string, entry: LedgerEntry, late: () => LateRequest | Promise<LateRequest>): Promise<AcquirerOutcome> {
    if (entry.closed === 'barred' && !entry.late) {
      try {
        await this.update(paymentId, 'SET #e.#k.late = :late', '#e.#k.closed = :barred AND attribute_not_exists(#e.#k.late)', { '#k': entry.idempotencyKey }, { ':late': await late(), ':barred': 'barred' });
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
      }
    }
    return entry.outcome;
  }

  private async lateOf(operation: LedgerOperation, request: AuthorizeRequest): Promise<LateRequest> {
    return { operation, amountMinor: storableAmount(request.amountMinor), currency: request.currency, card: (await this.cardOf(request)) ?? NO_CARD, at: new Date().toISOString() };
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

  /** Records an entry (first writer of its key wins) and answers what was recorded under the key. */
  private async record(paymentId: string, partial: NewEntry, late: () => LateRequest | Promise<LateRequest>): Promise<AcquirerOutcome> {
    const { entry, won } = await this.recordEntry(paymentId, partial);
    return won ? entry.outcome : this.replay(paymentId, entry, late);
  }

  /** The first writer of an idempotency key wins; everyone else gets the winner's entry. */
  private async recordEntry(paymentId: string, partial: NewEntry): Promise<{ entry: LedgerEntry; won: boolean }> {
    const entry: LedgerEntry = { ...partial, at: new Date().toISOString(), seq: nextSeq() };
    for (let i = 0; i < 3; i++) {
      try {
        await this.update(paymentId, 'SET #e.#k = :entry', 'attribute_not_exists(#e.#k)', { '#k': entry.idempotencyKey }, { ':entry': entry });
        return { entry, won: true };
      } catch (e) {
        if (!isConditionFailure(e)) throw e;
        const ledger = await this.ledger(paymentId);
        const winner = ledger?.entries[entry.idempotencyKey];
        if (winner) return { entry: winner, won: false };
        // The payment's first operation: its ledger item is created, then the entry written.
        if (!ledger) await this.ensureLedger(paymentId);
      }
    }
    throw new Error(`sandbox: could not record ${entry.idempotencyKey}`);
  }

  private async ensureLedger(paymentId: string): Promise<void> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...ledgerKey(paymentId), kind: 'sandbox-ledger', paymentId: paymentId.toLowerCase(), entries: {} },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
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

  private ledger(paymentId: string): Promise<LedgerItem | undefined> {
    return readLedgerItem(this.db, this.tableName, paymentId);
  }

  private async entry(ref: OperationRef): Promise<LedgerEntry | undefined> {
    return (await this.ledger(ref.paymentId))?.entries[canonical(ref.idempotencyKey)];
  }
}

type Decision = { readonly refused: string } | { readonly amountMinor: number; readonly condition: string; readonly set: string; readonly values: Record<string, unknown> };

/** Authorized with capture (sale, recurring) or for a later capture (auth). */
const capturesLater = (auth: LedgerEntry) => (auth.capture === undefined ? auth.operation === 'auth' : !auth.capture);

/**
 * The acquirer's decision on a follow-up, from the authorization as read: a refusal, or the amount it
 * moves with the condition that must still hold on the authorization's balances when it is written
 * (names: #e entries, #a the authorization's key) and the change of those balances.
 */
function decideFollowUp(kind: SandboxFollowUp, auth: LedgerEntry | undefined, request: FollowUpRequest): Decision {
  const R = SANDBOX_FOLLOW_UP_REASONS;
  if (!auth || auth.acquirerRef !== request.authorization.acquirerRef || !['sale', 'auth', 'recurring'].includes(auth.operation)) return { refused: R.unknownAuthorization };
  if (auth.status !== 'approved') return { refused: R.notApproved };
  if (request.currency !== auth.currency) return { refused: R.currencyMismatch };
  if ((kind === 'capture' || kind === 'refund') && !validAmount(request.amountMinor)) return { refused: R.invalidAmount };
  if (kind !== 'reversal') {
    const trigger = planFollowUp(kind, auth.card);
    if (trigger.kind === 'decline') return { refused: trigger.reason };
  }
  const captured = auth.capturedMinor ?? 0;
  const refunded = auth.refundedMinor ?? 0;
  const later = capturesLater(auth);
  if (auth.voided) return { refused: R.voided };
  if (auth.reversed) return { refused: later && captured === 0 ? R.released : R.reversed };
  const open = '(attribute_not_exists(#e.#a.voided) OR #e.#a.voided = :no) AND (attribute_not_exists(#e.#a.reversed) OR #e.#a.reversed = :no)';
  // Every value given must be used by the expressions (DynamoDB refuses unused ones).
  const unchanged = (capturedMinor: number) => ({ ':captured': capturedMinor, ':zero': 0, ':no': false });
  switch (kind) {
    case 'capture':
      if (!later) return { refused: R.capturedAtAuthorization };
      if (captured > 0) return { refused: R.alreadyCaptured };
      if (request.amountMinor > auth.amountMinor) return { refused: R.captureTooBig };
      return {
        amountMinor: request.amountMinor,
        condition: `#e.#a.capturedMinor = :zero AND ${open}`,
        set: '#e.#a.capturedMinor = :amount',
        values: { ':zero': 0, ':no': false, ':amount': request.amountMinor },
      };
    case 'void':
      // A void gives back everything captured, whatever amount it was asked for.
      if (captured === 0) return { refused: R.notCaptured };
      if (refunded > 0) return { refused: R.refunded };
      return {
        amountMinor: captured,
        condition: `#e.#a.capturedMinor = :captured AND #e.#a.refundedMinor = :zero AND ${open}`,
        set: '#e.#a.voided = :yes',
        values: { ...unchanged(captured), ':yes': true },
      };
    case 'refund':
      if (captured === 0) return { refused: R.notCaptured };
      if (refunded + request.amountMinor > captured) return { refused: R.refundTooBig };
      // An atomic addition: concurrent refunds all pass while together they fit, and no more.
      return {
        amountMinor: request.amountMinor,
        condition: `#e.#a.capturedMinor = :captured AND #e.#a.refundedMinor <= :room AND ${open}`,
        set: '#e.#a.refundedMinor = #e.#a.refundedMinor + :amount',
        values: { ':captured': captured, ':no': false, ':room': captured - request.amountMinor, ':amount': request.amountMinor },
      };
    case 'reversal':
      if (later) {
        // The release of an uncaptured authorization: all of it.
        if (captured > 0) return { refused: R.alreadyCaptured };
        return {
          amountMinor: auth.amountMinor,
          condition: `#e.#a.capturedMinor = :zero AND #e.#a.refundedMinor = :zero AND ${open}`,
          set: '#e.#a.reversed = :yes',
          values: { ':zero': 0, ':no': false, ':yes': true },
        };
      }
      // The reversal of a whole sale: only while nothing of it was given back.
      if (refunded > 0) return { refused: R.refunded };
      return {
        amountMinor: captured,
        condition: `#e.#a.capturedMinor = :captured AND #e.#a.refundedMinor = :zero AND ${open}`,
        set: '#e.#a.reversed = :yes',
        values: { ...unchanged(captured), ':yes': true },
      };
  }
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
