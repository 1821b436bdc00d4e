import type { CardSummary, ValidCard } from '../domain/card';
import type { BillingAddress, Chargeback } from '../domain/payment';
import type { WalletPayment } from '../domain/wallet';

/**
 * The one narrow interface an acquirer implements: the sandbox (adapters/sandbox-acquirer) and the
 * S2S CARD connector (adapters/s2s-card), each mapping these types to its own wire format, and both
 * held to one conformance suite (test/acquirers). Every call is idempotent on `idempotencyKey`:
 * asking twice returns the first answer and never charges twice.
 */
export interface BrowserInfo {
  readonly language?: string;
  readonly screenWidth?: number;
  readonly screenHeight?: number;
  readonly colorDepth?: number;
  readonly timeZoneOffsetMinutes?: number;
  readonly javaEnabled?: boolean;
  readonly userAgent?: string;
  readonly acceptHeader?: string;
  readonly ip?: string;
}

export type PaymentInstrument =
  | { readonly kind: 'card'; readonly card: ValidCard }
  /** A card the acquirer stored for us earlier (saved card, recurring). */
  | { readonly kind: 'stored'; readonly storedCredentialRef: string; readonly summary: CardSummary }
  /**
   * An Apple Pay or Google Pay token (docs/wallets.md): the acquirer decrypts it; we never see the
   * card number. "Virtual": nothing is stored for later charges, so `storeCredential` is false.
   */
  | { readonly kind: 'wallet'; readonly wallet: WalletPayment };

/**
 * Who pays, as far as the payment knows it: acquirers that sign or check payer data (the S2S CARD
 * gateway signs the e-mail and requires an address) read it; the sandbox ignores it.
 */
export interface PayerDetails extends BillingAddress {
  readonly email?: string;
  readonly name?: string;
}

export interface AuthorizeRequest {
  readonly idempotencyKey: string;
  readonly paymentId: string;
  readonly amountMinor: number;
  readonly currency: string;
  /** sale = authorize and capture at once; auth = authorization only (DMS). */
  readonly capture: boolean;
  readonly instrument: PaymentInstrument;
  readonly browser?: BrowserInfo;
  /** Where the customer comes back after a challenge or redirect. */
  readonly returnUrl: string;
  /** Ask the acquirer to keep the card for later merchant-initiated charges. */
  readonly storeCredential: boolean;
  readonly recurring?: boolean;
  /** 1 for a first try; a retry of a soft-declined merchant-initiated payment counts up. */
  readonly attempt: number;
  readonly payer?: PayerDetails;
  /** The order's description, for acquirers that carry one. */
  readonly description?: string;
  /**
   * The merchant's own account at the acquirer the payment goes through (the stage's own when
   * absent); every later operation of the payment goes through the same one.
   */
  readonly account?: string;
}

export type AcquirerOutcome =
  | { readonly kind: 'approved'; readonly acquirerRef: string; readonly storedCredentialRef?: string }
  | { readonly kind: 'declined'; readonly acquirerRef: string; readonly reason: string; readonly soft?: boolean }
  /** The customer must visit `url` (3-D Secure challenge or an acquirer redirect) and come back. */
  | { readonly kind: 'action'; readonly acquirerRef: string; readonly flow: '3ds' | 'redirect'; readonly url: string }
  /** The acquirer could not say: the payment is left for reconciliation. */
  | { readonly kind: 'unknown'; readonly acquirerRef: string; readonly reason: string };

/** Names one operation at the acquirer: the payment it belongs to and our idempotency key for it. */
export interface OperationRef {
  readonly paymentId: string;
  readonly idempotencyKey: string;
}

export interface FollowUpRequest {
  readonly idempotencyKey: string;
  readonly paymentId: string;
  /** The authorization this operation acts on. */
  readonly authorization: { readonly idempotencyKey: string; readonly acquirerRef: string };
  readonly amountMinor: number;
  readonly currency: string;
}

/** A chargeback as the acquirer's ledger has it (amounts in minor units). */
export interface AcquirerChargeback extends Chargeback {
  /** The acquirer's id of the chargeback, when it gives one. */
  readonly acquirerRef?: string;
}

export type FollowUpOutcome =
  | { readonly kind: 'approved'; readonly acquirerRef: string }
  | { readonly kind: 'declined'; readonly acquirerRef: string; readonly reason: string };

/**
 * Every call is idempotent on its idempotency key: asking again returns the first answer and never
 * moves money twice. Keys are compared case-insensitively (they are built from canonical forms).
 */
export interface Acquirer {
  /** sale (capture) or auth (DMS) of a customer-initiated or merchant-initiated payment. */
  authorize(request: AuthorizeRequest): Promise<AcquirerOutcome>;
  /** The result of an authorization after the customer finished the challenge or redirect. */
  completeAction(ref: OperationRef): Promise<AcquirerOutcome>;
  /**
   * What the acquirer knows of any operation (authorization or follow-up), for reconciliation;
   * undefined = never received. Reads only.
   */
  lookup(ref: OperationRef): Promise<AcquirerOutcome | undefined>;
  /**
   * Makes an operation final, for reconciliation: a challenge still pending is closed (its answer is
   * refused from now on), an operation never received is barred (a late request with this key is
   * declined). Returns the final answer; `action` or `unknown` when this acquirer cannot close it
   * (then a late approval is possible and is reversed when it shows up).
   */
  close(ref: OperationRef): Promise<AcquirerOutcome>;
  capture(request: FollowUpRequest): Promise<FollowUpOutcome>;
  void(request: FollowUpRequest): Promise<FollowUpOutcome>;
  refund(request: FollowUpRequest): Promise<FollowUpOutcome>;
  /**
   * Gives money back in full without a refund: releases an uncaptured authorization (DMS), or
   * reverses an approval that came after we had declined the attempt.
   */
  reverse(request: FollowUpRequest): Promise<FollowUpOutcome>;
  /**
   * Every chargeback the acquirer's ledger holds against the payment whose approved authorization
   * this is, oldest first; [] when none. Reads only. Asked when the acquirer said it has news of a
   * dispute (a notification, or its own report: `disputeNews`).
   */
  chargebacks(authorization: OperationRef): Promise<readonly AcquirerChargeback[]>;
  /**
   * For an acquirer that reports disputes itself rather than by notification (the sandbox): the
   * payments with news due by `now`, each reported until it is taken.
   */
  disputeNews?(now: Date, limit: number): Promise<readonly DisputeNews[]>;
}

/** A payment the acquirer has news of a dispute for; reported until `taken`. */
export interface DisputeNews {
  readonly paymentId: string;
  taken(): Promise<void>;
}
