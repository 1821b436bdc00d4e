import { ApiError, ERRORS, invalidRequest } from '../../domain/errors';
import { currencyExponent, formatMinor, operatorAmountLiteral, parseAmount } from '../../domain/money';
import { refundLeftMinor, type Payment, type PaymentStatus } from '../../domain/payment';
import { refusalOf } from '../../domain/state-machine';
import { voidBlockedReason } from '../../domain/void-window';
import { CAPTURE_IN_PROGRESS_REASON, capture, release } from '../capture-payment';
import { refund } from '../refund-payment';
import { VOID_IN_PROGRESS_REASON, voidPayment } from '../void-payment';
import { ADMIN_LIMITS, type AdminDeps } from './deps';

export type PaymentAction = 'capture' | 'release' | 'void' | 'refund';
export const PAYMENT_ACTIONS: readonly PaymentAction[] = ['capture', 'release', 'void', 'refund'];

/** What is still left to refund: captured (or paid) minus what refunds hold or took. */
export const leftToRefundMinor = (p: Payment): number => Math.max(0, refundLeftMinor(p));

/** What an operator may do with a payment now (the portal shows these buttons only). */
export function allowedActions(p: Payment, now: Date): PaymentAction[] {
  const actions: PaymentAction[] = [];
  if (!refusalOf('capture', p) && !p.operation) actions.push('capture', 'release');
  if (!refusalOf('void', p) && !voidBlockedReason(p, now) && !p.operation) actions.push('void');
  if (!refusalOf('refund', p) && !p.operation && refundLeftMinor(p) > 0) actions.push('refund');
  return actions;
}

/**
 * An amount an operator typed, in the payment's currency. Operators write "100", "12.5" or "12,50"
 * for 100.00, 12.50 and 12.50: the portal reads those as the merchant API never would (it keeps the
 * platform's exact literal rules), and answers a malformed one with the form it wants.
 */
export function operatorAmount(typed: string, currency: string): { literal: string; amountMinor: number } {
  const exponent = currencyExponent(currency) ?? 2;
  const example = exponent === 0 ? '1250' : `12.${'5'.padEnd(exponent, '0')}`;
  const wrong = () => invalidRequest([{ path: 'amount', message: `Write the amount in ${currency} with ${exponent === 0 ? 'no decimals' : `up to ${exponent} decimals`}, e.g. ${example}.` }]);
  // The rule the portal's script shows the amount by before sending it (domain/money.ts).
  const literal = operatorAmountLiteral(typed, currency);
  if (literal === undefined) throw wrong();
  const parsed = parseAmount(literal, currency);
  if (parsed === 'not-positive') throw invalidRequest([{ path: 'amount', message: 'The amount must be more than zero.' }]);
  if (typeof parsed === 'string') throw wrong();
  return { literal: parsed.literal, amountMinor: parsed.amountMinor };
}

/** The refusals an operator reads, with the numbers that explain them (the merchant API keeps the catalog's words). */
function operatorRefusal(e: ApiError, action: PaymentAction, p: Payment, amount: string | undefined): string {
  const money = (minor: number) => `${formatMinor(minor, p.order.currency)} ${p.order.currency}`;
  if (e.entry === ERRORS.REFUND_AMOUNT_TOO_BIG) return `Refund amount${amount ? ` ${amount}` : ''} is bigger than what is left to refund (${money(leftToRefundMinor(p))}).`;
  if (e.entry === ERRORS.CAPTURE_AMOUNT_TOO_BIG && action === 'capture') return `Capture amount${amount ? ` ${amount}` : ''} is bigger than the authorized amount (${money(p.order.amountMinor)}).`;
  return e.fieldErrors.length ? e.fieldErrors.map((f) => `${f.path}: ${f.message}`).join(' ') : e.message;
}

/** A payment's state as an audit entry records it before and after an action. */
const snapshot = (p: Payment): Record<string, unknown> => ({
  status: p.status,
  ...(p.reason ? { reason: p.reason } : {}),
  ...(p.capturedMinor !== undefined ? { captured_amount: formatMinor(p.capturedMinor, p.order.currency) } : {}),
  ...(p.refundedMinor ? { refunded_amount: formatMinor(p.refundedMinor, p.order.currency) } : {}),
});

/** An operator's action on one payment, with the amount as they typed it (none: the whole amount). */
export interface OperatorAction {
  readonly actor: string;
  readonly paymentId: string;
  readonly action: PaymentAction;
  readonly typedAmount?: string;
  /** How long a started capture or release is waited for (then it is "being processed"). */
  readonly answerBy?: Date;
}

/** What came of an operator's action on one payment. */
export interface ActionResult {
  readonly paymentId: string;
  readonly action: PaymentAction;
  /** `not-started`: a bulk request ran out of time before this payment; nothing was done to it. */
  readonly outcome: 'done' | 'refused' | 'failed' | 'not-started';
  readonly status?: PaymentStatus;
  readonly message?: string;
}

export const RELEASE_IN_PROGRESS_REASON = 'The release is being processed; its outcome follows in the payment status.';
export const NOT_STARTED_REASON = 'Not started: the request ran out of time before this payment. Nothing was done to it; select it and try again.';
const TAKEN_REASON = 'Someone else captured or released this payment first.';

/**
 * An operator's action on a payment, with the same rules and conditional writes as the API and
 * the capture job. Every attempt, done or refused, is written to the audit log with the state
 * before and after.
 */
