import { declineEffect, heldDeclineIndex } from '../attempts';
import type { CardSummary } from '../card';
import type { WalletSummary } from '../wallet';
import { TRANSITIONS } from '../state-machine';
import { voidWindowEndsAt } from '../void-window';
import type { Transition, QueueEntry } from './change';
import type { TransitionGuard } from './guard';
import { instrumentOf, type BillingAddress, type Customer, type LinkClosure, type Payment, type PaymentStatus, type Transaction, type TransactionType, type WatchedAttempt } from './model';
import { LATE_APPROVAL_CHECK_MS, QUEUES, nextCaptureEvent, restingQueue } from './queues';

/**
 * The transitions of an attempt to pay: claimed before the acquirer is called, then its answer
 * recorded under a guard that names the attempt (in flight, or waiting on its challenge), so the
 * page, the challenge return and the reconciler can race and only one records it. Each is
 * `(payment, input, now) → Transition`; the store applies it as one conditional write.
 */

/** One attempt as its answer is recorded: which one, and the capture mode it was sent with. */
export interface AttemptRef {
  readonly attempt: number;
  readonly transId: string;
  readonly idempotencyKey: string;
  /**
   * The capture mode the attempt was sent with (an authorization only, DMS): its answer is read
   * with it, never with the merchant's setting at the time of the answer. Absent on attempts
   * recorded before it was kept: the merchant's setting then.
   */
  readonly authorizeOnly?: boolean;
}

/** The answer comes to the request itself (in flight), or after the customer's challenge or bank redirect. */
export type AttemptStage = 'request' | 'action';
/** A customer's attempt on a link is a sale; a merchant-initiated one (recurring, retry) is recurring. */
export type AttemptType = Extract<TransactionType, 'sale' | 'recurring'>;

/** How long the customer has to finish a challenge before reconciliation looks at it. */
export const ACTION_TIMEOUT_MS = 20 * 60_000;
/** How long a closed attempt the acquirer could not make final is watched for a late approval. */
export const LATE_APPROVAL_WATCH_MS = 24 * 3600_000;

/** A customer's attempt on the link, claimed before the acquirer is called. */
export function claimAttempt(
  payment: Payment,
  input: {
    readonly ref: AttemptRef;
    /** What the attempt pays with: a card's summary, or a wallet's (an attempt with one forgets the other's). */
    readonly card?: CardSummary;
    readonly wallet?: WalletSummary;
    readonly customer: Customer;
    readonly customerIp?: string;
    /** A billing address typed on the page (a country); otherwise the session's is the payment's. */
    readonly billingAddress?: BillingAddress;
    /** Where the payment waits should the answer never be recorded. */
    readonly recheck: QueueEntry;
    /**
     * The merchant's own acquirer account the attempt goes through (the stage's when absent): the
     * payment's from then on, until an attempt goes through another. An earlier attempt's account is
     * not lost: the connector records each request's account and follows up through it.
     */
    readonly acquirerAccount?: string;
  },
  now: Date,
): Transition {
  const { ref } = input;
  return {
    // No reversal of an earlier attempt's late approval may be in flight (it re-files the payment).
    guard: { statusIn: TRANSITIONS.pay.from, attemptIs: payment.attempt ?? 0, inFlight: 'none', linkOpenAt: now, operation: 'none' },
    change: {
      set: {
        status: 'prepare',
        attempt: ref.attempt,
        // The capture mode is the attempt's, fixed here: its answer is read with it whatever the
        // merchant's setting becomes meanwhile.
        inFlight: { attempt: ref.attempt, transId: ref.transId, startedAt: now.toISOString(), idempotencyKey: ref.idempotencyKey, authorizeOnly: ref.authorizeOnly },
        ...(input.wallet ? { wallet: input.wallet } : { card: input.card }),
        // Of the browser only its address is kept (callbacks carry it); the rest went to the acquirer.
        ...(input.customerIp ? { customerIp: input.customerIp } : {}),
        customer: input.customer,
        ...(input.billingAddress ? { billingAddress: input.billingAddress } : {}),
        ...(input.acquirerAccount ? { acquirerAccount: input.acquirerAccount } : {}),
        updatedAt: now.toISOString(),
      },
      remove: [
        'reason',
        'browser',
        input.wallet ? 'card' : 'wallet',
        ...(input.billingAddress ? [] : ['billingAddress' as const]),
        // A merchant moved back to the stage's account since the last attempt: this one goes through the stage's.
        ...(input.acquirerAccount ? [] : ['acquirerAccount' as const]),
      ],
      queue: input.recheck,
      keep: true,
    },
  };
}

