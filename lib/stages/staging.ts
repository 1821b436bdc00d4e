import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { StageFile } from '../stage-settings';

/**
 * prod's shape (the S2S CARD connector, its VPC, NAT and fixed egress addresses, the gateway's
 * routes, reserved job concurrency) pointed at the gateway's sandbox: the place of the first real
 * run (docs/operations.md, "The first run against the gateway"). Smaller where only availability
 * differs: one NAT gateway. test/cdk/stage-shapes.test.ts holds it to prod's shape.
 */
export const staging: StageFile = {
  retain: false,
  logRetention: RetentionDays.THREE_MONTHS,
  logLevel: 'INFO',
  // The gateway's sandbox URL: -c s2sCardUrl=https://<sandbox PAYMENT_URL>/post until written here.
  acquirer: { name: 's2s-card' },
  natGateways: 1,
  reserveJobConcurrency: true,
  traceFixedRate: 0.05,
  // E-mail receipts (ADR 0037): none until the platform team writes the sender it verifies in SES, e.g.
  // receipts: { sender: 'receipts@pay.<your domain>', verify: 'domain' } (docs/operations.md, "E-mail receipts").
};
