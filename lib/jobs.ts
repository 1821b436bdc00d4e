import { ACCESS, tableAccess, type TableAccess } from './table-access';

/**
 * Scheduled jobs. The stack gives each an EventBridge schedule and its own Lambda; the local runner
 * fires the same handlers on the same schedule.
 */
export interface JobDefinition {
  readonly id: string;
  readonly entry: string;
  readonly everyMinutes: number;
  readonly access: { readonly table: TableAccess; readonly merchantSecrets: boolean };
  readonly timeoutSeconds: number;
  readonly description: string;
  /**
   * The local runner's interval, when it should be shorter than the cloud's (EventBridge rules
   * cannot fire more often than every minute; in the cloud a faster trigger takes that role).
   */
  readonly localEverySeconds?: number;
  /**
   * Invocations per tick, each draining its own part of the work index's shards (shard % workers);
   * with each run's own concurrency, what the job keeps up with (docs/architecture.md). Default 1.
   */
  readonly workers?: number;
  /**
   * Runs on AWS only: what it does has no counterpart on the local runner (there it happens in the
   * request itself). The runner neither schedules nor lists it.
   */
  readonly cloudOnly?: boolean;
  /**
   * Never two runs at once where the stage reserves its jobs' concurrency (staging, prod): its
   * function's reserved concurrency is 1, and a run waits for the one before. dev reserves nothing
   * (a new account's quota could not), so two runs there may overlap after a failed run's retry.
   */
  readonly singleFlight?: boolean;
}

/**
 * Invocations per job on every tick, each draining its part of the shards (two of the work index's
 * 64, two of the outbox's 64): 32 runs in parallel, each DRAIN_DEFAULTS.concurrency payments at a
 * time (docs/architecture.md, "Keys and heat").
 */
export const JOB_WORKERS = 32;

/** The job that exports the audit chain's heads; the stack gives it the anchor bucket (lib/constructs/audit-anchor.ts). */
export const AUDIT_ANCHOR_JOB_ID = 'ExportAuditAnchors';
/** The job that sends e-mail receipts; only on a stage that sends them (lib/constructs/receipt-mail.ts gives it SES). */
export const RECEIPT_JOB_ID = 'SendReceipts';
/** The job that copies the operators' sign-ins on Cognito's pages into the audit log; the stack gives it the user pool. */
export const SIGN_IN_IMPORT_JOB_ID = 'ImportSignIns';

export const JOBS: readonly JobDefinition[] = [
  {
    id: 'ReconcileAttempts',
    entry: 'lambdas/handlers/reconcile-job.ts',
    everyMinutes: 1,
    // Due payments from the queue index; their attempts, money operations and held declines are
    // finished with the acquirer and recorded, issuing the tokens an approved first payment asked for.
    access: {
      table: tableAccess(ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerFollowUps, ACCESS.acquirerChargebacks, ACCESS.acquirerDisputeReport, ACCESS.tokenIssue, { indexes: ['work'] }),
      merchantSecrets: true,
    },
    timeoutSeconds: 60,
    workers: JOB_WORKERS,
    description: 'Settles payment attempts and money operations left without an acquirer answer',
    // Locally (where the runner also runs every job once at start, after a crash) every 10 s.
    localEverySeconds: 10,
  },
  {
    id: 'CaptureAuthorizations',
    entry: 'lambdas/handlers/capture-job.ts',
    everyMinutes: 1,
    access: { table: tableAccess(ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerFollowUps, { indexes: ['work'] }), merchantSecrets: false },
    timeoutSeconds: 60,
    workers: JOB_WORKERS,
    description: 'Captures due authorizations and releases expired ones',
  },
  {
    id: 'DeliverCallbacks',
    entry: 'lambdas/handlers/callback-job.ts',
    everyMinutes: 1,
    access: { table: tableAccess(ACCESS.callbackDelivery, { indexes: ['sending'] }), merchantSecrets: true },
    timeoutSeconds: 60,
    workers: JOB_WORKERS,
    description: 'Delivers due merchant callbacks from the outbox: retries, and anything the stream missed',
    localEverySeconds: 2,
  },
  {
    id: 'CheckChargebackRates',
    entry: 'lambdas/handlers/chargeback-rates-job.ts',
    // Hourly: the rates move with each chargeback and settled payment; the alarm looks at the highest.
    // Only the merchants charged back this month are read: no directory.
    everyMinutes: 60,
    access: { table: tableAccess(ACCESS.disputesRead), merchantSecrets: false },
    timeoutSeconds: 60,
    description: 'Checks the chargeback rate of this month of each merchant charged back, for the chargeback-rate alarm',
  },
  {
    id: AUDIT_ANCHOR_JOB_ID,
    entry: 'lambdas/handlers/audit-anchor-job.ts',
    // Hourly: a checkpoint of today's head, and each closed day's final head, to the Object Lock
    // bucket (lib/constructs/audit-anchor.ts): a rewrite of the log is caught within the hour.
    everyMinutes: 60,
    access: { table: tableAccess(ACCESS.auditRead), merchantSecrets: false },
    timeoutSeconds: 60,
    description: 'Exports the audit chain\'s heads to the write-once anchor bucket',
  },
  {
    id: RECEIPT_JOB_ID,
    entry: 'lambdas/handlers/receipt-job.ts',
    // Every minute: a receipt arrives within a minute or two of the payment (locally within 2 s).
    everyMinutes: 1,
    access: { table: tableAccess(ACCESS.receiptSending), merchantSecrets: false },
    timeoutSeconds: 60,
    description: 'Sends the due e-mail receipts of paid checkouts through SES',
    localEverySeconds: 2,
  },
  {
    id: SIGN_IN_IMPORT_JOB_ID,
    entry: 'lambdas/handlers/sign-in-import-job.ts',
    // Every 5 minutes: a sign-in on Cognito's pages is in the audit log within minutes (ADR 0019).
    everyMinutes: 5,
    access: { table: tableAccess(ACCESS.auditAppend), merchantSecrets: false },
    timeoutSeconds: 60,
    description: 'Copies the operators\' sign-ins on Cognito\'s pages, successful and refused, into the audit log',
    // The local runner records its own sign-ins as they happen (lambdas/use-cases/operator-sign-in.ts).
    cloudOnly: true,
    // Two runs at once could both append a sign-in the log does not have yet.
    singleFlight: true,
  },
];

/** The jobs the local runner runs: all but those with no local counterpart (`cloudOnly`). */
export const LOCAL_JOBS: readonly JobDefinition[] = JOBS.filter((j) => !j.cloudOnly);

/**
 * The function the table's stream triggers (lib/constructs/callback-delivery.ts): it delivers the
 * callbacks of the payments the stream hands it, so it needs no index, and drops the details of
 * links DynamoDB's TTL removed.
 */
export const CALLBACK_DISPATCHER = {
  entry: 'lambdas/handlers/callback-dispatch.ts',
  access: { table: tableAccess(ACCESS.callbackDelivery, ACCESS.expiredLinkCleanup), merchantSecrets: true },
} as const satisfies Pick<JobDefinition, 'entry' | 'access'>;

/**
 * The function SES's bounces and complaints reach through EventBridge (lib/constructs/receipt-mail.ts):
 * it suppresses the addresses, so later receipts to them are skipped. Only on a stage that sends receipts.
 */
export const RECEIPT_FEEDBACK = {
  entry: 'lambdas/handlers/receipt-feedback.ts',
  access: { table: tableAccess(ACCESS.mailFeedback), merchantSecrets: false },
} as const satisfies Pick<JobDefinition, 'entry' | 'access'>;