/** A merchant's retry of a soft-declined recurring payment: a new attempt on the same payment. */
export function claimRetry(payment: Payment, input: { readonly ref: AttemptRef; readonly recheck: QueueEntry }, now: Date): Transition {
  const { ref } = input;
  const at = now.toISOString();
  return {
    guard: { statusIn: TRANSITIONS.retry.from, attemptIs: payment.attempt ?? 1, inFlight: 'none' },
    change: {
      set: { status: 'prepare', attempt: ref.attempt, softDecline: false, inFlight: { attempt: ref.attempt, transId: ref.transId, startedAt: at, idempotencyKey: ref.idempotencyKey }, updatedAt: at },
      remove: ['reason'],
      queue: input.recheck,
    },
  };
}

/** The guard of an attempt's answer: that attempt, in flight or waiting on its challenge. */
const answerGuard = (ref: Pick<AttemptRef, 'attempt'>, from: AttemptStage): TransitionGuard =>
  from === 'action' ? { actionAttempt: ref.attempt, statusIn: ['3ds', 'redirect'] } : { inFlight: ref.attempt };

/** The answer of an attempt, as the transaction its callback reports (sale or recurring, also after a challenge). */
interface Answer {
  readonly ref: AttemptRef;
  readonly from: AttemptStage;
  readonly type: AttemptType;
  readonly acquirerRef: string;
}

const attemptTransaction = (payment: Payment, a: Answer, now: Date, status: Transaction['status'], reason?: string, extra: Partial<Transaction> = {}): Transaction => ({
  transId: a.ref.transId,
  type: a.type,
  status,
  amountMinor: payment.order.amountMinor,
  at: now.toISOString(),
  acquirerRef: a.acquirerRef,
  ...(reason ? { reason } : {}),
  ...extra,
});

/**
 * An approval: settled (with its void window), or an authorization (DMS) that waits in the capture
 * queue for its automatic capture or its expiry. The card token and recurring chain the payment
 * asked for are issued before, and named here.
 */
export function recordApproval(
  payment: Payment,
  input: Answer & {
    readonly authorizeOnly: boolean;
    readonly authorizationValidityMs: number;
    readonly autoCaptureDelayMinutes?: number;
    readonly tokens?: Pick<Payment, 'cardToken' | 'recurringToken' | 'recurringInitTransId'>;
    /** Check the acquirer for chargebacks on a schedule once the money settles (Policy.disputeChecks). */
    readonly disputeChecks?: boolean;
  },
  now: Date,
): Transition {
  const at = now.toISOString();
  const status: PaymentStatus = input.authorizeOnly ? 'pending' : 'settled';
  const authorizationExpiresAt = input.authorizeOnly ? new Date(now.getTime() + input.authorizationValidityMs) : undefined;
  const captureDue = authorizationExpiresAt ? { name: QUEUES.capture, dueAt: nextCaptureEvent(now, input.autoCaptureDelayMinutes, authorizationExpiresAt).toISOString() } : null;
  const voidableUntil = status === 'settled' ? voidWindowEndsAt(now) : undefined;
  return {
    guard: answerGuard(input.ref, input.from),
    change: {
      set: {
        status,
        paidAt: at,
        authorization: { idempotencyKey: input.ref.idempotencyKey, acquirerRef: input.acquirerRef },
        updatedAt: at,
        ...input.tokens,
        ...(input.disputeChecks ? { disputeChecks: 0 } : {}),
        ...(voidableUntil ? { voidableUntil: voidableUntil.toISOString() } : {}),
        ...(authorizationExpiresAt ? { authorizationExpiresAt: authorizationExpiresAt.toISOString() } : {}),
      },
      remove: ['inFlight', 'action', 'reason'],
      append: [attemptTransaction(payment, input, now, 'success')],
      queue: captureDue ?? restingQueue({ ...payment, status, inFlight: undefined, action: undefined, ...(input.disputeChecks ? { disputeChecks: 0 } : {}), transactions: [...payment.transactions, attemptTransaction(payment, input, now, 'success')] }, now),
    },
  };
}

/**
 * What recording a decline changes beyond the status: a decline the customer may still follow with
 * another attempt on the link is held (attempts.ts); one that ends the link closes it.
 */
export function declineChange(payment: Payment, maxDeclines: number, declinesAfter: number, now: Date): { held?: true; linkClosed?: LinkClosure } {
  const effect = declineEffect(payment, declinesAfter, maxDeclines, now);
  return effect.held ? { held: true } : effect.linkClosed ? { linkClosed: effect.linkClosed } : {};
}

