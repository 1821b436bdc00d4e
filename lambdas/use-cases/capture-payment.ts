import { ApiError } from '../domain/errors';
import { protocolDate, type Payment } from '../domain/payment';
import { refusalOf, TRANSITIONS } from '../domain/state-machine';
import { voidWindowEndsAt } from '../domain/void-window';
import type { Acquirer } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import { TransitionRejected, type PaymentStore } from '../ports/payments';
import { QUEUES } from './record-outcome';

export interface CaptureDeps {
  readonly store: PaymentStore;
  readonly acquirer: Acquirer;
  readonly clock: Clock;
  readonly ids: Ids;
}

export interface CaptureResponse {
  payment_id: string;
  status: string;
  trans_status: 'SUCCESS' | 'FAIL';
  date: string;
  reason?: string;
}

/** A capture claimed longer ago than this was interrupted (a crash, a timeout): the capture job finishes it. */
export const STALE_CLAIM_MS = 5 * 60_000;

export type CaptureResult =
  | { readonly kind: 'captured'; readonly payment: Payment }
  | { readonly kind: 'declined'; readonly payment: Payment; readonly reason: string }
  /** Someone else (the job, an operator, another request) captured or released it first. */
  | { readonly kind: 'taken'; readonly payment: Payment };

/**
 * Captures an authorization, fully or once partially (amount ≤ authorized). Whoever asks — the
 * API, an operator, the capture job — claims the capture with a conditional write first, so two
 * at the same moment can never both capture; the acquirer's answer is recorded with a second
 * write guarded by that claim. A declined capture leaves the payment pending.
 */
export async function capture(deps: CaptureDeps, payment: Payment, amountMinor: number, actor: string): Promise<CaptureResult> {
  const refusal = refusalOf('capture', payment);
  if (refusal) throw new ApiError(refusal);
  if (amountMinor > payment.order.amountMinor) throw new ApiError('CAPTURE_AMOUNT_TOO_BIG');
  if (amountMinor <= 0) throw new ApiError('CAPTURE_AMOUNT_TOO_BIG');
  if (!payment.authorization) throw new Error(`payment ${payment.paymentId} has no authorization`);
  const transId = deps.ids.transId();
  const now = deps.clock.now();
  const started = now.toISOString();
  try {
    await deps.store.transition(payment.paymentId, { statusIn: TRANSITIONS.capture.from, capturing: 'none' }, {
      set: { capturing: { transId, amountMinor, startedAt: started, actor }, updatedAt: started },
      // Should this capture never be finished, the job looks at it as soon as the claim is stale,
      // not at the authorization's next event (its expiry, days away, when capture is manual).
      queue: { name: QUEUES.capture, dueAt: new Date(now.getTime() + STALE_CLAIM_MS).toISOString() },
    });
  } catch (e) {
    if (!(e instanceof TransitionRejected)) throw e;
    return { kind: 'taken', payment: (await deps.store.findPayment(payment.paymentId)) ?? payment };
  }
  return finishCapture(deps, payment, { transId, amountMinor, actor });
}

/** Asks the acquirer for a claimed capture and records the answer (also used to finish a stale claim). */
export async function finishCapture(deps: CaptureDeps, payment: Payment, claim: { transId: string; amountMinor: number; actor: string }): Promise<CaptureResult> {
  const outcome = await deps.acquirer.capture({
    idempotencyKey: `${payment.paymentId}.capture.${claim.transId}`,
    authorization: payment.authorization ?? { idempotencyKey: '', acquirerRef: '' },
    amountMinor: claim.amountMinor,
    currency: payment.order.currency,
  });
  const now = deps.clock.now();
  const at = now.toISOString();
  const tx = {
    transId: claim.transId,
    type: 'capture' as const,
    status: outcome.kind === 'approved' ? ('success' as const) : ('fail' as const),
    amountMinor: claim.amountMinor,
    at,
    acquirerRef: outcome.acquirerRef,
    actor: claim.actor,
    ...(outcome.kind === 'declined' ? { reason: outcome.reason } : {}),
  };
  try {
    if (outcome.kind === 'approved') {
      const voidableUntil = voidWindowEndsAt(now);
      const next = await deps.store.transition(payment.paymentId, { capturing: claim.transId, statusIn: TRANSITIONS.capture.from }, {
        set: { status: 'settled', capturedMinor: claim.amountMinor, updatedAt: at, ...(voidableUntil ? { voidableUntil: voidableUntil.toISOString() } : {}) },
        remove: ['capturing', 'reason'],
        append: [tx],
        queue: null,
      });
      return { kind: 'captured', payment: next };
    }
    const next = await deps.store.transition(payment.paymentId, { capturing: claim.transId }, {
      // A claimed capture keeps the payment pending (release needs no claim), so this is its status.
      set: { status: 'pending', reason: outcome.reason, updatedAt: at },
      remove: ['capturing'],
      append: [tx],
      // A declined capture is not retried automatically: it waits for an operator or its expiry.
      queue: payment.authorizationExpiresAt ? { name: QUEUES.capture, dueAt: payment.authorizationExpiresAt } : null,
    });
    return { kind: 'declined', payment: next, reason: outcome.reason };
  } catch (e) {
    if (!(e instanceof TransitionRejected)) throw e;
    return { kind: 'taken', payment: (await deps.store.findPayment(payment.paymentId)) ?? payment };
  }
}

export const RELEASE_REASON = 'Authorization released.';

/** Gives an authorization back (status reversal): by an operator, or by the job when it expires. */
export async function release(deps: CaptureDeps, payment: Payment, actor: string, reason = RELEASE_REASON): Promise<CaptureResult> {
  const refusal = refusalOf('release', payment);
  if (refusal) throw new ApiError(refusal);
  const at = deps.clock.now().toISOString();
  try {
    const next = await deps.store.transition(payment.paymentId, { statusIn: TRANSITIONS.release.from, capturing: 'none' }, {
      set: { status: 'reversal', reason, updatedAt: at },
      append: [{ transId: deps.ids.transId(), type: 'reversal', status: 'success', amountMinor: payment.order.amountMinor, at, actor, reason }],
      queue: null,
    });
    return { kind: 'captured', payment: next };
  } catch (e) {
    if (!(e instanceof TransitionRejected)) throw e;
    return { kind: 'taken', payment: (await deps.store.findPayment(payment.paymentId)) ?? payment };
  }
}

/**
 * The API's answer to a capture. A capture another request claimed first is refused (208003), as
 * racing voids and retries are: this request captured nothing, and answering FAIL while the other
 * capture succeeds would tell the merchant the opposite of what happened.
 */
export function captureResponse(result: CaptureResult, now: Date): CaptureResponse {
  if (result.kind === 'taken') throw new ApiError('CAPTURE_NOT_PENDING');
  const p = result.payment;
  return {
    payment_id: p.paymentId,
    status: p.status,
    trans_status: result.kind === 'captured' ? 'SUCCESS' : 'FAIL',
    date: protocolDate(now.toISOString()),
    ...(result.kind === 'declined' ? { reason: result.reason } : {}),
  };
}
