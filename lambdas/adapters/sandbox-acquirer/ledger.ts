import type { CardSummary } from '../../domain/card';
import { formatMinor } from '../../domain/money';
import type { AcquirerOutcome, OperationRef } from '../../ports/acquirer';
import type { Dispute } from '../../domain/payment';

/**
 * The sandbox acquirer's own records, one item per payment (`pk = SANDBOX#<payment_id>`,
 * `sk = LEDGER`): a map of entries by idempotency key plus the balances of each authorization. The
 * ledger store (ledger-store.ts) reads it and changes it only with single conditional writes; this
 * module is its shape and how it is shown.
 */

/** What the sandbox may keep of a card: the mask (`411111****1111`) and the expiry, never a number or CVV. */
export type CardFacts = Pick<CardSummary, 'mask' | 'expMonth' | 'expYear'>;

/**
 * sale = authorize with capture; auth = authorize without capture (DMS); recurring = a
 * merchant-initiated authorization on a stored credential; the rest are follow-ups on one of those.
 */
export type LedgerOperation = 'sale' | 'auth' | 'recurring' | 'capture' | 'refund' | 'void' | 'reversal' | 'chargeback';
/** pending = a challenge or redirect the customer has not answered yet. */
export type LedgerOutcome = 'approved' | 'declined' | 'pending';

/** A request that arrived with a key `close` had barred: what it asked for (it was declined). */
export interface LateRequest {
  readonly operation: LedgerOperation;
  readonly amountMinor: number;
  readonly currency: string;
  readonly card: CardFacts;
  readonly at: string;
}

/**
 * What the simulated acquirer remembers of one operation, stored under our idempotency key
 * lower-cased: our keys are built from canonical forms, so letter case never makes two operations.
 */
export interface LedgerEntry {
  readonly idempotencyKey: string;
  readonly operation: LedgerOperation;
  readonly acquirerRef: string;
  readonly card: CardFacts;
  readonly amountMinor: number;
  readonly currency: string;
  /** When the acquirer received it (its own clock). */
  readonly at: string;
  /** Orders the entries of a payment (time-based, unique enough per process). */
  readonly seq: number;
  /** The answer as `lookup` gives it; for a challenge, `action` until it is answered or closed. */
  readonly outcome: AcquirerOutcome;
  readonly status: LedgerOutcome;
  /** Authorizations that asked the customer to confirm: the key of their page (`<key>.<random>`). */
  readonly challengeKey?: string;
  /** Authorizations: captured at once (sale, recurring) or later (auth). */
  readonly capture?: boolean;
  /** Authorizations that asked the customer to confirm: which page, kept once answered or closed. */
  readonly challenge?: '3ds' | 'redirect';
  /** A challenge not answered yet, with what its answer will do. */
  readonly pending?: {
    readonly flow: '3ds' | 'redirect';
    readonly then: 'approve' | 'decline';
    readonly capture: boolean;
    readonly storeCredential: boolean;
    /** Wrong one-time codes typed so far: the page asks again until SANDBOX_CODE_TRIES are used. */
    readonly wrongCodes?: number;
  };
  /**
   * Made final by `close`: `abandoned` = a challenge closed unanswered, `barred` = a key closed
   * before any request with it arrived (a late request is declined).
   */
  readonly closed?: 'abandoned' | 'barred';
  readonly late?: LateRequest;
  /** Follow-ups: the authorization they act on (its key). */
  readonly of?: string;
  /** Balances of an approved authorization (sale, auth, recurring). */
  readonly capturedMinor?: number;
  readonly refundedMinor?: number;
  readonly voided?: boolean;
  readonly reversed?: boolean;
  /** Authorizations: what chargebacks took back (then no refund, void or reversal is possible). */
  readonly chargedBackMinor?: number;
  /** Chargebacks: the dispute's reason code and dates. */
  readonly dispute?: Dispute;
}

export interface LedgerItem {
  readonly entries: Record<string, LedgerEntry>;
}