export async function operatorAction(deps: AdminDeps, command: OperatorAction): Promise<ActionResult> {
  const { actor, paymentId, action, typedAmount, answerBy } = command;
  const before = await deps.store.findPayment(paymentId);
  if (!before) throw new ApiError('PAYMENT_NOT_FOUND');
  let outcome: ActionResult['outcome'] = 'done';
  let message: string | undefined;
  let amount: { literal: string; amountMinor: number } | undefined;
  try {
    amount = typedAmount === undefined || typedAmount.trim() === '' ? undefined : operatorAmount(typedAmount, before.order.currency);
    switch (action) {
      case 'capture': {
        const result = await capture(deps, { payment: before, amountMinor: amount?.amountMinor ?? before.order.amountMinor, actor: `operator:${actor}`, ...(answerBy ? { answerBy } : {}) });
        if (result.kind === 'declined') [outcome, message] = ['failed', result.reason];
        if (result.kind === 'taken') [outcome, message] = ['refused', TAKEN_REASON];
        if (result.kind === 'in-progress') message = CAPTURE_IN_PROGRESS_REASON;
        break;
      }
      case 'release': {
        const result = await release(deps, before, `operator:${actor}`, undefined, answerBy);
        if (result.kind === 'taken') [outcome, message] = ['refused', TAKEN_REASON];
        if (result.kind === 'in-progress') message = RELEASE_IN_PROGRESS_REASON;
        if (result.kind === 'declined') [outcome, message] = ['failed', result.reason];
        break;
      }
      case 'void': {
        const result = await voidPayment(deps, { payment: before, actor: `operator:${actor}` });
        if (result.kind !== 'voided') [outcome, message] = ['failed', result.kind === 'failed' ? result.reason : VOID_IN_PROGRESS_REASON];
        break;
      }
      case 'refund':
        await refund(deps, { payment: before, amountMinor: amount?.amountMinor ?? leftToRefundMinor(before), actor: `operator:${actor}` });
        break;
    }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    outcome = 'refused';
    message = operatorRefusal(e, action, (await deps.store.findPayment(paymentId)) ?? before, amount?.literal ?? typedAmount);
  }
  const after = (await deps.store.findPayment(paymentId)) ?? before;
  const audited = amount?.literal ?? (typedAmount?.trim() ? typedAmount.trim().slice(0, 40) : undefined);
  await deps.audit.append({
    id: deps.ids.transId(),
    at: deps.clock.now().toISOString(),
    actor,
    action: `payment.${action}${audited ? ` ${audited}` : ''}`,
    target: paymentId,
    targetKind: 'payment',
    before: snapshot(before),
    after: snapshot(after),
    outcome,
    ...(message ? { detail: message } : {}),
  });
  return { paymentId, action, outcome, status: after.status, ...(message ? { message } : {}) };
}

/** What a bulk request leaves for the answer when it stops starting payments: the intent write, the audit entry, the answer. */
export const BULK_START_MARGIN_MS = 1_000;
/** What a request leaves of its function's time to send its answer (as the merchant routes do). */
export const ANSWER_MARGIN_MS = 1_500;

/** When a bulk request stops: no payment started after `startBy`; a started one's answer waited for until `answerBy`. */
export interface BulkDeadline {
  /** Epoch milliseconds (real time, as a function's deadline is). */
  readonly startBy: number;
  readonly answerBy: Date;
}

/** A bulk request's deadline from its function's end (the Lambda context's remaining time). */
export function bulkDeadlineOf(functionEnd: Date): BulkDeadline {
  const answerBy = new Date(functionEnd.getTime() - ANSWER_MARGIN_MS);
  return { startBy: answerBy.getTime() - BULK_START_MARGIN_MS, answerBy };
}

/** The same capture or release on several payments; a capture's amount per payment, as typed in its row. */
export interface BulkAction {
  readonly actor: string;
  readonly action: 'capture' | 'release';
  readonly paymentIds: readonly string[];
  readonly amounts?: Readonly<Record<string, string>>;
  readonly deadline?: BulkDeadline;
}

/**
 * The same action on many payments (bounded), each with its own audit entry. A capture takes each
 * payment's own amount from `amounts` (what the operator typed in its row); a payment without one
 * is captured in full. Amounts for payments not selected, or with a release, are refused: an
 * amount the request carries is never silently ignored. With a deadline, payments are started only
 * until `startBy` (each waited for until `answerBy` at most, then "being processed"); the rest are
 * answered `not-started`, so a big batch against a slow gateway answers per row instead of timing out.
 */
export async function bulkAction(deps: AdminDeps, command: BulkAction): Promise<ActionResult[]> {
  const { actor, action, paymentIds, amounts = {}, deadline } = command;
  if (!paymentIds.length || paymentIds.length > ADMIN_LIMITS.bulkSize) {
    throw invalidRequest([{ path: 'payment_ids', message: `Select 1 to ${ADMIN_LIMITS.bulkSize} payments.` }]);
  }
  const stray = Object.keys(amounts).filter((id) => !paymentIds.includes(id));
  if (action === 'release' && Object.keys(amounts).length) throw invalidRequest([{ path: 'amounts', message: 'A release has no amount: it releases the whole authorization.' }]);
  if (stray.length) throw invalidRequest([{ path: 'amounts', message: `Amounts for payments that are not selected: ${stray.slice(0, 5).join(', ')}.` }]);
  const results: ActionResult[] = [];
  for (const id of paymentIds) {
    // Out of time: the rest are answered as not started (nothing moved), never left to a timeout's 5xx.
    if (deadline && Date.now() >= deadline.startBy) {
      results.push({ paymentId: id, action, outcome: 'not-started', message: NOT_STARTED_REASON });
      continue;
    }
    try {
      results.push(await operatorAction(deps, { actor, paymentId: id, action, typedAmount: amounts[id], answerBy: deadline?.answerBy }));
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      results.push({ paymentId: id, action, outcome: 'refused', status: 'prepare', message: e.message });
    }
  }
  return results;
}
