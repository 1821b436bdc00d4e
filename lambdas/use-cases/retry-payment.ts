import { ApiError } from '../domain/errors';
import { refusalOf } from '../domain/state-machine';
import { claimRetry } from '../domain/payment';
import { ownPayment, type AcceptedResponse, type OperationOptions, type PaymentIdRequest } from '../protocol/merchant/operations';
import { reconcileAt } from './record-outcome';
import { recordMerchantInitiated, type RecurringDeps } from './recurring-payment';
import { authorizeOrUnknown } from './payment-attempt';

/**
 * POST /api/v1/payment/retry: tries a soft-declined recurring payment again on the same payment.
 * The new attempt is claimed with a conditional write, so concurrent retries charge at most once.
 */
export async function retryPayment(deps: RecurringDeps, merchantKey: string, r: PaymentIdRequest, options: OperationOptions = {}): Promise<AcceptedResponse> {
  const payment = await ownPayment(deps.store, merchantKey, r.payment_id);
  // A replayed request (same Idempotency-Key) whose retry was made already: the first answer.
  const made = (p: typeof payment) => options.transId !== undefined && (p.inFlight?.transId === options.transId || p.transactions.some((t) => t.transId === options.transId));
  if (made(payment)) return { payment_id: payment.paymentId, result: 'accepted' };
  const refusal = refusalOf('retry', payment);
  if (refusal) throw new ApiError(refusal);
  const chain = payment.recurringChainToken ? await deps.tokens.findRecurringChain(payment.recurringChainToken) : undefined;
  if (!chain) throw new ApiError('RETRY_NOT_ALLOWED');

  const now = deps.clock.now();
  const attempt = (payment.attempt ?? 1) + 1;
  const transId = options.transId ?? deps.ids.transId();
  const idempotencyKey = `${payment.paymentId}.${attempt}`;
  const claim = await deps.store.apply(payment.paymentId, claimRetry(payment, { ref: { attempt, transId, idempotencyKey }, recheck: reconcileAt(deps.policy, now) }, now));
  if (!claim.applied) {
    if (claim.payment && made(claim.payment)) return { payment_id: payment.paymentId, result: 'accepted' };
    throw new ApiError('RETRY_NOT_ALLOWED');
  }
  const claimed = claim.payment;
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
  });
  await recordMerchantInitiated(deps, claimed, { attempt, transId, idempotencyKey }, outcome);
  return { payment_id: payment.paymentId, result: 'accepted' };
}
