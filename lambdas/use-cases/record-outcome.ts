import { voidWindowEndsAt } from '../domain/void-window';
import { telemetry } from '../observability/telemetry';
import { declineEffect } from '../domain/attempts';
import type { LinkClosure, Payment, PaymentStatus, Transaction, TransactionType } from '../domain/payment';
import type { AcquirerOutcome } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import { DEFAULT_SETTINGS, type Merchant } from '../ports/merchants';
import { TransitionRejected, type PaymentStore, type TransitionGuard } from '../ports/payments';
import type { TokenVault } from '../ports/tokens';
import { withBackoff } from './backoff';
import { restingQueue } from './money-operations';
import { QUEUES, RECONCILE_AFTER_MS, reconcileAt, type Policy } from './work-queue';

export { QUEUES, RECONCILE_AFTER_MS, reconcileAt, type Policy };

/** How long the customer has to finish a challenge before reconciliation looks at it. */
export const ACTION_TIMEOUT_MS = 20 * 60_000;

/** Statuses in which the money moved (or is held): the link is used up. */
export const PAID: readonly PaymentStatus[] = ['settled', 'pending', 'refund', 'void', 'reversal', 'chargeback'];

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


export interface RecordDeps {
  readonly store: PaymentStore;
  readonly policy: Policy;
  readonly tokens: TokenVault;
  readonly clock: Clock;
  readonly ids: Ids;
}

export type Recorded =
  | { readonly kind: 'recorded'; readonly payment: Payment }
  /** Someone else (the page, the challenge return, the reconciler) recorded this attempt first. */
  | { readonly kind: 'lost' }
  /** The write kept failing (throttling, an outage): the attempt stays in flight for the reconciler. */
  | { readonly kind: 'deferred' };

/**
 * Records an acquirer answer for one attempt (see recordOnce), retrying failed writes with backoff:
 * once the acquirer has answered, the caller never fails because our write did.
 */
export async function recordOutcome(
  deps: RecordDeps,
  payment: Payment,
  merchant: Merchant,
  ref: AttemptRef,
  outcome: Exclude<AcquirerOutcome, { kind: 'unknown' }>,
  type: AttemptType,
  from: AttemptStage = 'request',
): Promise<Recorded> {
  const recorded = (await withBackoff(() => recordOnce(deps, payment, merchant, ref, outcome, type, from), undefined, { clock: deps.clock })) ?? { kind: 'deferred' };
  // Counted by the write that recorded it: the page, the challenge return or the reconciler, once.
  if (recorded.kind === 'recorded') telemetry.attemptRecorded(outcome.kind === 'action' ? outcome.flow : outcome.kind, payment.merchantKey);
  return recorded;
}

/** A customer's attempt on a link is a sale; a merchant-initiated one (recurring, retry) is recurring. */
export type AttemptType = Extract<TransactionType, 'sale' | 'recurring'>;
/** The answer comes to the request itself (in flight), or after the customer's challenge or bank redirect. */
export type AttemptStage = 'request' | 'action';

const maxDeclinesOf = (m: Merchant): number => m.maxDeclines ?? DEFAULT_SETTINGS.maxDeclines;

/**
 * What recording a decline changes beyond the status: a decline the customer may still follow with
 * another attempt on the link is held (attempts.ts); one that ends the link closes it.
 */
export function declineChange(payment: Payment, merchant: Merchant, declinesAfter: number, now: Date): { held?: true; linkClosed?: LinkClosure } {
  const effect = declineEffect(payment, declinesAfter, maxDeclinesOf(merchant), now);
  return effect.held ? { held: true } : effect.linkClosed ? { linkClosed: effect.linkClosed } : {};
}

/**
 * Records an acquirer answer for one attempt in one conditional write guarded by that attempt
 * (in flight, or waiting on its challenge), with its transaction appended in the same write. On
 * approval, the card token and recurring chain the payment asked for are issued first, so the
 * payment never names a token that does not exist.
 */
