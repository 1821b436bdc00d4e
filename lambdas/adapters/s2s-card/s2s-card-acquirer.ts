import { cardDigits, orderHash, transactionHash, type HashParty } from './hash';
import { postAction, S2SCardUnavailable, type S2SCardSettings, type S2SCardTarget, type S2SGatewayAccount, type WireAnswer } from './client';
import { canonicalKey, S2SRecords, type S2SEntry, type S2SOperation } from './records';
import {
  approvedOutcome,
  authorizationFields,
  authorizationOutcome,
  authorizationStatus,
  decodeStoredCredential,
  errorCode,
  isRefusal,
  NOT_FOUND_ERROR,
  reasonOf,
  S2S_REASONS,
  wireAmount,
} from './transformers';
import { followUpVerdicts, historyOf, type FollowUpVerdict, type GatewayReading } from './ledger-reading';
import type { Acquirer, AcquirerChargeback, AcquirerOutcome, AuthorizeRequest, FollowUpOutcome, FollowUpRequest, OperationRef } from '../../ports/acquirer';
import { systemClock, type Clock } from '../../ports/clock';
import { STAGE_ACCOUNT } from '../../domain/acquirer-account';

export { S2S_REASONS } from './transformers';

/** The gateway has no transaction for what was asked (its "payment not found"). */
const NOT_RECEIVED: unique symbol = Symbol('not received');

