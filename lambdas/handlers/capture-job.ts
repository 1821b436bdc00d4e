import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { JOB_END_MARGIN_MS, shardPart } from '../use-cases/work-queue';
import { jobEndMarginMs } from '../../lib/time-budget';
import { jobObservability } from '../middleware/observability';
import { acquirerDeps as deps } from '../wiring/acquirer';
import { logger } from '../observability/logger';
import { runCaptureJob } from '../use-cases/capture-job';

/** Scheduled (EventBridge, every minute): automatic captures and expiry of authorizations. */
export const handler = middy(async (event: unknown, context: Context) => {
  // Drains until the run's time is nearly spent; what is left waits for the next run.
  const report = await runCaptureJob(deps(), {
    part: shardPart(event),
    // Room for the last payment's acquirer operation (a gateway follow-up may take two requests and a wait).
    stopAt: Date.now() + context.getRemainingTimeInMillis() - jobEndMarginMs(deps().config, JOB_END_MARGIN_MS),
  });
  if (report.failed) logger.error('capture job: some payments failed and stay queued', { ...report });
  else if (report.examined) logger.info('capture job', { ...report });
  return report;
}).use(jobObservability());
