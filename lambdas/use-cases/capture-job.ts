import { fileForCapture, leaveQueues, type Payment } from '../domain/payment';
import type { Acquirer } from '../ports/acquirer';
import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import type { MerchantDirectory } from '../ports/merchants';
import { capture, release } from './capture-payment';
import { STALE_OPERATION_MS, type MoneyDeps } from './money-operations';
import { merchantOf } from './payment-attempt';
import { QUEUES, nextCaptureEvent } from './record-outcome';
import { drainDue, type DrainOptions, type QueueReport } from './work-queue';

/** A capture claimed longer ago than this was interrupted: the reconciler finishes it. */
export const STALE_CLAIM_MS = STALE_OPERATION_MS;
export const EXPIRED_REASON = 'Authorization expired without capture.';
export const AUTO_CAPTURE_ACTOR = 'system:auto-capture';

export interface CaptureJobDeps extends MoneyDeps {
  readonly merchants: MerchantDirectory;
}

export type CaptureJobReport = QueueReport<'captured' | 'declined' | 'released' | 'skipped'>;

/**
 * Runs every minute (EventBridge; the local runner's timer). Drains what is due from the sparse,
 * sharded capture queue, many at once, until nothing due is left or the run's time is spent: captures authorizations whose merchant delay has
 * passed, releases those past their validity, and finishes captures left half-done by a crash.
 * Every action is claimed with a conditional write, so an operator acting at the same moment, or a
 * second run, never captures twice.
 */
export function runCaptureJob(deps: CaptureJobDeps, options: DrainOptions = {}): Promise<CaptureJobReport> {
  // A backlog is mostly a few merchants' authorizations: their settings are read once per run.
  const run = { ...deps, merchants: readOncePerRun(deps.merchants) };
  return drainDue(run, QUEUES.capture, ['captured', 'declined', 'released', 'skipped'], (payment, now) => handleDue(run, payment, now), options);
}

/** The directory with each merchant read at most once (a run lasts under a minute). */
function readOncePerRun(merchants: MerchantDirectory): MerchantDirectory {
  const found = new Map<string, ReturnType<MerchantDirectory['find']>>();
  return Object.assign(Object.create(merchants) as MerchantDirectory, {
    find: (merchantKey: string) => {
      let pending = found.get(merchantKey);
      if (!pending) {
        pending = merchants.find(merchantKey);
        found.set(merchantKey, pending);
        // A failed read is not remembered.
        pending.catch(() => found.delete(merchantKey));
      }
      return pending;
    },
  });
}

async function handleDue(deps: CaptureJobDeps, payment: Payment, now: Date): Promise<'captured' | 'declined' | 'released' | 'skipped'> {
  const at = now.toISOString();
  if (payment.status !== 'pending') {
    await leaveQueue(deps, payment, at);
    return 'skipped';
  }
  // A capture or release in flight is the reconciler's until it is answered.
  if (payment.operation) return 'skipped';
  const expiresAt = payment.authorizationExpiresAt ? new Date(payment.authorizationExpiresAt) : undefined;
  if (expiresAt && expiresAt <= now) {
    const result = await release(deps, payment, 'system:authorization-expiry', EXPIRED_REASON);
    return result.kind === 'captured' ? 'released' : 'skipped';
  }
  const merchant = await merchantOf(deps, payment);
  const authorizedAt = new Date(payment.paidAt ?? payment.createdAt);
  const delay = merchant.autoCaptureDelayMinutes;
  if (delay === undefined || authorizedAt.getTime() + delay * 60_000 > now.getTime()) {
    // Not due (the merchant changed the delay, or capture is manual now): look again when it is.
    const next = expiresAt ? nextCaptureEvent(authorizedAt, delay, expiresAt) : undefined;
    if (next && next > now) await requeue(deps, payment, next, at);
    else await leaveQueue(deps, payment, at);
    return 'skipped';
  }
  const result = await capture(deps, { payment, amountMinor: payment.order.amountMinor, actor: AUTO_CAPTURE_ACTOR });
  if (result.kind === 'declined' && expiresAt) await requeue(deps, result.payment, expiresAt, at);
  return result.kind === 'captured' ? 'captured' : result.kind === 'declined' ? 'declined' : 'skipped';
}

async function requeue(deps: CaptureJobDeps, payment: Payment, dueAt: Date, at: string): Promise<void> {
  await deps.store.apply(payment.paymentId, fileForCapture(dueAt, new Date(at)));
}

async function leaveQueue(deps: CaptureJobDeps, payment: Payment, at: string): Promise<void> {
  // Only when nothing is in flight: an intent keeps its place in the reconcile queue.
  await deps.store.apply(payment.paymentId, leaveQueues(payment, new Date(at)));
}
