import { timingSafeEqual } from 'node:crypto';
import type { AcquirerOutcome, OperationRef } from '../../ports/acquirer';
import { judgeChallengeAnswer, type ChallengeFlow } from './bank';
import { refOfKey, type LedgerEntry } from './ledger';
import type { SandboxLedgerStore } from './ledger-store';

/** What the simulated challenge page shows for an authorization that asked the customer to confirm. */
export interface ChallengeView {
  readonly paymentId: string;
  readonly flow: ChallengeFlow;
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
  readonly flow: ChallengeFlow;
  readonly paymentId: string;
}

export interface CustomerAnswer {
  readonly code?: string;
  readonly confirm: boolean;
}

/**
 * The sandbox's issuer and bank as the customer meets them: the simulated 3-D Secure and redirect
 * pages (handlers/sandbox-challenge-*.ts) and their answers. A real acquirer's pages live on its
 * side, outside the Acquirer port; this narrow interface is the sandbox's equivalent, and the
 * checkout learns the result through the port (`completeAction`).
 */
export interface SandboxChallenges {
  /** The page by its own key; undefined when there is no such page. */
  challenge(pageKey: string): Promise<ChallengeView | undefined>;
  /** The customer's answer on the page; undefined when there is no such page. */
  answer(pageKey: string, answer: CustomerAnswer): Promise<ChallengeAnswer | undefined>;
  /** The same answer by the authorization's idempotency key (tests and the money model). */
  answerChallenge(idempotencyKey: string, answer: CustomerAnswer): Promise<ChallengeAnswer['result'] | undefined>;
}

const flowOf = (entry: LedgerEntry | undefined) => entry?.challenge ?? entry?.pending?.flow;

/**
 * The challenges over the sandbox's ledger. A challenge is answered once, in a write conditional on
 * it still pending: an answer to a challenge answered before changes nothing, and one to a closed
 * challenge is refused.
 */
export class SandboxChallengeDesk implements SandboxChallenges {
  constructor(
    private readonly store: SandboxLedgerStore,
    /** A new reference for a card kept when an approval stores the credential. */
    private readonly newCredentialRef: () => string,
  ) {}

  async challenge(pageKey: string): Promise<ChallengeView | undefined> {
    const found = await this.challengeOf(pageKey);
    if (!found) return undefined;
    const { entry, ref, flow } = found;
    return { paymentId: ref.paymentId, flow, state: entry.pending ? 'open' : entry.closed ? 'closed' : 'finished' };
  }

  async answer(pageKey: string, answer: CustomerAnswer): Promise<ChallengeAnswer | undefined> {
    const found = await this.challengeOf(pageKey);
    return found ? this.answerEntry(found.ref, found.entry, found.flow, answer) : undefined;
  }

  async answerChallenge(idempotencyKey: string, answer: CustomerAnswer): Promise<ChallengeAnswer['result'] | undefined> {
    const ref = refOfKey(idempotencyKey);
    const entry = await this.store.entry(ref);
    const flow = flowOf(entry);
    return entry && flow ? (await this.answerEntry(ref, entry, flow, answer)).result : undefined;
  }

  /** The entry a page key belongs to: `<idempotency key>.<random>`, compared in constant time. */
  private async challengeOf(pageKey: string): Promise<{ entry: LedgerEntry; ref: OperationRef; flow: ChallengeFlow } | undefined> {
    const cut = pageKey.lastIndexOf('.');
    if (cut <= 0) return undefined;
    const ref = refOfKey(pageKey.slice(0, cut));
    const entry = await this.store.entry(ref);
    const flow = flowOf(entry);
    if (!entry?.challengeKey || !flow) return undefined;
    const given = Buffer.from(pageKey);
    const stored = Buffer.from(entry.challengeKey);
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) return undefined;
    return { entry, ref, flow };
  }

  private async answerEntry(ref: OperationRef, entry: LedgerEntry, flow: ChallengeFlow, answer: CustomerAnswer): Promise<ChallengeAnswer> {
    const paymentId = ref.paymentId;
    const pending = entry.pending;
    if (!pending) return { result: entry.closed ? 'closed' : 'finished', flow, paymentId };
    const verdict = judgeChallengeAnswer(pending, answer);
    if (verdict.kind === 'retry') {
      if (await this.store.countWrongCode(ref, verdict.wrongCodes - 1)) return { result: 'retry', flow, paymentId, codeTriesLeft: verdict.codeTriesLeft };
      // Answered, closed or mistyped in another tab a moment before: decide on what is there now.
      const now = await this.store.entry(ref);
      return now ? this.answerEntry(ref, now, flow, answer) : { result: 'finished', flow, paymentId };
    }
    const outcome: AcquirerOutcome =
      verdict.kind === 'approve'
        ? await this.store.approval(entry.acquirerRef, entry.card, pending.storeCredential ? this.newCredentialRef() : undefined)
        : { kind: 'declined', acquirerRef: entry.acquirerRef, reason: verdict.reason };
    const capturedMinor = verdict.kind === 'approve' && pending.capture ? entry.amountMinor : 0;
    if (await this.store.answerPending(ref, outcome, capturedMinor)) return { result: verdict.kind === 'approve' ? 'approved' : 'declined', flow, paymentId };
    // Answered in another tab, or closed by reconciliation, a moment before.
    const now = await this.store.entry(ref);
    return { result: now?.closed ? 'closed' : 'finished', flow, paymentId };
  }
}
