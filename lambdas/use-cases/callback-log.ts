import { NOT_RESENDABLE, callbackMessage, resendRefusal, type CallbackMessage } from '../domain/callback-resend';
import { ApiError, invalidRequest } from '../domain/errors';
import { RULE } from '../domain/validation';
import type { Transaction } from '../domain/payment';
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

/**
 * One transaction's callback: what it says (as its callback sends it), its delivery record (none
 * before its first attempt is recorded) and why it may not be sent again now, if it may not.
 * protocol/admin/callbacks.ts shows it to operators.
 */
export interface CallbackEntry {
  /** Position in the payment's sequence, from 0. */
  readonly index: number;
  readonly transaction: Transaction;
  readonly message: CallbackMessage;
  readonly record?: CallbackRecord;
  /** domain/callback-resend.ts resendRefusal. */
  readonly refusal?: string;
}

/** Every callback of a payment, one per transaction, in delivery order. */
export async function callbackLog(deps: Pick<CallbackLogDeps, 'store' | 'callbacks' | 'clock'>, paymentId: string): Promise<CallbackEntry[]> {
  const payment = await deps.store.findPayment(paymentId);
  if (!payment) throw new ApiError('PAYMENT_NOT_FOUND');
  const records = new Map((await deps.callbacks.records(paymentId)).map((r) => [r.index, r]));
  const now = deps.clock.now();
  return payment.transactions.map((transaction, index) => {
    const record = records.get(index);
    const refusal = resendRefusal(payment, index, record?.state ?? 'not-sent', now);
    return { index, transaction, message: callbackMessage(payment, index, now)!, ...(record ? { record } : {}), ...(refusal !== undefined ? { refusal } : {}) };
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
): Promise<{ paymentId: string; index: number; outcome: ResendOutcome }> {
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
  return { paymentId, index, outcome };
}

async function knownMerchant(deps: Pick<CallbackLogDeps, 'merchants'>, merchantKey: string): Promise<void> {
  if (!(await deps.merchants.find(merchantKey))) throw new ApiError('MERCHANT_NOT_FOUND');
}

/** A merchant's dead callbacks, oldest first, one page at a time (the cursor is opaque). */
export async function deadCallbacks(deps: Pick<CallbackLogDeps, 'callbacks' | 'merchants'>, merchantKey: string, limit: number, cursor?: string): Promise<{ records: CallbackRecord[]; cursor?: string }> {
  await knownMerchant(deps, merchantKey);
  const page = await deps.callbacks.dead(merchantKey, limit, cursor).catch((e: unknown) => {
    // A cursor we did not make fails in the store: refused, never a 500.
    if (cursor !== undefined && (e instanceof SyntaxError || (e as Error).name === 'ValidationException')) {
      throw invalidRequest([{ path: 'cursor', message: RULE.invalid }]);
    }
    throw e;
  });
  return page;
}

/** Queues a merchant's dead callbacks again, oldest first, at most RESEND_DEAD_LIMIT per call. */
export async function resendDeadCallbacks(deps: CallbackLogDeps, actor: string, merchantKey: string): Promise<{ queued: number; more: boolean }> {
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
  return { queued, more };
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
