import { Metrics } from '@aws-lambda-powertools/metrics';
import { logger } from './logger';
import { annotate, inSubsegment as inXraySubsegment, traceAwsClient } from './xray';
import { MAX_METRIC_MERCHANTS, MERCHANT_DIMENSION, METRIC_NAMESPACE, METRICS, SERVICE_NAME, type MetricName } from './metric-names';

/**
 * What the service measures and traces, in one place (docs/operations.md, "Metrics" lists each
 * metric; test/integration/metrics.test.ts holds the list to what a paid checkout emits).
 *
 * Metrics are CloudWatch Embedded Metric Format lines on stdout, written by Powertools when a
 * handler ends (its Middy middleware): no API call, nothing to wait for. Every metric has the
 * dimensions `service` and `stage` only, except `ApprovalRate` per merchant, which is emitted for
 * the few merchants the stage names (METRIC_MERCHANTS), never one stream per merchant key.
 *
 * Outside Lambda (the local runner, the CLIs, tests) metrics are off unless POWERTOOLS_METRICS_DISABLED
 * says otherwise: EMF lines would mix with the tools' own output.
 *
 * Traces are X-Ray subsegments of a sampled invocation (lambdas/observability/xray.ts, ADR 0036),
 * written without the X-Ray SDK: no 100 KB in every bundle, no context tracking on every promise.
 * Outside Lambda no invocation carries a trace header, so nothing is traced.
 */
export { METRIC_NAMESPACE, METRICS, SERVICE_NAME } from './metric-names';

const IN_LAMBDA = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);

if (!IN_LAMBDA && process.env.POWERTOOLS_METRICS_DISABLED === undefined) {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
}

/** Powertools warns on every invocation that adds no metric (most reads): not worth a log line. */
const metricsLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (message: unknown, ...rest: unknown[]) => {
    if (typeof message === 'string' && message.startsWith('No application metrics to publish')) return;
    logger.warn(String(message), { details: rest });
  },
  error: (message: unknown, ...rest: unknown[]) => logger.error(String(message), { details: rest }),
  trace: () => undefined,
};

export const metrics = new Metrics({
  namespace: METRIC_NAMESPACE,
  serviceName: SERVICE_NAME,
  defaultDimensions: { stage: process.env.STAGE ?? 'dev' },
  logger: metricsLogger,
});

/** An AWS SDK client whose calls become trace subsegments when an invocation is sampled (in Lambda). */
export function traced<C>(client: C): C {
  return IN_LAMBDA ? traceAwsClient(client) : client;
}

/** The merchants with their own approval-rate stream (METRIC_MERCHANTS, comma-separated), bounded. */
export function metricMerchants(value = process.env.METRIC_MERCHANTS): ReadonlySet<string> {
  const keys = (value ?? '').split(',').map((k) => k.trim()).filter(Boolean);
  return new Set(keys.slice(0, MAX_METRIC_MERCHANTS));
}
let merchantsWithStream: ReadonlySet<string> | undefined;

const add = (name: MetricName, value = 1): void => {
  metrics.addMetric(name, METRICS[name], value);
};

export type AttemptOutcome = 'approved' | 'declined' | '3ds' | 'redirect';
export type MoneyOperationKind = 'capture' | 'void' | 'refund';
export type BackgroundJob = 'capture' | 'reconcile' | 'delivery' | 'receipts';

const OPERATION_METRICS: Readonly<Record<MoneyOperationKind, readonly [MetricName, MetricName]>> = {
  capture: ['CapturesApproved', 'CapturesDeclined'],
  void: ['VoidsApproved', 'VoidsDeclined'],
  refund: ['RefundsApproved', 'RefundsDeclined'],
};
const BACKLOG_METRICS: Readonly<Record<BackgroundJob, MetricName>> = {
  capture: 'BacklogOldestAgeCapture',
  reconcile: 'BacklogOldestAgeReconcile',
  delivery: 'BacklogOldestAgeDelivery',
  receipts: 'BacklogOldestAgeReceipts',
};

