import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StageFile } from '../stage-settings';

/**
 * The production stage. Before the first deploy write the gateway's URL and the domain here (or
 * give them with -c for a trial synth); after it, record what was deployed in `deployed`, so that
 * a later deploy cannot drop the domain or change the acquirer without being told
 * (-c allowSettingsChange=…). docs/operations.md, "Stage settings".
 */
export const prod: StageFile = {
  retain: true,
  logRetention: RetentionDays.ONE_YEAR,
  logLevel: 'INFO',
  acquirer: { name: 's2s-card' },
  // Two Availability Zones: a zone's outage leaves the other NAT (and its registered address).
  natGateways: 2,
  reserveJobConcurrency: true,
  // At 100 checkouts/s, 1 % beyond the reservoir keeps traces at about 2 a second (lib/constructs/tracing.ts).
  traceFixedRate: 0.01,
  // E-mail receipts (ADR 0037): none until the platform team writes the sender it verifies in SES, e.g.
  // receipts: { sender: 'receipts@pay.<your domain>', verify: 'domain' } (docs/operations.md, "E-mail receipts").
};
