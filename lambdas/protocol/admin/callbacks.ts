import { protocolDate } from '../../domain/payment';
import type { CallbackRecord } from '../../ports/callbacks';
import type { CallbackEntry, ResendOutcome } from '../../use-cases/callback-log';

/** One transaction's callback as the portal and the merchant CLI show it. */
export interface CallbackView {
  /** Position in the payment's sequence, from 0 (the API's, in the resend route's path). */
  readonly index: number;
  /** The callback's number as people see it everywhere (portal, CLI, audit): index + 1. */
  readonly number: number;
  readonly trans_id: string;
  readonly type: string;
  readonly status: string;
  /** The transaction's own amount, in decimals, and the payment's currency. */
  readonly amount: string;
  readonly currency: string;
  /** The order's status the callback carries (`order_status`). */
  readonly order_status: string;
  readonly date: string;
  /** not-sent: waiting for its first attempt (or no attempt recorded yet). */
  readonly state: CallbackRecord['state'] | 'not-sent';
  readonly attempt_count: number;
  readonly attempts: CallbackRecord['attempts'];
  readonly next_attempt_at?: string;
  readonly delivered_at?: string;
  readonly dead_at?: string;
  readonly last_error?: string;
  /** Whether an operator may send it again now (domain/callback-resend.ts). */
  readonly resendable: boolean;
  /** Why not, when it may not. */
  readonly not_resendable_reason?: string;
  /** When its order status is not the payment's now: the warning a resend's confirmation shows. */
  readonly contradiction?: string;
}

export function callbackView({ index, transaction: tx, message, record: r, refusal }: CallbackEntry): CallbackView {
  return {
    index,
    number: index + 1,
    trans_id: tx.transId,
    type: tx.type,
    status: tx.status,
    amount: message.amount,
    currency: message.currency,
    order_status: message.orderStatus,
    date: protocolDate(tx.at),
    state: r?.state ?? 'not-sent',
    attempt_count: r?.attemptCount ?? 0,
    attempts: r?.attempts ?? [],
    ...(r?.nextAttemptAt && r.state === 'pending' ? { next_attempt_at: r.nextAttemptAt } : {}),
    ...(r?.deliveredAt ? { delivered_at: r.deliveredAt } : {}),
    ...(r?.deadAt ? { dead_at: r.deadAt } : {}),
    ...(r?.lastError ? { last_error: r.lastError } : {}),
    resendable: refusal === undefined,
    ...(refusal ? { not_resendable_reason: refusal } : {}),
    ...(message.contradiction ? { contradiction: message.contradiction } : {}),
  };
}

/** A dead callback as the portal and the CLI list it: enough to find the payment and see why. */
export const deadCallbackView = (r: CallbackRecord) => ({
  payment_id: r.paymentId,
  index: r.index,
  number: r.index + 1,
  trans_id: r.transId,
  type: r.type,
  status: r.status,
  dead_at: r.deadAt,
  attempt_count: r.attemptCount,
  last_error: r.lastError,
});

export type DeadCallback = ReturnType<typeof deadCallbackView>;

/** GET /admin/api/merchants/{merchantKey}/callbacks/dead: a page of them, and the next page's cursor. */
export const deadCallbackPage = (merchantKey: string, page: { readonly records: readonly CallbackRecord[]; readonly cursor?: string }) => ({
  merchant_key: merchantKey,
  callbacks: page.records.map(deadCallbackView),
  ...(page.cursor ? { cursor: page.cursor } : {}),
});

/** A resend's answer: the callback by its index and number, queued or waiting already. */
export const resendView = (r: { readonly paymentId: string; readonly index: number; readonly outcome: ResendOutcome }) => ({
  payment_id: r.paymentId,
  index: r.index,
  number: r.index + 1,
  outcome: r.outcome,
});

/** The merchant's dead callbacks queued again: how many, and whether more are left for another request. */
export const resendDeadView = (merchantKey: string, r: { readonly queued: number; readonly more: boolean }) => ({ merchant_key: merchantKey, queued: r.queued, more: r.more });
