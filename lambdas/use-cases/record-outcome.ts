import { telemetry } from '../observability/telemetry';
import { recordAction, recordApproval, recordDecline, type AttemptRef, type AttemptStage, type AttemptType, type Payment, type PaymentStatus, type Transition } from '../domain/payment';
import type { AcquirerOutcome } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import { DEFAULT_SETTINGS, type Merchant } from '../ports/merchants';
import type { PaymentStore } from '../ports/payments';
import type { TokenVault } from '../ports/tokens';
import { withBackoff } from './backoff';
import { QUEUES, RECONCILE_AFTER_MS, reconcileAt, type Policy } from './work-queue';

export { QUEUES, RECONCILE_AFTER_MS, reconcileAt, type Policy };
export { ACTION_TIMEOUT_MS, nextCaptureEvent, type AttemptRef, type AttemptStage, type AttemptType } from '../domain/payment';

/** Statuses in which the money moved (or is held): the link is used up. */
export const PAID: readonly PaymentStatus[] = ['settled', 'pending', 'refund', 'void', 'reversal', 'chargeback'];

export interface RecordDeps {
  readonly store: PaymentStore;
  readonly policy: Policy;
  readonly tokens: TokenVault;
  readonly clock: Clock;
  readonly ids: Ids;
}

export type AttemptRecorded =
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
): Promise<AttemptRecorded> {
  const recorded = (await withBackoff(() => recordOnce(deps, payment, merchant, ref, outcome, type, from), undefined, { clock: deps.clock })) ?? { kind: 'deferred' };
  // Counted by the write that recorded it: the page, the challenge return or the reconciler, once.
  if (recorded.kind === 'recorded') telemetry.attemptRecorded(outcome.kind === 'action' ? outcome.flow : outcome.kind, payment.merchantKey);
  return recorded;
}

/** How many declines a link takes before it closes. */
export const maxDeclinesOf = (m: Pick<Merchant, 'maxDeclines'>): number => m.maxDeclines ?? DEFAULT_SETTINGS.maxDeclines;

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
): Promise<AttemptRecorded> {
  const now = deps.clock.now();
  const answer = { ref, from, type, acquirerRef: outcome.acquirerRef };
  let transition: Transition;
  switch (outcome.kind) {
    case 'approved': {
      const authorizeOnly = type !== 'recurring' && (ref.authorizeOnly ?? merchant.dms);
      const tokens = outcome.storedCredentialRef ? await issueTokens(deps, payment, ref, outcome.storedCredentialRef, now) : {};
      transition = recordApproval(payment, { ...answer, authorizeOnly, authorizationValidityMs: deps.policy.authorizationValidityMs, autoCaptureDelayMinutes: merchant.autoCaptureDelayMinutes, tokens, disputeChecks: deps.policy.disputeChecks }, now);
      break;
    }
    case 'declined':
      transition = recordDecline(payment, { ...answer, reason: outcome.reason, soft: outcome.soft === true, maxDeclines: maxDeclinesOf(merchant) }, now);
      break;
    case 'action':
      transition = recordAction(payment, { ...answer, flow: outcome.flow, url: outcome.url }, now);
      break;
  }
  const recorded = await deps.store.apply(payment.paymentId, transition);
  return recorded.applied ? { kind: 'recorded', payment: recorded.payment } : { kind: 'lost' };
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
      ...(payment.acquirerAccount ? { acquirerAccount: payment.acquirerAccount } : {}),
    });
  }
  return out;
}
