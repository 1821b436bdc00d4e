import { NOT_RESENDABLE, callbackMessage, resendRefusal } from '../domain/callback-resend';
import { ApiError, invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import { protocolDate } from '../domain/payment';
import type { CallbackRecord, CallbackStore } from '../ports/callbacks';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import type { MerchantDirectory } from '../ports/merchants';
import type { AuditLog } from '../ports/operators';
import type { PaymentStore } from '../ports/payments';

export interface CallbackLogDeps {
  readonly store: PaymentStore;
  readonly callbacks: CallbackStore;
  readonly merchants: MerchantDirectory;
  readonly clock: Clock;
  readonly ids: Ids;
  /** Operators' resends are audited; the merchant CLI (run by the platform team) passes one too. */
  readonly audit: AuditLog;
}

/** Dead callbacks queued again per request: bounded, the caller repeats while `more` is true. */
export const RESEND_DEAD_LIMIT = 200;

/** One transaction's callback as the portal and the CLI show it. */
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

/** Every callback of a payment, one per transaction, in delivery order. */
export async function callbackLog(deps: Pick<CallbackLogDeps, 'store' | 'callbacks' | 'clock'>, paymentId: string): Promise<CallbackView[]> {
  const payment = await deps.store.findPayment(paymentId);
  if (!payment) throw new ApiError('PAYMENT_NOT_FOUND');
  const records = new Map((await deps.callbacks.records(paymentId)).map((r) => [r.index, r]));
  const now = deps.clock.now();
  return payment.transactions.map((tx, index) => {
    const r = records.get(index);
    const state = r?.state ?? 'not-sent';
    const refusal = resendRefusal(payment, index, state, now);
    const message = callbackMessage(payment, index, now)!;
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
      state,
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
  });
}

export type ResendOutcome = 'queued' | 'already-queued';

export interface ResendOptions {
  /** The operator saw that the callback contradicts the payment's state now, and sends it anyway. */
  readonly contradictionConfirmed?: boolean;
}

/**
 * Queues one callback to be sent again (after the ones still due in order). Only a callback the
 * merchant was due and that has been delivered or given up on can be resent (domain/callback-resend.ts):
 * any other is refused (409, CALLBACK_NOT_RESENDABLE), a pending one is on its way already. One
 * whose order status is not the payment's now is sent only when the operator confirmed it anyway
 * (else 409, CALLBACK_CONTRADICTS_PAYMENT). Every request is audited with what the callback says
 * (type, status, amount, order status) and whether that contradicted the payment's state.
 */
export async function resendCallback(
  deps: CallbackLogDeps,
  actor: string,
  paymentId: string,
  index: number,
  options: ResendOptions = {},
): Promise<{ payment_id: string; index: number; number: number; outcome: ResendOutcome }> {
  const payment = await deps.store.findPayment(paymentId);
  if (!payment || !Number.isInteger(index) || index < 0 || index >= payment.transactions.length) throw new ApiError('PAYMENT_NOT_FOUND');
  const now = deps.clock.now();
  const record = (await deps.callbacks.records(paymentId)).find((r) => r.index === index);
  const refusal = resendRefusal(payment, index, record?.state ?? 'not-sent', now);
  const message = callbackMessage(payment, index, now)!;
  const unconfirmed = refusal === undefined && message.contradiction !== undefined && options.contradictionConfirmed !== true;
  const outcome = refusal === undefined && !unconfirmed && record ? await queue(deps, record) : 'already-queued';
  const done = refusal === undefined && !unconfirmed && outcome === 'queued';
  const detail = refusal ?? (unconfirmed ? `Not sent unconfirmed. ${message.contradiction}` : outcome === 'already-queued' ? NOT_RESENDABLE.waiting : message.contradiction ? `Sent although it contradicts the payment's state. ${message.contradiction}` : undefined);
  await deps.audit.append({
    id: deps.ids.transId(),
    at: now.toISOString(),
    actor,
    action: `callback.resend no. ${index + 1}`,
    target: paymentId,
    targetKind: 'payment',
    ...(record ? { before: { callback: record.state } } : {}),
    after: {
      ...(done ? { callback: 'pending' } : {}),
      trans_id: payment.transactions[index]!.transId,
      type: message.type,
      status: message.status,
      amount: `${message.amount} ${message.currency}`,
      order_status: message.orderStatus,
      payment_status: message.paymentStatus,
      contradicts: message.contradiction !== undefined,
    },
    outcome: done ? 'done' : 'refused',
    ...(detail ? { detail } : {}),
  });
  if (refusal !== undefined && refusal !== NOT_RESENDABLE.waiting) throw new ApiError('CALLBACK_NOT_RESENDABLE', [], refusal);
  if (unconfirmed) throw new ApiError('CALLBACK_CONTRADICTS_PAYMENT', [], `${message.contradiction} Confirm the resend to send it anyway.`);
  return { payment_id: paymentId, index, number: index + 1, outcome };
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

async function knownMerchant(deps: Pick<CallbackLogDeps, 'merchants'>, merchantKey: string): Promise<void> {
  if (!(await deps.merchants.find(merchantKey))) throw new ApiError('MERCHANT_NOT_FOUND');
}

/** A merchant's dead callbacks, oldest first, one page at a time (the cursor is opaque). */
export async function deadCallbacks(deps: Pick<CallbackLogDeps, 'callbacks' | 'merchants'>, merchantKey: string, limit: number, cursor?: string) {
  await knownMerchant(deps, merchantKey);
  const page = await deps.callbacks.dead(merchantKey, limit, cursor).catch((e: unknown) => {
    // A cursor we did not make fails in the store: refused, never a 500.
    if (cursor !== undefined && (e instanceof SyntaxError || (e as Error).name === 'ValidationException')) {
      throw invalidRequest([{ path: 'cursor', message: RULE.invalid }]);
    }
    throw e;
  });
  return { merchant_key: merchantKey, callbacks: page.records.map(deadCallbackView), ...(page.cursor ? { cursor: page.cursor } : {}) };
}

/** Queues a merchant's dead callbacks again, oldest first, at most RESEND_DEAD_LIMIT per call. */
export async function resendDeadCallbacks(deps: CallbackLogDeps, actor: string, merchantKey: string): Promise<{ merchant_key: string; queued: number; more: boolean }> {
  // A mistyped key would otherwise leave an audit entry of "0 queued" for a merchant that does not exist.
  await knownMerchant(deps, merchantKey);
  let queued = 0;
  let cursor: string | undefined;
  do {
    const page = await deps.callbacks.dead(merchantKey, Math.min(100, RESEND_DEAD_LIMIT - queued), cursor);
    for (const record of page.records) if ((await queue(deps, record)) === 'queued') queued++;
    cursor = page.cursor;
  } while (cursor && queued < RESEND_DEAD_LIMIT);
  const more = (await deps.callbacks.dead(merchantKey, 1)).records.length > 0;
  await deps.audit.append({
    id: deps.ids.transId(),
    at: deps.clock.now().toISOString(),
    actor,
    action: 'callback.resend-dead',
    target: `merchant:${merchantKey}`,
    targetKind: 'merchant',
    after: { queued },
    outcome: 'done',
  });
  return { merchant_key: merchantKey, queued, more };
}

async function queue(deps: CallbackLogDeps, record: CallbackRecord): Promise<ResendOutcome> {
  const at = deps.clock.now();
  // A finished callback is past the in-order stream, so a refusal means its resend is queued already.
  const queued = await deps.callbacks.requestResend(record.paymentId, record.index, at);
  // Either way a resend is waiting: the record says so (and leaves the dead list). If a worker
  // already sent it meanwhile, its own record is newer and stays.
  await deps.callbacks.markResendQueued(record, at);
  return queued ? 'queued' : 'already-queued';
}
