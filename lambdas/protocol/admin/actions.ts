import { invalidRequest } from '../../domain/errors';
import { RULE } from '../../domain/validation';
import type { PaymentStatus } from '../../domain/payment';
import { PAYMENT_ACTIONS, type ActionResult, type PaymentAction } from '../../use-cases/admin/operator-actions';

/** POST /admin/api/payments/{paymentId}/{action} with {"amount"?}: the action, and the amount as typed. */
export function paymentActionOf(action: string | undefined, body: Record<string, unknown>): { action: PaymentAction; typedAmount?: string } {
  if (!(PAYMENT_ACTIONS as readonly (string | undefined)[]).includes(action)) throw invalidRequest([{ path: 'action', message: RULE.choice }]);
  const amount = body.amount === undefined || body.amount === null ? undefined : String(body.amount);
  return { action: action as PaymentAction, ...(amount !== undefined ? { typedAmount: amount } : {}) };
}

/**
 * POST /admin/api/capture-queue/bulk with {"action": "capture"|"release", "payment_ids": [...],
 * "amounts"?: {"<payment id>": "1.00"}}: a capture takes each payment's amount from `amounts`.
 */
export function bulkActionOf(body: Record<string, unknown>): { action: 'capture' | 'release'; paymentIds: string[]; amounts: Record<string, string> } {
  const action = body.action;
  if (action !== 'capture' && action !== 'release') throw invalidRequest([{ path: 'action', message: RULE.choice }]);
  const paymentIds = Array.isArray(body.payment_ids) ? body.payment_ids.filter((i): i is string => typeof i === 'string') : [];
  const amounts = body.amounts ?? {};
  if (typeof amounts !== 'object' || Array.isArray(amounts) || amounts === null || Object.values(amounts).some((a) => typeof a !== 'string')) {
    throw invalidRequest([{ path: 'amounts', message: 'Give an object of payment id to amount, e.g. {"<payment id>": "1.00"}.' }]);
  }
  return { action, paymentIds, amounts: amounts as Record<string, string> };
}

/** What the portal is answered for an action on one payment (alone, or a row of a bulk answer). */
export interface ActionOutcome {
  readonly payment_id: string;
  readonly action: PaymentAction;
  /** `not-started`: a bulk request ran out of time before this payment; nothing was done to it. */
  readonly outcome: ActionResult['outcome'];
  readonly status?: PaymentStatus;
  readonly message?: string;
}

export const actionOutcomeOf = (r: ActionResult): ActionOutcome => ({
  payment_id: r.paymentId,
  action: r.action,
  outcome: r.outcome,
  ...(r.status !== undefined ? { status: r.status } : {}),
  ...(r.message !== undefined ? { message: r.message } : {}),
});

/**
 * POST /admin/api/payments/{paymentId}/callbacks/{index}/resend with {"contradiction_confirmed"?}:
 * the callback's index (from 0) and whether the operator confirmed a resend that contradicts the
 * payment's state now.
 */
export function callbackResendOf(rawIndex: string | undefined, body: Record<string, unknown>): { index: number; contradictionConfirmed: boolean } {
  const raw = rawIndex ?? '';
  const index = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(index)) throw invalidRequest([{ path: 'index', message: RULE.invalid }]);
  const confirmed = body.contradiction_confirmed;
  if (confirmed !== undefined && typeof confirmed !== 'boolean') throw invalidRequest([{ path: 'contradiction_confirmed', message: RULE.invalid }]);
  return { index, contradictionConfirmed: confirmed === true };
}