/**
 * One of the acquirer's records of a payment, as `npm run sandbox -- ledger PAYMENT_ID` prints it
 * and `sandboxLedger` returns it. Only `approved` records moved money.
 */
export interface SandboxLedgerRecord {
  readonly operation: LedgerOperation;
  /** Decimal, in the currency's format (`25.00`, `1000` for JPY); what the acquirer moved or was asked to. */
  readonly amount: string;
  readonly currency: string;
  readonly outcome: LedgerOutcome;
  /** Our idempotency key for it, lower-cased. */
  readonly idempotency_key: string;
  /** The acquirer's reference (`sbx_…`). */
  readonly acquirer_ref: string;
  /** Why it was declined. */
  readonly reason?: string;
  /** When the acquirer received it (ISO 8601). */
  readonly at: string;
  /** Follow-ups: the idempotency key of the authorization they act on. */
  readonly of?: string;
  /** Made final by reconciliation: a challenge closed unanswered, or a key barred before it arrived. */
  readonly closed?: 'abandoned' | 'barred';
  /** What the acquirer kept of the card: mask and expiry (`MM/YY`). */
  readonly card?: { readonly mask: string; readonly expiry: string };
  /** Chargebacks: the scheme's reason code. */
  readonly reason_code?: string;
}

export const ledgerKey = (paymentId: string) => ({ pk: `SANDBOX#${paymentId.toLowerCase()}`, sk: 'LEDGER' });

/** Keys are canonical: our keys are UUIDs and words, so they are compared and stored lower-cased. */
export const canonicalKey = (key: string) => key.toLowerCase();

/** Our keys start with the payment id (`<payment>.<n>`, `<payment>.<kind>.<trans_id>`). */
export function refOfKey(idempotencyKey: string): OperationRef {
  return { paymentId: idempotencyKey.split('.')[0] ?? '', idempotencyKey };
}

/** The kind of operation one of our keys names. */
export function operationOfKey(key: string): LedgerOperation {
  const kind = key.split('.')[1];
  return kind === 'capture' || kind === 'refund' || kind === 'void' || kind === 'reversal' || kind === 'chargeback' ? kind : 'sale';
}

const amountText = (amountMinor: number, currency: string): string => {
  try {
    return formatMinor(amountMinor, currency);
  } catch {
    // A request with an unusable amount is declined and recorded as it came.
    return String(amountMinor);
  }
};

const expiryText = (c: CardFacts): string => `${String(c.expMonth).padStart(2, '0')}/${String(c.expYear % 100).padStart(2, '0')}`;

/** Entries as records, oldest first. */
export function ledgerRecords(item: LedgerItem | undefined): SandboxLedgerRecord[] {
  const entries = Object.values(item?.entries ?? {}).sort((a, b) => a.seq - b.seq || a.at.localeCompare(b.at) || a.idempotencyKey.localeCompare(b.idempotencyKey));
  // A key barred before it arrived has no amount of its own; it is shown as nothing in the payment's currency.
  const paymentCurrency = entries.find((e) => e.currency)?.currency ?? '';
  return entries.map((e) => {
    const shown = e.late ?? e;
    const currency = shown.currency || paymentCurrency;
    const card = shown.card?.mask ? { mask: shown.card.mask, expiry: expiryText(shown.card) } : undefined;
    const closed = e.closed ?? ((e as { barred?: boolean }).barred ? 'barred' : undefined);
    return {
      operation: shown.operation,
      amount: amountText(shown.amountMinor, currency),
      currency,
      outcome: e.status,
      idempotency_key: e.idempotencyKey,
      acquirer_ref: e.acquirerRef,
      ...(e.outcome.kind === 'declined' ? { reason: e.outcome.reason } : {}),
      at: e.at,
      ...(e.of ? { of: e.of } : {}),
      ...(closed ? { closed } : {}),
      ...(card ? { card } : {}),
      ...(e.dispute?.reasonCode ? { reason_code: e.dispute.reasonCode } : {}),
    };
  });
}
