import { randomBytes, randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Acquirer, AcquirerChargeback, AcquirerOutcome, AuthorizeRequest, DisputeNews, FollowUpOutcome, FollowUpRequest, OperationRef } from '../../ports/acquirer';
import { SandboxDisputes } from './disputes';
import type { ChargebackRefusal } from './bank';
import { systemClock, type Clock } from '../../ports/clock';
import { cardFactsOf, decideAuthorization, decideFollowUp, SANDBOX_CLOSED_REASONS, type SandboxFollowUp } from './bank';
import { SandboxChallengeDesk, type SandboxChallenges } from './challenge';
import { canonicalKey, operationOfKey, type CardFacts, type LateRequest, type LedgerEntry, type LedgerOperation } from './ledger';
import { SandboxLedgerStore } from './ledger-store';
import { chargedBackLater, SANDBOX_REASONS } from './rules';
import { readSandboxWalletToken, SANDBOX_WALLET_REASONS } from './wallet-token';
import { retry, TRY_AGAIN, type RetryPolicy } from '../../domain/retry-policy';

export { SANDBOX_CLOSED_REASONS, SANDBOX_FOLLOW_UP_REASONS, type SandboxFollowUp } from './bank';
export type { ChallengeAnswer, ChallengeView, SandboxChallenges } from './challenge';
export { sandboxLedger } from './ledger-store';
export { ledgerRecords, type CardFacts, type LedgerOperation, type LedgerOutcome, type SandboxLedgerRecord } from './ledger';

/** The sandbox's randomness, injected so tests can make it predictable. */
export interface SandboxRandom {
  /** 32 hex digits: the acquirer's references (`sbx_…`) and stored credentials (`sbxcred_…`). */
  reference(): string;
  /** The unguessable half of a challenge page's key. */
  pageSecret(): string;
  /** In [0, 1): spreads the pauses before a lost race is decided again. */
  jitter(): number;
}

export const cryptoRandom: SandboxRandom = {
  reference: () => randomUUID().replace(/-/g, ''),
  pageSecret: () => randomBytes(16).toString('base64url'),
  jitter: () => Math.random(),
};

export interface SandboxOptions {
  /** The acquirer's own clock: when it received each operation. */
  readonly clock?: Clock;
  readonly random?: SandboxRandom;
  /** Waits before a lost race is decided again (real time by default: it spaces writes to one item). */
  readonly sleep?: (ms: number) => Promise<void>;
}

const NO_CARD: CardFacts = { mask: '', expMonth: 0, expYear: 0 };
/** DynamoDB stores finite numbers only: an unusable amount is kept as 0 on its (declined) record. */
const storableAmount = (amountMinor: number) => (Number.isFinite(amountMinor) ? amountMinor : 0);
/**
 * A request lost to a concurrent one is decided again, 100 times at most, after pauses below 2, 4,
 * … 50 ms (the one retry policy, domain/retry-policy.ts), before it fails.
 */
const RACE_RETRY: RetryPolicy = { tries: 100, firstDelayMs: 2, maxDelayMs: 50, jitter: 'full' };

/** Orders a payment's entries: time-based and increasing within a process, even with a clock that stands still or goes back. */
let lastSeq = 0;
const nextSeq = (nowMs: number) => (lastSeq = Math.max(lastSeq + 1, nowMs * 1000));

type NewEntry = Omit<LedgerEntry, 'at' | 'seq'>;

/**
 * A simulated acquirer with the platform's test cards (docs/sandbox.md), in the S2S CARD connector's
 * shape: this connector maps the Acquirer port onto a pure bank (bank.ts, rules.ts) and a ledger
 * store (ledger-store.ts); the customer's pages go through its challenges (challenge.ts). Its memory
 * lives in the service's table under its own keys, one ledger item per payment, as a real acquirer's
 * would live on its side: the first writer of an idempotency key wins and everyone else gets the
 * winner's answer, and a follow-up is approved only in the same write that changes the
 * authorization's balances under the bank's rules, so they hold under any concurrency. It never
 * sees more of a card than its mask and expiry after the request.
 */
