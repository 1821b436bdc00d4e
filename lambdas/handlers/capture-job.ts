import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { deps } from '../container';
import { logger } from '../observability/logger';
import { runCaptureJob } from '../use-cases/capture-job';

/** Scheduled (EventBridge, every minute): automatic captures and expiry of authorizations. */
export const handler = middy(async () => {
  const report = await runCaptureJob(deps());
  if (report.failed) logger.error('capture job: some payments failed and stay queued', { ...report });
  else if (report.examined) logger.info('capture job', { ...report });
  return report;
}).use(injectLambdaContext(logger, { logEvent: false, resetKeys: true }));