async function recordOnce(
  deps: RecordDeps,
  payment: Payment,
  merchant: Merchant,
  ref: AttemptRef,
  outcome: Exclude<AcquirerOutcome, { kind: 'unknown' }>,
  type: AttemptType,
  from: AttemptStage,
): Promise<Recorded> {
  const now = deps.clock.now();
  const at = now.toISOString();
  const guard: TransitionGuard = from === 'action' ? { actionAttempt: ref.attempt, statusIn: ['3ds', 'redirect'] } : { inFlight: ref.attempt };
  // The outcome of an attempt is its sale (or recurring) transaction, also after a challenge: the
  // platform reports a payment as completed only by type=sale, status=success (protocol.md §7).
  const tx = (status: Transaction['status'], reason?: string, extra: Partial<Transaction> = {}): Transaction => ({
    transId: ref.transId,
    type,
    status,
    amountMinor: payment.order.amountMinor,
    at,
    acquirerRef: outcome.acquirerRef,
    ...(reason ? { reason } : {}),
    ...extra,
  });
  try {
    switch (outcome.kind) {
      case 'approved': {
        const authorizeOnly = type !== 'recurring' && (ref.authorizeOnly ?? merchant.dms);
        const status: PaymentStatus = authorizeOnly ? 'pending' : 'settled';
        const tokens = outcome.storedCredentialRef ? await issueTokens(deps, payment, ref, outcome.storedCredentialRef, now) : {};
        // An authorization waits in the capture queue until its automatic capture or its expiry.
        const authorizationExpiresAt = authorizeOnly ? new Date(now.getTime() + deps.policy.authorizationValidityMs) : undefined;
        const captureDue = authorizationExpiresAt
          ? { name: QUEUES.capture, dueAt: nextCaptureEvent(now, merchant.autoCaptureDelayMinutes, authorizationExpiresAt).toISOString() }
          : null;
        const voidableUntil = status === 'settled' ? voidWindowEndsAt(now) : undefined;
        return {
          kind: 'recorded',
          payment: await deps.store.transition(payment.paymentId, guard, {
            set: {
              status,
              paidAt: at,
              authorization: { idempotencyKey: ref.idempotencyKey, acquirerRef: outcome.acquirerRef },
              updatedAt: at,
              ...tokens,
              ...(voidableUntil ? { voidableUntil: voidableUntil.toISOString() } : {}),
              ...(authorizationExpiresAt ? { authorizationExpiresAt: authorizationExpiresAt.toISOString() } : {}),
            },
            remove: ['inFlight', 'action', 'reason'],
            append: [tx('success')],
            queue: captureDue ?? restingQueue({ ...payment, status, inFlight: undefined, action: undefined }, now),
          }),
        };
      }
      case 'declined': {
        const declines = (payment.declines ?? 0) + 1;
        const { held, linkClosed } = declineChange(payment, merchant, declines, now);
        return {
          kind: 'recorded',
          payment: await deps.store.transition(payment.paymentId, guard, {
            set: {
              status: 'decline',
              reason: outcome.reason,
              declines,
              softDecline: outcome.soft === true,
              updatedAt: at,
              ...(linkClosed ? { linkClosed } : {}),
            },
            remove: ['inFlight', 'action'],
            append: [tx('fail', outcome.reason, held ? { held } : {})],
            queue: restingQueue({ ...payment, status: 'decline', inFlight: undefined, action: undefined, linkClosed }, now),
          }),
        };
      }
      case 'action':
        return {
          kind: 'recorded',
          payment: await deps.store.transition(payment.paymentId, guard, {
            set: {
              status: outcome.flow,
              action: { attempt: ref.attempt, transId: ref.transId, flow: outcome.flow, url: outcome.url, idempotencyKey: ref.idempotencyKey, acquirerRef: outcome.acquirerRef, startedAt: at, ...(ref.authorizeOnly !== undefined ? { authorizeOnly: ref.authorizeOnly } : {}) },
              updatedAt: at,
            },
            remove: ['inFlight'],
            // The step: the customer was sent to the challenge or the bank (3ds/success/3ds).
            append: [{ ...tx('success'), type: outcome.flow }],
            queue: { name: QUEUES.reconcile, dueAt: new Date(now.getTime() + ACTION_TIMEOUT_MS).toISOString() },
          }),
        };
    }
  } catch (e) {
    if (e instanceof TransitionRejected) return { kind: 'lost' };
    throw e;
  }
}

/** When the capture job should next look at an authorization: its automatic capture, else its expiry. */
export function nextCaptureEvent(authorizedAt: Date, delayMinutes: number | undefined, expiresAt: Date): Date {
  if (delayMinutes === undefined) return expiresAt;
  const due = new Date(authorizedAt.getTime() + delayMinutes * 60_000);
  return due < expiresAt ? due : expiresAt;
}

/** Card token (req_token) and recurring chain (recurring_init) for an approved first payment. */
async function issueTokens(deps: RecordDeps, payment: Payment, ref: AttemptRef, storedCredentialRef: string, now: Date): Promise<Partial<Payment>> {
  const card = payment.card;
  if (!card) return {};
  const out: { cardToken?: string; recurringToken?: string; recurringInitTransId?: string } = {};
  if (payment.checkout?.reqToken) {
    out.cardToken = deps.ids.longToken();
    await deps.tokens.saveCardToken({ token: out.cardToken, merchantKey: payment.merchantKey, storedCredentialRef, card, createdAt: now.toISOString() });
  }
  if (payment.checkout?.recurringInit) {
    out.recurringToken = deps.ids.longToken();
    out.recurringInitTransId = ref.transId;
    await deps.tokens.saveRecurringChain({
      token: out.recurringToken,
      merchantKey: payment.merchantKey,
      initPaymentId: payment.paymentId,
      initTransId: ref.transId,
      storedCredentialRef,
      currency: payment.order.currency,
      card,
      ...(payment.scheduleId ? { scheduleId: payment.scheduleId } : {}),
      customer: payment.customer,
      ...((payment.customerIp ?? payment.browser?.ip) ? { customerIp: payment.customerIp ?? payment.browser?.ip } : {}),
      createdAt: now.toISOString(),
    });
  }
  return out;
}
