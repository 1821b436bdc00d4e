import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { JOB_END_MARGIN_MS, shardPart } from '../use-cases/work-queue';
import { jobEndMarginMs } from '../../lib/time-budget';
import { jobObservability } from '../middleware/observability';
import { acquirerDeps as deps } from '../wiring/acquirer';
import { logger } from '../observability/logger';
import { reconcileDue } from '../use-cases/reconcile';

/** Scheduled (EventBridge, every minute): settles payment attempts left without an answer. */
export const handler = middy(async (event: unknown, context: Context) => {
  // Drains until the run's time is nearly spent; what is left waits for the next run.
  const report = await reconcileDue(deps(), {
    part: shardPart(event),
    // Room for the last payment's acquirer operation (a gateway follow-up may take two requests and a wait).
    stopAt: Date.now() + context.getRemainingTimeInMillis() - jobEndMarginMs(deps().config, JOB_END_MARGIN_MS),
  });
  if (report.failed) logger.error('reconciled payment attempts: some payments failed and stay queued', { ...report });
  else if (report.examined) logger.info('reconciled payment attempts', { ...report });
  return report;
}).use(jobObservability());
