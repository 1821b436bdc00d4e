import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { JOB_END_MARGIN_MS, shardPart } from '../use-cases/work-queue';
import { jobObservability } from '../middleware/observability';
import { deps } from '../container';
import { logger } from '../observability/logger';
import { runCaptureJob } from '../use-cases/capture-job';

/** Scheduled (EventBridge, every minute): automatic captures and expiry of authorizations. */
export const handler = middy(async (event: unknown, context: Context) => {
  // Drains until the run's time is nearly spent; what is left waits for the next run.
  const report = await runCaptureJob(deps(), { part: shardPart(event), stopAt: Date.now() + context.getRemainingTimeInMillis() - JOB_END_MARGIN_MS });
  if (report.failed) logger.error('capture job: some payments failed and stay queued', { ...report });
  else if (report.examined) logger.info('capture job', { ...report });
  return report;
}).use(jobObservability());