export class SandboxAcquirer implements Acquirer {
  readonly challenges: SandboxChallenges;
  private readonly disputes: SandboxDisputes;
  private readonly store: SandboxLedgerStore;
  private readonly clock: Clock;
  private readonly random: SandboxRandom;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(db: DynamoDBDocumentClient, tableName: string, options: SandboxOptions = {}) {
    this.store = new SandboxLedgerStore(db, tableName);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? cryptoRandom;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.challenges = new SandboxChallengeDesk(this.store, () => this.credentialRef());
    this.disputes = new SandboxDisputes(this.store, this.clock, () => this.newRef(), (entry) => this.stamped(entry));
  }

  chargebacks(authorization: OperationRef): Promise<readonly AcquirerChargeback[]> {
    return this.disputes.chargebacks(authorization);
  }

  disputeNews(now: Date, limit: number): Promise<readonly DisputeNews[]> {
    return this.disputes.news(now, limit);
  }

  /** The sandbox's own chargeback of a payment (`npm run -s sandbox -- chargeback`): all that is left unless an amount is given. */
  raiseChargeback(paymentId: string, amountMinor?: number, reasonCode?: string): Promise<{ readonly raised: AcquirerChargeback } | { readonly refused: ChargebackRefusal }> {
    return this.disputes.raise(paymentId, amountMinor, reasonCode);
  }

  async authorize(request: AuthorizeRequest): Promise<AcquirerOutcome> {
    const key = canonicalKey(request.idempotencyKey);
    const operation: LedgerOperation = request.recurring ? 'recurring' : request.capture ? 'sale' : 'auth';
    const late = () => this.lateOf(operation, request);
    const existing = await this.store.entry(request);
    if (existing) return this.replay(request.paymentId, existing, late);

    const acquirerRef = this.newRef();
    const wallet = request.instrument.kind === 'wallet' ? readSandboxWalletToken(request.instrument.wallet) : undefined;
    const card = await this.cardOf(request);
    const base = { idempotencyKey: key, operation, acquirerRef, amountMinor: storableAmount(request.amountMinor), currency: request.currency, capture: request.capture, card: card ?? NO_CARD };
    // A wallet token the sandbox cannot read is declined, as a gateway declines one it cannot decrypt.
    if (request.instrument.kind === 'wallet' && !wallet) {
      return this.record(request.paymentId, { ...base, outcome: { kind: 'declined', acquirerRef, reason: SANDBOX_WALLET_REASONS.invalidToken }, status: 'declined' }, late);
    }
    // A wallet payment is virtual: nothing is stored for later charges, whatever was asked.
    const storeCredential = request.storeCredential && request.instrument.kind !== 'wallet';
    // Approved only with a card the sandbox knows (the bank declines the rest).
    const approved = async (): Promise<NewEntry> => ({
      ...base,
      outcome: await this.store.approval(acquirerRef, base.card, storeCredential ? this.credentialRef() : undefined),
      status: 'approved',
      capturedMinor: request.capture ? request.amountMinor : 0,
      refundedMinor: 0,
    });
    const decision = decideAuthorization(
      { amountMinor: request.amountMinor, currency: request.currency, recurringOnStored: request.instrument.kind === 'stored' && Boolean(request.recurring), attempt: request.attempt, ...(wallet ? { walletPan: wallet.panType } : {}) },
      card,
    );
    switch (decision.kind) {
      case 'approve': {
        const entry = await approved();
        const { entry: recorded, won } = await this.store.record(request.paymentId, this.stamped(entry));
        if (!won) return this.replay(request.paymentId, recorded, late);
        // The chargeback test card, settled now: charged back a minute later.
        if (request.capture && card && chargedBackLater(card)) await this.disputes.plan(request.paymentId);
        return recorded.outcome;
      }
      case 'decline':
        return this.record(request.paymentId, { ...base, outcome: { kind: 'declined', acquirerRef, reason: decision.reason, ...(decision.soft ? { soft: true } : {}) }, status: 'declined' }, late);
      case 'challenge': {
        // The page has a key of its own, unguessable; where the customer returns is never stored
        // (it names the checkout link): the checkout hands it to the page through the browser.
        const pageKey = `${key}.${this.random.pageSecret()}`;
        const url = `${new URL(request.returnUrl).origin}/sandbox/challenge/${pageKey}`;
        const { flow, then } = decision;
        return this.record(
          request.paymentId,
          { ...base, challengeKey: pageKey, outcome: { kind: 'action', acquirerRef, flow, url }, status: 'pending', challenge: flow, pending: { flow, then, capture: request.capture, storeCredential } },
          late,
        );
      }
      case 'no-answer': {
        // The acquirer approves, but its answer is lost on the way: the caller hears nothing. Asking
        // again (lookup, close, the same request) gets the approval.
        const { entry, won } = await this.store.record(request.paymentId, this.stamped(await approved()));
        if (won) return { kind: 'unknown', acquirerRef, reason: SANDBOX_REASONS.unknown };
        return this.replay(request.paymentId, entry, late);
      }
    }
  }

