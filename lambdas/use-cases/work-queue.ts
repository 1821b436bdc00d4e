import type { Payment } from '../domain/payment';
import type { Clock } from '../ports/clock';
import type { PaymentStore } from '../ports/payments';

/** Work queues (sparse index) a payment can be in while background work is due. */
export const QUEUES = { reconcile: 'reconcile', capture: 'capture' } as const;

/** How long an attempt may stay without an acquirer answer before reconciliation asks (the default). */
export const RECONCILE_AFTER_MS = 2 * 60_000;
/** When the reconciler should look at an intent written now. */
export const reconcileAt = (policy: Pick<Policy, 'reconcileAfterMs'> | undefined, now: Date) => ({
  name: QUEUES.reconcile,
  dueAt: new Date(now.getTime() + (policy?.reconcileAfterMs ?? RECONCILE_AFTER_MS)).toISOString(),
});

/** Business limits that come from configuration. */
export interface Policy {
  /** How long an authorization may wait for capture before it is released. */
  readonly authorizationValidityMs: number;
  /** How long an intent may wait for its answer before the reconciler asks (RECONCILE_AFTER_SECONDS). */
  readonly reconcileAfterMs: number;
}

export type QueueReport<K extends string> = { examined: number; failed: number; errors: string[] } & Record<K, number>;

/** How many error names a report keeps: enough to diagnose, bounded in size. */
const MAX_ERRORS_REPORTED = 5;

/**
 * The loop every job runs: read one bounded batch of what is due in a work queue, handle each
 * payment, count the outcomes. One payment that fails does not stop the others; it stays in the
 * queue, so the next run tries it again.
 */
export async function drainDue<K extends string>(
  deps: { readonly store: PaymentStore; readonly clock: Clock },
  queue: string,
  limit: number,
  outcomes: readonly K[],
  handle: (payment: Payment, now: Date) => Promise<K>,
): Promise<QueueReport<K>> {
  const now = deps.clock.now();
  const due = await deps.store.due(queue, now, limit);
  const report = { examined: due.length, failed: 0, errors: [] as string[], ...Object.fromEntries(outcomes.map((o) => [o, 0])) } as QueueReport<K>;
  for (const item of due) {
    try {
      const payment = await deps.store.findPayment(item.paymentId);
      if (!payment) continue;
      const outcome = await handle(payment, now);
      (report as Record<K, number>)[outcome]++;
    } catch (e) {
      report.failed++;
      if (report.errors.length < MAX_ERRORS_REPORTED) report.errors.push(`${item.paymentId}: ${(e as Error).name}`);
    }
  }
  return report;
}