/** A decline from the acquirer: counted against the link's declines; held, or closing the link. */
export function recordDecline(payment: Payment, input: Answer & { readonly reason: string; readonly soft: boolean; readonly maxDeclines: number }, now: Date): Transition {
  const declines = (payment.declines ?? 0) + 1;
  const { held, linkClosed } = declineChange(payment, input.maxDeclines, declines, now);
  return {
    guard: answerGuard(input.ref, input.from),
    change: {
      set: { status: 'decline', reason: input.reason, declines, softDecline: input.soft, updatedAt: now.toISOString(), ...(linkClosed ? { linkClosed } : {}) },
      remove: ['inFlight', 'action'],
      append: [attemptTransaction(payment, input, now, 'fail', input.reason, held ? { held } : {})],
      queue: restingQueue({ ...payment, status: 'decline', inFlight: undefined, action: undefined, linkClosed }, now),
    },
  };
}

/** The customer is sent to a challenge or the bank: the step is recorded (3ds/success/3ds), the answer waits. */
export function recordAction(payment: Payment, input: Answer & { readonly flow: '3ds' | 'redirect'; readonly url: string }, now: Date): Transition {
  const at = now.toISOString();
  const { ref } = input;
  return {
    guard: answerGuard(ref, input.from),
    change: {
      set: {
        status: input.flow,
        action: { attempt: ref.attempt, transId: ref.transId, flow: input.flow, url: input.url, idempotencyKey: ref.idempotencyKey, acquirerRef: input.acquirerRef, startedAt: at, ...(ref.authorizeOnly !== undefined ? { authorizeOnly: ref.authorizeOnly } : {}) },
        updatedAt: at,
      },
      remove: ['inFlight'],
      append: [{ ...attemptTransaction(payment, input, now, 'success'), type: input.flow }],
      queue: { name: QUEUES.reconcile, dueAt: new Date(now.getTime() + ACTION_TIMEOUT_MS).toISOString() },
    },
  };
}

/**
 * An attempt the acquirer could not make final, declined here: watched for a late approval. One
 * interrupted before the acquirer had it does not count against the customer.
 */
export function recordLocalDecline(
  payment: Payment,
  input: { readonly attempt: Omit<WatchedAttempt, 'until'>; readonly reason: string; readonly from: 'inFlight' | 'action'; readonly acquirerRef?: string; readonly maxDeclines: number },
  now: Date,
): Transition {
  const at = now.toISOString();
  const { attempt, reason, from, acquirerRef } = input;
  const declines = (payment.declines ?? 0) + (from === 'action' ? 1 : 0);
  const { held, linkClosed } = declineChange(payment, input.maxDeclines, declines, now);
  return {
    guard: from === 'inFlight' ? { inFlight: attempt.attempt } : { actionAttempt: attempt.attempt, statusIn: [payment.status] },
    change: {
      set: { status: 'decline', reason, updatedAt: at, declines, ...(linkClosed ? { linkClosed } : {}) },
      remove: [from],
      append: [{ transId: attempt.transId, type: attempt.type, status: 'fail', amountMinor: payment.order.amountMinor, at, reason, ...(acquirerRef ? { acquirerRef } : {}), ...(held ? { held } : {}) }],
      // The attempt paid with the payment's card or wallet as it is now; a later attempt may replace them.
      watch: { put: { ...attempt, paidWith: instrumentOf(payment), until: new Date(now.getTime() + LATE_APPROVAL_WATCH_MS).toISOString() } },
      queue: { name: QUEUES.reconcile, dueAt: new Date(now.getTime() + LATE_APPROVAL_CHECK_MS).toISOString() },
    },
  };
}

/**
 * A declined link closed for good (the customer closed the page, or it expired): the held decline's
 * callback is queued in the same write, guarded by the link being as read (an attempt started
 * meanwhile wins).
 */
export function closeLink(payment: Payment, why: 'customer' | 'expired', now: Date): Transition {
  const held = heldDeclineIndex(payment);
  return {
    guard: { statusIn: ['decline'], inFlight: 'none', attemptIs: payment.attempt ?? 0, linkNotClosed: true },
    change: { set: { linkClosed: { at: now.toISOString(), why }, updatedAt: now.toISOString() }, ...(held !== undefined ? { sendCallback: held } : {}) },
  };
}

/** A watched attempt the acquirer declined (or whose watch ended): no longer watched. */
export function stopWatching(attempt: number, now: Date): Transition {
  return { guard: { watching: attempt }, change: { set: { updatedAt: now.toISOString() }, watch: { delete: attempt } } };
}
