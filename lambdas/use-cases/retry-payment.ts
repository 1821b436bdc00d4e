import { ApiError } from '../domain/errors';
import { refusalOf } from '../domain/state-machine';
import { claimRetry } from '../domain/payment';
import type { Payment } from '../domain/payment';
import { reconcileAt } from './record-outcome';
import { recordMerchantInitiated, type RecurringDeps } from './recurring-payment';
import { authorizeOrUnknown } from './payment-attempt';

/** A retry of a soft-declined merchant-initiated payment, with the transaction id a replayed request reuses. */
export interface RetryCommand {
  readonly payment: Payment;
  readonly transId?: string;
}

/** Accepted: the new attempt is claimed (or was, by the request this one replays); its outcome follows in the status and callbacks. */
export interface RetryAccepted {
  readonly kind: 'accepted';
  readonly payment: Payment;
}

/**
 * Tries a soft-declined recurring payment again on the same payment. The new attempt is claimed
 * with a conditional write (claimRetry), so concurrent retries charge at most once.
 */
export async function retryPayment(deps: RecurringDeps, command: RetryCommand): Promise<RetryAccepted> {
  const { payment } = command;
  // A replayed request (same Idempotency-Key) whose retry was made already: the first answer.
  const made = (p: Payment) => command.transId !== undefined && (p.inFlight?.transId === command.transId || p.transactions.some((t) => t.transId === command.transId));
  if (made(payment)) return { kind: 'accepted', payment };
  const refusal = refusalOf('retry', payment);
  if (refusal) throw new ApiError(refusal);
  const chain = payment.recurringChainToken ? await deps.tokens.findRecurringChain(payment.recurringChainToken) : undefined;
  if (!chain) throw new ApiError('RETRY_NOT_ALLOWED');

  const now = deps.clock.now();
  const attempt = (payment.attempt ?? 1) + 1;
  const transId = command.transId ?? deps.ids.transId();
  const idempotencyKey = `${payment.paymentId}.${attempt}`;
  const claim = await deps.store.apply(payment.paymentId, claimRetry(payment, { ref: { attempt, transId, idempotencyKey }, recheck: reconcileAt(deps.policy, now) }, now));
  // A claim whose answer was lost (the SDK tried again and found it done) holds this request's fresh transaction id.
  const ownClaim = command.transId === undefined && claim.payment?.inFlight?.transId === transId;
  if (!claim.applied && !ownClaim) {
    if (claim.payment && made(claim.payment)) return { kind: 'accepted', payment: claim.payment };
    throw new ApiError('RETRY_NOT_ALLOWED');
  }
  const claimed = claim.payment!;
  const outcome = await authorizeOrUnknown(deps.acquirer, {
    idempotencyKey,
    paymentId: payment.paymentId,
    amountMinor: payment.order.amountMinor,
    currency: payment.order.currency,
    capture: true,
    instrument: { kind: 'stored', storedCredentialRef: chain.storedCredentialRef, summary: chain.card },
    returnUrl: 'https://invalid.example/merchant-initiated',
    storeCredential: false,
    recurring: true,
    attempt,
    ...(payment.acquirerAccount ? { account: payment.acquirerAccount } : {}),
  });
  await recordMerchantInitiated(deps, claimed, { attempt, transId, idempotencyKey }, outcome);
  return { kind: 'accepted', payment: claimed };
}
