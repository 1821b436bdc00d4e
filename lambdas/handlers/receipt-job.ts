import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { jobObservability } from '../middleware/observability';
import { logger } from '../observability/logger';
import { withReceipts } from '../receipt-container';
import { sendDueReceipts } from '../use-cases/receipts';
import { JOB_END_MARGIN_MS, shardPart } from '../use-cases/work-queue';
import { storeDeps as deps } from '../wiring/stores';

/** Scheduled (EventBridge, every minute): sends the due e-mail receipts (ADR 0037). */
export const handler = middy(async (event: unknown, context: Context) => {
  const report = await sendDueReceipts(withReceipts(deps()), {
    part: shardPart(event),
    stopAt: Date.now() + context.getRemainingTimeInMillis() - JOB_END_MARGIN_MS,
  });
  if (report.errors.length) logger.error('receipt job: some receipts failed and stay queued', { ...report });
  else if (report.examined) logger.info('receipt job', { ...report });
  return report;
}).use(jobObservability());
