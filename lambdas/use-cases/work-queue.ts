import { QUEUES, reconcileEntry, type Payment, type QueueEntry } from '../domain/payment';
import type { Clock } from '../ports/clock';
import type { PaymentStore, ShardPart } from '../ports/payments';
import { inParallel } from '../domain/parallel';
import { telemetry } from '../observability/telemetry';

export { QUEUES, RECONCILE_AFTER_MS } from '../domain/payment';

/** When the reconciler should look at an intent written now. */
export const reconcileAt = (policy: Pick<Policy, 'reconcileAfterMs'> | undefined, now: Date): QueueEntry => reconcileEntry(now, policy?.reconcileAfterMs);

/** Business limits that come from configuration. */
export interface Policy {
  /** How long an authorization may wait for capture before it is released. */
  readonly authorizationValidityMs: number;
  /** How long an intent may wait for its answer before the reconciler asks (RECONCILE_AFTER_SECONDS). */
  readonly reconcileAfterMs: number;
  /**
   * How long a payment the reconciler looked at, once overdue, waits for its next look while
   * something is still in flight (RECONCILE_RETRY_SECONDS; 5 minutes when unset).
   */
  readonly retryLaterMs?: number;
  /**
   * Whether settled payments are asked about chargebacks on a schedule (DISPUTE_CHECK_DAYS): an
   * acquirer that only notifies them (S2S CARD) may lose a notification; one that reports them
   * itself (the sandbox) needs no checks.
   */
  readonly disputeChecks?: boolean;
}

export type QueueReport<K extends string> = { examined: number; failed: number; errors: string[] } & Record<K, number>;

/** How many error names a report keeps: enough to diagnose, bounded in size. */
const MAX_ERRORS_REPORTED = 5;

/** How a run drains a queue: payments handled at once, entries read per shard and page, when to stop. */
export interface DrainOptions {
  /** Payments handled at once (each may wait on the acquirer). */
  readonly concurrency?: number;
  /** Entries read per shard in one round. */
  readonly pageSize?: number;
  /** At most this many payments in one run (tests; a run is otherwise bounded by its time). */
  readonly maxPayments?: number;
  /** Wall-clock time (ms since the epoch) after which no new payment is started: the run's budget. */
  readonly stopAt?: number;
  /** This worker's part of the queue's shards (a tick of a job with several workers); all by default. */
  readonly part?: ShardPart;
}

/** What a job leaves of its Lambda's time: one payment's handling (an acquirer call) must fit in it. */
export const JOB_END_MARGIN_MS = 15_000;

export const DRAIN_DEFAULTS = { concurrency: 100, pageSize: 100, budgetMs: 45_000 } as const;

/**
 * The loop every job runs: read what is due in a work queue, shard by shard in rounds, handle the
 * payments `concurrency` at a time, and go on until nothing due is left or the run's time budget
 * is spent (a Lambda passes its remaining time less a margin). One payment that fails does not stop
 * the others; it stays in the queue, so the next run tries it again, as does whatever the budget
 * left. A payment is handled once per run, even when its handling leaves it due.
 */
export async function drainDue<K extends string>(
  deps: { readonly store: PaymentStore; readonly clock: Clock },
  queue: string,
  outcomes: readonly K[],
  handle: (payment: Payment, now: Date) => Promise<K>,
  options: DrainOptions = {},
): Promise<QueueReport<K>> {
  const now = deps.clock.now();
  const stopAt = options.stopAt ?? Date.now() + DRAIN_DEFAULTS.budgetMs;
  const max = options.maxPayments ?? Number.POSITIVE_INFINITY;
  const report = { examined: 0, failed: 0, errors: [] as string[], ...Object.fromEntries(outcomes.map((o) => [o, 0])) } as QueueReport<K>;
  const seen = new Set<string>();
  const spent = () => Date.now() >= stopAt || seen.size >= max;
  // The first batch holds each shard's oldest due entries, soonest first: its head is the backlog's age.
  let oldestDueAt: string | undefined;
  let first = true;
  for await (const batch of deps.store.dueBatches(queue, now, options.pageSize ?? DRAIN_DEFAULTS.pageSize, options.part)) {
    if (first) {
      oldestDueAt = batch[0]?.dueAt;
      first = false;
    }
    const fresh = batch.filter((item) => !seen.has(item.paymentId)).slice(0, Math.max(0, max - seen.size));
    for (const item of fresh) seen.add(item.paymentId);
    await inParallel(fresh, options.concurrency ?? DRAIN_DEFAULTS.concurrency, async (item) => {
      if (Date.now() >= stopAt) return;
      report.examined++;
      try {
        const payment = await deps.store.findPayment(item.paymentId);
        if (!payment) return;
        const outcome = await handle(payment, now);
        (report as Record<K, number>)[outcome]++;
      } catch (e) {
        report.failed++;
        if (report.errors.length < MAX_ERRORS_REPORTED) report.errors.push(`${item.paymentId}: ${(e as Error).name}`);
      }
    });
    if (spent()) break;
  }
  if (queue === QUEUES.capture || queue === QUEUES.reconcile) telemetry.backlog(queue, oldestDueAt, now);
  return report;
}

/** What a scheduled tick hands a job: which part of the shards this invocation drains. */
export interface JobTick {
  readonly worker?: number;
  readonly workers?: number;
}

/** The shard part a tick names, or every shard (the local runner's ticks name none). */
export function shardPart(tick: unknown): { readonly index: number; readonly of: number } | undefined {
  const { worker, workers } = (tick ?? {}) as JobTick;
  if (!Number.isInteger(worker) || !Number.isInteger(workers) || workers! < 2 || worker! < 0 || worker! >= workers!) return undefined;
  return { index: worker!, of: workers! };
}
