import type { DepsWithCallbacks } from '../lambdas/callback-container';
import { ApiError, ERRORS } from '../lambdas/domain/errors';
import { callbackView, deadCallbackView, resendView, type CallbackView, type DeadCallback } from '../lambdas/protocol/admin/callbacks';
import { callbackLog, deadCallbacks, resendCallback, resendDeadCallbacks } from '../lambdas/use-cases/callback-log';
import { CommandFailure } from './cli';

/**
 * The merchant CLI's callback commands (local/merchant-command.ts): a payment's callbacks and a
 * merchant's dead ones, as tables for a terminal, and their resends.
 */

/** Dead callbacks `dead-callbacks` lists: bounded; `resend-dead` is not limited by it. */
export const DEAD_LIST_LIMIT = 500;
/**
 * Calls of the resend-dead use case per command, each queueing at most RESEND_DEAD_LIMIT: enough
 * for any outage we expect, and still a bound.
 */
export const RESEND_DEAD_ROUNDS = 50;

/** The use case words an unknown payment for merchants ("Payment not found."); here it is named. */
export async function callbacksOf(deps: DepsWithCallbacks, paymentId: string): Promise<CallbackView[]> {
  try {
    return (await callbackLog(deps, paymentId)).map(callbackView);
  } catch (e) {
    if (e instanceof ApiError && e.entry.code === ERRORS.PAYMENT_NOT_FOUND.code) throw new CommandFailure(`payment ${paymentId} not found`);
    throw e;
  }
}

export async function resendOne(deps: DepsWithCallbacks, actor: string, paymentId: string, index: number) {
  // The use case refuses a missing payment and a missing index alike; an operator wants to know which.
  const callbacks = await callbacksOf(deps, paymentId);
  if (index >= callbacks.length) {
    throw new CommandFailure(
      callbacks.length ? `payment ${paymentId} has no callback ${index + 1}; its callbacks are 1 to ${callbacks.length}` : `payment ${paymentId} has no callbacks yet`,
    );
  }
  try {
    return resendView(await resendCallback(deps, actor, paymentId, index));
  } catch (e) {
    // Refused and audited: a callback the merchant is never sent, or one that contradicts the
    // payment's state now (the portal's Resend asks the operator to confirm that one).
    if (e instanceof ApiError && (e.entry === ERRORS.CALLBACK_NOT_RESENDABLE || e.entry === ERRORS.CALLBACK_CONTRADICTS_PAYMENT)) {
      throw new CommandFailure(`callback ${index + 1} of payment ${paymentId} not resent: ${e.message.replace(/ Confirm the resend to send it anyway\.$/, ' Resend it from the portal, which asks to confirm that.')}`);
    }
    throw e;
  }
}

export async function resendAllDead(deps: DepsWithCallbacks, actor: string, merchantKey: string): Promise<{ merchant_key: string; queued: number; more: boolean }> {
  let queued = 0;
  let more = true;
  for (let round = 0; more && round < RESEND_DEAD_ROUNDS; round++) {
    const result = await resendDeadCallbacks(deps, actor, merchantKey);
    queued += result.queued;
    more = result.more;
    // A dead callback that cannot be queued (its resend is waiting already) stays listed: stop, do not spin.
    if (result.queued === 0) break;
  }
  return { merchant_key: merchantKey, queued, more };
}

/** The merchant's dead callbacks, at most DEAD_LIST_LIMIT, and whether there are more. */
export async function listDeadCallbacks(deps: DepsWithCallbacks, merchantKey: string): Promise<{ merchant_key: string; callbacks: DeadCallback[]; more: boolean }> {
  const callbacks: DeadCallback[] = [];
  let cursor: string | undefined;
  // One past the limit, to tell whether there are more.
  do {
    const page = await deadCallbacks(deps, merchantKey, Math.min(100, DEAD_LIST_LIMIT + 1 - callbacks.length), cursor);
    callbacks.push(...page.records.map(deadCallbackView));
    cursor = page.cursor;
  } while (cursor && callbacks.length <= DEAD_LIST_LIMIT);
  return { merchant_key: merchantKey, callbacks: callbacks.slice(0, DEAD_LIST_LIMIT), more: callbacks.length > DEAD_LIST_LIMIT };
}

/** Stored text goes to a terminal: no control characters (line breaks, escape sequences) from it. */
const cell = (text: string | undefined): string => (text ? text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ') : '-');

/** Columns as wide as their widest cell; the last one is left ragged, it holds free text. */
function table(header: readonly string[], rows: readonly (readonly string[])[], indent = ''): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => indent + cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [header, ...rows].map(line).join('\n');
}

const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

function when(c: CallbackView): string {
  if (c.next_attempt_at) return `next ${c.next_attempt_at}`;
  if (c.delivered_at) return `delivered ${c.delivered_at}`;
  if (c.dead_at) return `dead ${c.dead_at}`;
  return '-';
}

export function callbacksText(paymentId: string, callbacks: readonly CallbackView[]): string {
  if (!callbacks.length) return `Payment ${paymentId} has no callbacks yet.`;
  const summary = table(
    ['NO.', 'TYPE', 'STATUS', 'TRANS ID', 'STATE', 'ATTEMPTS', 'WHEN', 'LAST ERROR'],
    callbacks.map((c) => [String(c.number), c.type, c.status, c.trans_id, c.state, String(c.attempt_count), when(c), cell(c.last_error)]),
  );
  const attempts = callbacks
    .filter((c) => c.attempts.length)
    .map((c) => {
      const older = c.attempts.length < c.attempt_count ? ` (the last ${c.attempts.length} shown)` : '';
      const rows = c.attempts.map((a) => [a.at, a.httpStatus === undefined ? '-' : String(a.httpStatus), String(a.latencyMs), cell(a.url), cell(a.error)]);
      return `Callback ${c.number} (${c.type} ${c.status}): ${counted(c.attempt_count, 'attempt')}${older}\n${table(['TIME', 'HTTP', 'LATENCY MS', 'URL', 'ERROR'], rows, '  ')}`;
    });
  return [`Payment ${paymentId}: ${counted(callbacks.length, 'callback')}`, summary, ...attempts].join('\n\n');
}

export function deadText(listed: { merchant_key: string; callbacks: readonly DeadCallback[]; more: boolean }): string {
  const { merchant_key: key, callbacks, more } = listed;
  if (!callbacks.length) return `Merchant ${key} has no dead callbacks.`;
  const rows = callbacks.map((c) => [c.dead_at ?? '-', c.payment_id, String(c.number), c.type, c.status, c.trans_id, String(c.attempt_count), cell(c.last_error)]);
  return [
    `Merchant ${key}: ${more ? `more than ${DEAD_LIST_LIMIT} dead callbacks, the oldest ${DEAD_LIST_LIMIT} shown` : counted(callbacks.length, 'dead callback')}; resend-dead ${key} queues them all again.`,
    table(['DEAD AT', 'PAYMENT', 'NO.', 'TYPE', 'STATUS', 'TRANS ID', 'ATTEMPTS', 'LAST ERROR'], rows),
  ].join('\n\n');
}