/** How long a refund or reversal (answered ACCEPTED) is watched for its callback before it is left to reconciliation. */
const DEFAULT_FOLLOW_UP_WAIT_MS = 5_000;
const FOLLOW_UP_POLL_MS = 150;
/** The least time between two look-ups of one attempt made for the customer's page. */
export const LOOKUP_INTERVAL_MS = 2_000;
const LOOKUP_POLL_MS = 100;
/** How long the signed link to the gateway's 3-D Secure or bank page may be used (the attempt is closed by then). */
export const REDIRECT_LINK_MS = 30 * 60_000;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The acquirer port over the S2S CARD protocol (docs/acquirers/s2s-card.md). Our idempotency key of
 * an authorization is its `order_id`, so GET_TRANS_STATUS_BY_ORDER answers for it whatever became of
 * the request; follow-ups (which the gateway keys only by the payment's `trans_id`) are written to
 * the connector's records before they are sent, so a replay or a reconciliation never sends one
 * twice and reads the answer the gateway gave or the callback brought.
 */
export class S2SCardAcquirer implements Acquirer {
  private readonly followUpWaitMs: number;
  private readonly clock: Clock;

  constructor(
    private readonly settings: S2SCardSettings,
    private readonly records: S2SRecords,
    options: { followUpWaitMs?: number; clock?: Clock } = {},
  ) {
    this.followUpWaitMs = options.followUpWaitMs ?? DEFAULT_FOLLOW_UP_WAIT_MS;
    this.clock = options.clock ?? systemClock;
  }

  /** When an entry was written: orders a payment's follow-ups (the oldest open refund answers a callback first). */
  private nowIso(): string {
    return this.clock.now().toISOString();
  }

  async authorize(request: AuthorizeRequest): Promise<AcquirerOutcome> {
    const key = canonicalKey(request.idempotencyKey);
    const stored = request.instrument.kind === 'stored' ? decodeStoredCredential(request.instrument.storedCredentialRef) : undefined;
    const email = stored?.email ?? request.payer?.email ?? '';
    // A wallet SALE sends no card: its later hashes (Formula 2 and 7) take the card digits as empty,
    // the CARD Guide's rule for a field not sent (docs/acquirers/s2s-card.md, "Wallet payments").
    const { instrument } = request;
    const digits = instrument.kind === 'wallet' ? '' : cardDigits(instrument.kind === 'card' ? instrument.card.pan : instrument.summary.mask);
    const party: HashParty = { email, digits };
    const { entry, won } = await this.records.intend(request.paymentId, {
      key,
      operation: 'authorization',
      state: 'sent',
      party,
      amountMinor: request.amountMinor,
      currency: request.currency,
      capture: request.capture,
      storeCredential: request.storeCredential,
      orderId: request.idempotencyKey,
      at: this.nowIso(),
      ...(request.account ? { account: request.account } : {}),
    });
    // A replay never sends again: it gets what is known, or asks the gateway by our order id.
    if (!won) {
      const known = await this.resumeAuthorization(request.paymentId, entry);
      return known === NOT_RECEIVED ? { kind: 'unknown', acquirerRef: '', reason: S2S_REASONS.noAnswer } : known;
    }

    let account: S2SGatewayAccount;
    try {
      account = await this.settings.account(request.account);
    } catch (e) {
      // An account that cannot be read (removed, no password): nothing is sent; declined, never retried blind.
      return this.answer(request.paymentId, key, { kind: 'declined', acquirerRef: '', reason: `${S2S_REASONS.accountUnusable} (${(e as Error).message})` });
    }
    if (account.currencies && !account.currencies.includes(request.currency)) {
      return this.answer(request.paymentId, key, { kind: 'declined', acquirerRef: '', reason: S2S_REASONS.currencyNotTaken });
    }
    const built = authorizationFields(request, stored, party, account);
    if ('refused' in built) return this.answer(request.paymentId, key, { kind: 'declined', acquirerRef: '', reason: built.refused });
    // No answer (timeout, network): the entry stays `sent` and the caller treats it as unknown.
    const answer = await postAction(this.target(account), built.fields);
    // The link to the gateway's challenge page is ours, signed with the stage account's password whatever the payment's account.
    const linkKey = account.accountId === STAGE_ACCOUNT ? account.password : (await this.settings.account()).password;
    const outcome = authorizationOutcome(answer, entry, request.returnUrl, linkKey, this.clock.now().getTime() + REDIRECT_LINK_MS);
    return this.answer(request.paymentId, key, outcome, str(answer.trans_id));
  }

  /**
   * The customer is back (or their page asks again): what the gateway says of the attempt by our
   * order id. Look-ups are coalesced per attempt, since every hit of the customer's page would
   * otherwise be one request to the shared gateway account: one in flight at a time, at most one per
   * LOOKUP_INTERVAL_MS. A caller that finds one in flight waits for it and takes its answer; one that
   * comes within the interval after it waits for the interval to end (a bounded wait: the page's
   * request). Real time, not the injected clock: this spaces network requests.
   */
  async completeAction(ref: OperationRef): Promise<AcquirerOutcome> {
    const arrived = Date.now();
    const giveUpAt = arrived + this.settings.timeoutMs + LOOKUP_INTERVAL_MS;
    for (;;) {
      const entry = await this.records.entry(ref.paymentId, ref.idempotencyKey);
      if (!entry) return { kind: 'unknown', acquirerRef: '', reason: 'The acquirer has no operation with this key.' };
      if (entry.state === 'answered' && entry.outcome) return entry.outcome;
      const recorded = (): AcquirerOutcome => (entry.outcome && entry.state !== 'sent' ? entry.outcome : { kind: 'unknown', acquirerRef: entry.transId ?? '', reason: S2S_REASONS.noAnswer });
      // A look-up that finished after this caller arrived answers for it too.
      if ((entry.lookedAt ?? 0) >= arrived) return recorded();
      const now = Date.now();
      if (now >= giveUpAt) return recorded();
      // The lease covers the gateway's answer (bounded by the timeout) and the recording of it: one
      // of the timeout alone ran out under load while the holder was still writing, and a second
      // look-up started beside it.
      if (await this.records.takeLookup(ref.paymentId, entry.key, now, now + this.settings.timeoutMs + LOOKUP_INTERVAL_MS)) {
        try {
          const outcome = await this.resumeAuthorization(ref.paymentId, entry);
          return outcome === NOT_RECEIVED ? { kind: 'unknown', acquirerRef: '', reason: 'The acquirer has no operation with this key.' } : outcome;
        } finally {
          const done = Date.now();
          await this.records.releaseLookup(ref.paymentId, entry.key, done + LOOKUP_INTERVAL_MS, done);
        }
      }
      await sleep(LOOKUP_POLL_MS);
    }
  }

  /**
   * Reads an authorization without a final answer again from the gateway by our order id (a
   * callback's hint), recording what it reports.
   */
  async rereadAuthorization(paymentId: string, entry: S2SEntry): Promise<void> {
    await this.resumeAuthorization(paymentId, entry);
  }

  /** The trans_id the gateway reports for an authorization's order (GET_TRANS_STATUS_BY_ORDER); undefined when it has none. */
  async transIdOfOrder(entry: S2SEntry): Promise<string | undefined> {
    if (!entry.orderId) return undefined;
    const answer = await this.byOrder(entry);
    return answer.result === 'SUCCESS' ? str(answer.trans_id) : undefined;
  }

  async lookup(ref: OperationRef): Promise<AcquirerOutcome | undefined> {
    const entry = await this.records.entry(ref.paymentId, ref.idempotencyKey);
    if (!entry) return undefined;
    if (entry.operation === 'authorization') {
      const outcome = await this.resumeAuthorization(ref.paymentId, entry);
      // Sent, but the gateway has no order of that id: it never received it.
      return outcome === NOT_RECEIVED ? undefined : outcome;
    }
    const outcome = await this.resumeFollowUp(ref.paymentId, entry);
    return outcome === NOT_RECEIVED ? undefined : outcome;
  }

  async close(ref: OperationRef): Promise<AcquirerOutcome> {
    const key = canonicalKey(ref.idempotencyKey);
    const { entry, won } = await this.records.intend(ref.paymentId, {
      key,
      operation: operationOfKey(key),
      state: 'barred',
      party: { email: '', digits: '' },
      amountMinor: 0,
      currency: '',
      outcome: { kind: 'declined', acquirerRef: '', reason: S2S_REASONS.neverSent },
      at: this.nowIso(),
    });
    if (won) return entry.outcome!;
    const outcome = entry.operation === 'authorization' ? await this.resumeAuthorization(ref.paymentId, entry) : await this.resumeFollowUp(ref.paymentId, entry);
    if (outcome !== NOT_RECEIVED) return outcome;
    // Sent, and the gateway says it never got it: barred from now on (nothing of ours resends it).
    const barred: AcquirerOutcome = { kind: 'declined', acquirerRef: entry.transId ?? '', reason: S2S_REASONS.neverSent };
    return (await this.records.advance(ref.paymentId, key, { state: 'barred', outcome: barred }))?.outcome ?? barred;
  }

  capture(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('capture', request, (p) => ({ action: 'CAPTURE', amount: wireAmount(request.amountMinor, request.currency), trans_id: p }));
  }

  void(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('void', request, (p) => ({ action: 'VOID', trans_id: p }));
  }

  refund(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('refund', request, (p) => ({ action: 'CREDITVOID', amount: wireAmount(request.amountMinor, request.currency), trans_id: p }));
  }

  /** CREDITVOID without an amount: the whole authorization released (PENDING) or the whole sale reversed. */
  reverse(request: FollowUpRequest): Promise<FollowUpOutcome> {
    return this.followUp('reversal', request, (p) => ({ action: 'CREDITVOID', trans_id: p }));
  }

  private async followUp(operation: Exclude<S2SOperation, 'authorization'>, request: FollowUpRequest, build: (transId: string) => Record<string, string>): Promise<FollowUpOutcome> {
    const key = canonicalKey(request.idempotencyKey);
    const transId = request.authorization.acquirerRef;
    const auth = await this.records.entry(request.paymentId, request.authorization.idempotencyKey);
    const party = auth?.party ?? { email: '', digits: '' };
    const { entry, won } = await this.records.intend(request.paymentId, {
      key,
      operation,
      state: 'sent',
      party,
      amountMinor: request.amountMinor,
      currency: request.currency,
      transId,
      at: this.nowIso(),
      ...(auth?.account ? { account: auth.account } : {}),
    });
    if (!won) return this.finalFollowUp(await this.resumeFollowUp(request.paymentId, entry));
    // Refused before it reached processing: no transaction at the gateway (ledger-reading.ts counts only its own).
    const refuse = (reason: string) => this.answer(request.paymentId, key, { kind: 'declined', acquirerRef: transId, reason }, undefined, true) as Promise<FollowUpOutcome>;
    if (!auth || auth.state !== 'answered' || auth.outcome?.kind !== 'approved' || !transId) return refuse('Unknown authorization.');
    let fields: Record<string, string>;
    try {
      fields = build(transId);
    } catch (e) {
      return refuse((e as Error).message);
    }
    const account = await this.settings.account(auth.account);
    const answer = await postAction(this.target(account), { ...fields, client_key: account.clientKey, hash: transactionHash(account.password, party, transId) });
    if (answer.result === 'SUCCESS') return this.answer(request.paymentId, key, { kind: 'approved', acquirerRef: str(answer.trans_id) ?? transId }) as Promise<FollowUpOutcome>;
    if (isRefusal(answer)) return refuse(reasonOf(answer));
    if (answer.result === 'DECLINED') return this.answer(request.paymentId, key, { kind: 'declined', acquirerRef: transId, reason: reasonOf(answer) }) as Promise<FollowUpOutcome>;
    // ACCEPTED (CREDITVOID: the outcome comes by callback) or UNDEFINED: watch for a while, then leave it to reconciliation.
    // Real time, not the injected clock: this waits for a network callback, bounded by the function's timeout.
    // Polled with a doubling pause: many refunds of one payment at once read one item.
    const deadline = Date.now() + this.followUpWaitMs;
    for (let pause = FOLLOW_UP_POLL_MS; Date.now() < deadline; pause *= 2) {
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
      const now = await this.records.entry(request.paymentId, key);
      if (now?.state === 'answered' && now.outcome) return this.finalFollowUp(now.outcome);
    }
    return this.finalFollowUp(await this.resumeFollowUp(request.paymentId, (await this.records.entry(request.paymentId, key)) ?? entry));
  }

  /** A follow-up's answer for the port: final, or thrown (the operation stays in flight for the reconciler). */
  private finalFollowUp(outcome: AcquirerOutcome | typeof NOT_RECEIVED): FollowUpOutcome {
    if (outcome !== NOT_RECEIVED && (outcome.kind === 'approved' || outcome.kind === 'declined')) {
      return outcome.kind === 'approved' ? { kind: 'approved', acquirerRef: outcome.acquirerRef } : { kind: 'declined', acquirerRef: outcome.acquirerRef, reason: outcome.reason };
    }
    throw new S2SCardUnavailable(S2S_REASONS.noAnswer);
  }

  /** Records a final or action answer (forward only) and returns what is recorded. */
  private async answer(paymentId: string, key: string, outcome: AcquirerOutcome, transId?: string, refused = false): Promise<AcquirerOutcome> {
    if (outcome.kind === 'unknown') {
      if (transId) await this.records.advance(paymentId, key, { state: 'sent', transId });
      return outcome;
    }
    const state = outcome.kind === 'action' ? 'action' : 'answered';
    const recorded = await this.records.advance(paymentId, key, { state, outcome, ...(transId ? { transId } : {}), ...(refused ? { refused } : {}) });
    return recorded?.state === 'answered' || recorded?.state === 'action' ? (recorded.outcome ?? outcome) : outcome;
  }

  /**
   * An authorization as far as known: the recorded final answer, else the gateway's status by our
   * order id (recorded when final). NOT_RECEIVED when the gateway has no such order.
   */
  private async resumeAuthorization(paymentId: string, entry: S2SEntry): Promise<AcquirerOutcome | typeof NOT_RECEIVED> {
    if (entry.state === 'answered' && entry.outcome) return entry.outcome;
    if (!entry.orderId) return entry.outcome ?? { kind: 'declined', acquirerRef: '', reason: S2S_REASONS.neverSent };
    const answer = await this.byOrder(entry);
    if (answer.result !== 'SUCCESS') {
      if (errorCode(answer) === NOT_FOUND_ERROR) return entry.state === 'barred' ? entry.outcome! : NOT_RECEIVED;
      throw new S2SCardUnavailable(`GET_TRANS_STATUS_BY_ORDER: ${reasonOf(answer)}`);
    }
    const transId = str(answer.trans_id) ?? entry.transId ?? '';
    const read = authorizationStatus(answer.status, entry.capture ?? true);
    if (read === 'approved') return this.answer(paymentId, entry.key, approvedOutcome(answer, transId, entry.storeCredential ?? false, entry.party.email), transId);
    if (read === 'declined') return this.answer(paymentId, entry.key, { kind: 'declined', acquirerRef: transId, reason: reasonOf(answer) }, transId);
    if (read === 'action' && entry.outcome?.kind === 'action') return entry.outcome;
    return { kind: 'unknown', acquirerRef: transId, reason: S2S_REASONS.noAnswer };
  }

  private async byOrder(entry: S2SEntry): Promise<WireAnswer> {
    const account = await this.settings.account(entry.account);
    return postAction(this.target(account), {
      action: 'GET_TRANS_STATUS_BY_ORDER',
      client_key: account.clientKey,
      order_id: entry.orderId ?? '',
      hash: orderHash(account.password, entry.party, entry.orderId ?? ''),
    });
  }

  /** Where an account's requests go. */
  private target(account: S2SGatewayAccount): S2SCardTarget {
    return { url: account.url, timeoutMs: this.settings.timeoutMs };
  }

  /** The password of the account an operation was sent through (a callback of it is signed with it); `fresh` past the cache. */
  async passwordOf(entry: Pick<S2SEntry, 'account'>, fresh = false): Promise<string> {
    return (await this.settings.account(entry.account, fresh)).password;
  }

  /**
   * A follow-up as far as known: its recorded answer (synchronous, or from an earlier reading), else
   * what the gateway's own history of the payment says (GET_TRANS_DETAILS), read for every open
   * follow-up of the payment at once and recorded together (ledger-reading.ts). NOT_RECEIVED when
   * the gateway has no transaction left for it (closing it then bars it).
   */
  private async resumeFollowUp(paymentId: string, entry: S2SEntry): Promise<AcquirerOutcome | typeof NOT_RECEIVED> {
    if ((entry.state === 'answered' || entry.state === 'barred') && entry.outcome) return entry.outcome;
    const transId = entry.transId ?? '';
    if (!transId) return NOT_RECEIVED;
    const verdict = (await this.settleFollowUps(paymentId, transId, entry.party, entry.currency, entry.account)).get(entry.key);
    const now = await this.records.entry(paymentId, entry.key);
    if (now?.state === 'answered' && now.outcome) return now.outcome;
    if (verdict?.kind === 'absent') return NOT_RECEIVED;
    return { kind: 'unknown', acquirerRef: transId, reason: S2S_REASONS.noAnswer };
  }

  /**
   * Reads the payment at the gateway (GET_TRANS_DETAILS) and records the answer of every follow-up
   * of it the reading settles, in one write; a write that lost a race to another reading is computed
   * again from the records as they are now.
   */
  async settleFollowUps(paymentId: string, transId: string, party: HashParty, currency: string, account: string | undefined): Promise<ReadonlyMap<string, FollowUpVerdict>> {
    const reading = await this.readPayment(transId, party, currency, account);
    let verdicts: ReadonlyMap<string, FollowUpVerdict> = new Map();
    for (let round = 0; round < 8; round++) {
      const entries = Object.values(await this.records.entries(paymentId)).filter((e) => e.operation !== 'authorization' && e.transId === transId);
      verdicts = followUpVerdicts(entries, reading);
      const answers = new Map<string, AcquirerOutcome>();
      for (const [key, v] of verdicts) {
        if (v.kind === 'approved') answers.set(key, { kind: 'approved', acquirerRef: transId });
        else if (v.kind === 'declined') answers.set(key, { kind: 'declined', acquirerRef: transId, reason: v.reason });
      }
      if (await this.records.answerTogether(paymentId, answers)) return verdicts;
    }
    throw new S2SCardUnavailable('GET_TRANS_DETAILS: the records kept changing while they were settled');
  }

  /**
   * The payment's chargebacks at the gateway, from its reading (GET_TRANS_DETAILS): each `chargeback`
   * item of the history that succeeded, its amount the gateway's. A gateway that lists none while the
   * status is CHARGEBACK proves one of an amount it does not say: the amount of the callback that
   * told us (unsigned, the only source there is), and nothing when no callback said one. Reason
   * codes and dates come from the callbacks of the same amount, oldest first (docs/adr/0034).
   */
  async chargebacks(authorization: OperationRef): Promise<readonly AcquirerChargeback[]> {
    const { entries, disputes: hints } = await this.records.read(authorization.paymentId);
    const entry = entries[canonicalKey(authorization.idempotencyKey)];
    const transId = entry?.outcome?.kind === 'approved' ? entry.outcome.acquirerRef : undefined;
    if (!entry || !transId) return [];
    const reading = await this.readPayment(transId, entry.party, entry.currency, entry.account);
    const unused = [...hints];
    const hintFor = (amountMinor: number | undefined) => {
      const at = unused.findIndex((h) => amountMinor === undefined || h.amountMinor === amountMinor);
      return at >= 0 ? unused.splice(at, 1)[0] : undefined;
    };
    const listed = reading.history.filter((h) => h.type === 'chargeback' && h.status === 'success');
    const amounts = listed.length
      ? listed.map((h) => h.amountMinor)
      : reading.status.toUpperCase() === 'CHARGEBACK' && hints.some((h) => h.amountMinor !== undefined)
        ? [hints.find((h) => h.amountMinor !== undefined)!.amountMinor]
        : [];
    return amounts.flatMap((amountMinor) => {
      const hint = hintFor(amountMinor);
      const amount = amountMinor ?? hint?.amountMinor;
      if (amount === undefined) return [];
      return [{ amountMinor: amount, acquirerRef: transId, ...(hint?.reasonCode ? { reasonCode: hint.reasonCode } : {}), ...(hint?.chargebackDate ? { chargebackDate: hint.chargebackDate } : {}), ...(hint?.bankDate ? { bankDate: hint.bankDate } : {}) }];
    });
  }

  /** The gateway's status and history of one payment. */
  private async readPayment(transId: string, party: HashParty, currency: string, accountId: string | undefined): Promise<GatewayReading> {
    const account = await this.settings.account(accountId);
    const answer = await postAction(this.target(account), { action: 'GET_TRANS_DETAILS', client_key: account.clientKey, trans_id: transId, hash: transactionHash(account.password, party, transId) });
    if (answer.result !== 'SUCCESS') throw new S2SCardUnavailable(`GET_TRANS_DETAILS: ${reasonOf(answer)}`);
    return { status: String(answer.status ?? ''), history: historyOf(answer.transactions, currency) };
  }
}

/** The operation one of our keys names (`<payment>.<n>`, `<payment>.<kind>.<trans_id>`). */
function operationOfKey(key: string): S2SOperation {
  const kind = key.split('.')[1];
  return kind === 'capture' || kind === 'refund' || kind === 'void' || kind === 'reversal' ? kind : 'authorization';
}
