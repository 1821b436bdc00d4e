import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StageFile } from '../stage-settings';

/** A developer's stage on the sandbox acquirer: nothing kept on delete, every trace detail. */
export const dev: StageFile = {
  retain: false,
  logRetention: RetentionDays.ONE_MONTH,
  logLevel: 'DEBUG',
  acquirer: { name: 'sandbox' },
  natGateways: 1,
  // A new account's concurrency quota (10) cannot reserve the jobs' 96.
  reserveJobConcurrency: false,
  traceFixedRate: 0.05,
  // E-mail receipts (ADR 0037): none until the platform team writes the sender it verifies in SES, e.g.
  // receipts: { sender: 'receipts@pay.<your domain>', verify: 'domain' } (docs/operations.md, "E-mail receipts").
};
