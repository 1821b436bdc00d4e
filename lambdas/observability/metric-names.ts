/**
 * The service's metrics: namespace, dimensions and every metric name with its CloudWatch unit. Pure
 * data, shared by the code that emits them (telemetry.ts) and the stack's alarms and dashboard
 * (lib/constructs/monitoring.ts), so the two cannot name different metrics.
 */
export const METRIC_NAMESPACE = 'Checkout';
export const SERVICE_NAME = 'checkout';
/** The dimensions of every metric (one stream per stage), but the per-merchant approval rate. */
export const METRIC_DIMENSIONS = ['service', 'stage'] as const;
/** The approval rate's extra dimension, for the merchants a stage names (bounded). */
export const MERCHANT_DIMENSION = 'merchant';
/** Most merchants given their own approval-rate stream: each is a custom metric billed per month. */
export const MAX_METRIC_MERCHANTS = 10;

export const METRICS = {
  SessionsCreated: 'Count',
  PageViews: 'Count',
  PaymentsApproved: 'Count',
  PaymentsDeclined: 'Count',
  Payments3DSecure: 'Count',
  PaymentsAbandoned: 'Count',
  ApprovalRate: 'Percent',
  CapturesApproved: 'Count',
  CapturesDeclined: 'Count',
  VoidsApproved: 'Count',
  VoidsDeclined: 'Count',
  RefundsApproved: 'Count',
  RefundsDeclined: 'Count',
  CallbacksDelivered: 'Count',
  CallbackDeliveryLag: 'Milliseconds',
  DeadCallbacks: 'Count',
  BacklogOldestAgeCapture: 'Seconds',
  BacklogOldestAgeReconcile: 'Seconds',
  BacklogOldestAgeDelivery: 'Seconds',
  ReconciledApprovals: 'Count',
  ChargebacksRecorded: 'Count',
  ChargebackAmount: 'None',
  ChargebacksRefused: 'Count',
  /** The highest chargeback rate of this month among the merchants with enough settled payments (the chargeback-rate job, hourly). */
  ChargebackRateHighest: 'Percent',
  /** How many merchants' rates of this month are at or over the threshold (with enough settled payments). */
  MerchantsOverChargebackRate: 'Count',
  /** E-mail receipts (ADR 0037): queued once per paid payment, then sent, skipped for a suppressed address, tried again, or given up. */
  ReceiptsQueued: 'Count',
  ReceiptsSent: 'Count',
  ReceiptsSuppressed: 'Count',
  ReceiptsRetried: 'Count',
  ReceiptsFailed: 'Count',
  BacklogOldestAgeReceipts: 'Seconds',
  /** SES's feedback on sent mail: permanent bounces and complaints suppress the address; transient bounces are only counted. */
  MailBounces: 'Count',
  MailComplaints: 'Count',
} as const;
export type MetricName = keyof typeof METRICS;