  /** The result after the customer's challenge or redirect: `action` while still unanswered. */
  async completeAction(ref: OperationRef): Promise<AcquirerOutcome> {
    const entry = await this.store.entry(ref);
    return entry?.outcome ?? { kind: 'unknown', acquirerRef: '', reason: 'The acquirer has no operation with this key.' };
  }

  async lookup(ref: OperationRef): Promise<AcquirerOutcome | undefined> {
    return (await this.store.entry(ref))?.outcome;
  }

  /**
   * Makes an operation final. A challenge still pending is closed and declined (its page refuses
   * answers from now on); a key never received is barred: a declined entry is written under it, so a
   * late request with it gets that answer and moves no money. Anything else keeps its recorded answer
   * (08/38: the approval whose answer was lost).
   */
  close(ref: OperationRef): Promise<AcquirerOutcome> {
    const key = canonicalKey(ref.idempotencyKey);
    return this.untilDecided(`could not close ${key}`, async () => {
      const entry = await this.store.entry(ref);
      if (!entry) {
        const acquirerRef = this.newRef();
        const barred: NewEntry = {
          idempotencyKey: key,
          operation: operationOfKey(key),
          acquirerRef,
          card: NO_CARD,
          amountMinor: 0,
          currency: '',
          outcome: { kind: 'declined', acquirerRef, reason: SANDBOX_CLOSED_REASONS.neverReceived },
          status: 'declined',
          closed: 'barred',
        };
        const { entry: recorded, won } = await this.store.record(ref.paymentId, this.stamped(barred));
        // Lost: the request itself arrived first; decide on what it recorded.
        return won ? recorded.outcome : TRY_AGAIN;
      }
      if (!entry.pending) return entry.outcome;
      const outcome: AcquirerOutcome = { kind: 'declined', acquirerRef: entry.acquirerRef, reason: SANDBOX_CLOSED_REASONS.abandoned };
      // Lost: the customer answered just before, and that answer is final.
      return (await this.store.closePending(ref, outcome)) ? outcome : TRY_AGAIN;
    });
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

  /**
   * A capture, refund, void or reversal. Declined when the bank refuses it; approved only by one
   * conditional write that checks the bank's guard on the authorization's balances and changes them,
   * so concurrent follow-ups can never both pass.
   */
  private followUp(kind: SandboxFollowUp, request: FollowUpRequest): Promise<FollowUpOutcome> {
    const key = canonicalKey(request.idempotencyKey);
    const authKey = canonicalKey(request.authorization.idempotencyKey);
    const late = (): LateRequest => ({ operation: kind, amountMinor: storableAmount(request.amountMinor), currency: request.currency, card: NO_CARD, at: this.clock.now().toISOString() });
    // Each round decides on the balances it read; a lost race reads again (like an acquirer's own
    // serialization, it never fails the request because of concurrency).
    return this.untilDecided(`${kind} ${key} kept losing races`, async () => {
      const ledger = await this.store.ledger(request.paymentId);
      const existing = ledger?.entries[key];
      if (existing) return (await this.replay(request.paymentId, existing, late)) as FollowUpOutcome;
      const auth = ledger?.entries[authKey];
      const acquirerRef = this.newRef();
      const base = { idempotencyKey: key, operation: kind, acquirerRef, card: auth?.card ?? NO_CARD, currency: request.currency, of: authKey };
      const decision = decideFollowUp(kind, auth, request);
      if ('refused' in decision) {
        const refused: NewEntry = { ...base, amountMinor: storableAmount(request.amountMinor), outcome: { kind: 'declined', acquirerRef, reason: decision.refused }, status: 'declined' };
        return (await this.record(request.paymentId, refused, late)) as FollowUpOutcome;
      }
      const entry = this.stamped({ ...base, amountMinor: decision.amountMinor, outcome: { kind: 'approved', acquirerRef }, status: 'approved' });
      const authorization = { key: authKey, acquirerRef: request.authorization.acquirerRef };
      // Lost: another operation changed the balances (or answered this key) first; decide again.
      if (!(await this.store.recordFollowUp(request.paymentId, entry, authorization, decision.guard, decision.change))) return TRY_AGAIN;
      // The chargeback test card's authorization, captured now: charged back a minute later.
      if (kind === 'capture' && auth && chargedBackLater(auth.card)) await this.disputes.plan(request.paymentId);
      return entry.outcome as FollowUpOutcome;
    });
  }

  /** Runs `decide` until it returns an answer, after a short random pause before each new round (RACE_RETRY). */
  private async untilDecided<T>(what: string, decide: () => Promise<T | typeof TRY_AGAIN>): Promise<T> {
    const out = await retry(RACE_RETRY, { sleep: this.sleep, random: () => this.random.jitter() }, decide);
    if (out.exhausted) throw new Error(`sandbox: ${what}`);
    return out.value;
  }

  /** A request with a key already recorded gets the recorded answer; on a barred key it is noted as late. */
  private async replay(paymentId: string, entry: LedgerEntry, late: () => LateRequest | Promise<LateRequest>): Promise<AcquirerOutcome> {
    if (entry.closed === 'barred' && !entry.late) await this.store.noteLate(paymentId, entry.idempotencyKey, await late());
    return entry.outcome;
  }

  /** Records an entry (first writer of its key wins) and answers what was recorded under the key. */
  private async record(paymentId: string, partial: NewEntry, late: () => LateRequest | Promise<LateRequest>): Promise<AcquirerOutcome> {
    const { entry, won } = await this.store.record(paymentId, this.stamped(partial));
    return won ? entry.outcome : this.replay(paymentId, entry, late);
  }

  private async lateOf(operation: LedgerOperation, request: AuthorizeRequest): Promise<LateRequest> {
    return { operation, amountMinor: storableAmount(request.amountMinor), currency: request.currency, card: (await this.cardOf(request)) ?? NO_CARD, at: this.clock.now().toISOString() };
  }

  private async cardOf(request: AuthorizeRequest): Promise<CardFacts | undefined> {
    const { instrument } = request;
    if (instrument.kind === 'card') return cardFactsOf(instrument.card);
    if (instrument.kind === 'wallet') return readSandboxWalletToken(instrument.wallet)?.facts;
    return this.store.credential(instrument.storedCredentialRef);
  }

  /** When the acquirer received it, by its own clock, and its place in the payment's ledger. */
  private stamped(partial: NewEntry): LedgerEntry {
    const now = this.clock.now();
    return { ...partial, at: now.toISOString(), seq: nextSeq(now.getTime()) };
  }

  private newRef(): string {
    return `sbx_${this.random.reference()}`;
  }

  private credentialRef(): string {
    return `sbxcred_${this.random.reference()}`;
  }
}
