import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { deps } from '../container';
import { logger } from '../observability/logger';
import { reconcileDue } from '../use-cases/reconcile';

/** Scheduled (EventBridge, every minute): settles payment attempts left without an answer. */
export const handler = middy(async () => {
  const report = await reconcileDue(deps());
  if (report.failed) logger.error('reconciled payment attempts: some payments failed and stay queued', { ...report });
  else if (report.examined) logger.info('reconciled payment attempts', { ...report });
  return report;
}).use(injectLambdaContext(logger, { logEvent: false, resetKeys: true }));