/** The business events the use cases report; each adds to this invocation's metrics. */
export const telemetry = {
  sessionCreated(): void {
    add('SessionsCreated');
  },
  pageViewed(): void {
    add('PageViews');
  },
  /**
   * An attempt's answer, recorded once (by the write that won). Approvals and declines also make
   * the approval rate: 100 for an approval, 0 for a decline, so its average is the rate.
   */
  attemptRecorded(outcome: AttemptOutcome, merchantKey: string): void {
    if (outcome === '3ds' || outcome === 'redirect') {
      add('Payments3DSecure');
      return;
    }
    const rate = outcome === 'approved' ? 100 : 0;
    add(outcome === 'approved' ? 'PaymentsApproved' : 'PaymentsDeclined');
    add('ApprovalRate', rate);
    merchantsWithStream ??= metricMerchants();
    if (merchantsWithStream.has(merchantKey)) {
      // Its own metric set: the merchant dimension must not apply to the other metrics.
      metrics.singleMetric().addDimension(MERCHANT_DIMENSION, merchantKey).addMetric('ApprovalRate', METRICS.ApprovalRate, rate);
    }
  },
  /** The customer left: Close on a link still open for payment, or a challenge never finished. */
  paymentAbandoned(): void {
    add('PaymentsAbandoned');
  },
  operationRecorded(kind: MoneyOperationKind, approved: boolean): void {
    const [yes, no] = OPERATION_METRICS[kind];
    add(approved ? yes : no);
  },
  /** A callback answered 2xx; the lag is from its transaction to the answer. */
  callbackDelivered(lagMs: number): void {
    add('CallbacksDelivered');
    add('CallbackDeliveryLag', Math.max(0, lagMs));
  },
  callbackDead(): void {
    add('DeadCallbacks');
  },
  /** How long the oldest due item of a job's queue has waited, as the job starts reading it (0: none due). */
  backlog(job: BackgroundJob, oldestDueAt: string | undefined, now: Date): void {
    const age = oldestDueAt ? Math.max(0, (now.getTime() - Date.parse(oldestDueAt)) / 1000) : 0;
    add(BACKLOG_METRICS[job], Math.round(age));
  },
  /** A chargeback of the acquirer's recorded (once, by the write that won), with its amount in minor units. */
  chargebackRecorded(amountMinor: number): void {
    add('ChargebacksRecorded');
    add('ChargebackAmount', amountMinor);
  },
  /** A chargeback the acquirer reports that our records cannot take (more than is left, or nothing captured): an operator's to look at. */
  chargebackRefused(): void {
    add('ChargebacksRefused');
  },
  /** The merchants' chargeback rates of this month: the highest that counts, and how many are over the threshold. */
  chargebackRates(highestPercent: number, over: number): void {
    add('ChargebackRateHighest', highestPercent);
    add('MerchantsOverChargebackRate', over);
  },
  /** An e-mail receipt's fate (ADR 0037): queued (once per payment), then one of sent, suppressed, retried, failed. */
  receipt(event: 'queued' | 'sent' | 'suppressed' | 'retried' | 'failed'): void {
    add(({ queued: 'ReceiptsQueued', sent: 'ReceiptsSent', suppressed: 'ReceiptsSuppressed', retried: 'ReceiptsRetried', failed: 'ReceiptsFailed' } as const)[event]);
  },
  /** SES's feedback on a sent message, one per recipient. */
  mailFeedback(kind: 'bounce' | 'complaint', recipients: number): void {
    add(kind === 'bounce' ? 'MailBounces' : 'MailComplaints', recipients);
  },
  /** Reconciliation found that the acquirer had approved an attempt we had no answer for. */
  reconciledApproval(): void {
    add('ReconciledApprovals');
  },
  /**
   * Ties this request's log lines and its trace to a payment: `payment_id` and `merchant_key` as
   * log keys and X-Ray annotations (searchable). Never card data.
   */
  paymentInContext(paymentId: string, merchantKey?: string): void {
    logger.appendKeys({ payment_id: paymentId, ...(merchantKey ? { merchant_key: merchantKey } : {}) });
    annotate('payment_id', paymentId);
    if (merchantKey) annotate('merchant_key', merchantKey);
  },
  merchantInContext(merchantKey: string): void {
    logger.appendKeys({ merchant_key: merchantKey });
    annotate('merchant_key', merchantKey);
  },
};

/**
 * Runs a call to something outside (the acquirer, a merchant's server) in its own X-Ray subsegment
 * named `name`, marked remote. Only the name and the annotations given go into the trace: never the
 * request (card data) or the response.
 */
export function inSubsegment<T>(name: string, annotations: Readonly<Record<string, string>>, call: () => Promise<T>): Promise<T> {
  return inXraySubsegment(name, 'remote', annotations, call);
}
