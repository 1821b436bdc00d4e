import middy from '@middy/core';
import { jobObservability } from '../middleware/observability';
import type { Context } from 'aws-lambda';
import { withCallbacks } from '../callback-container';
import { merchantSecretDeps as deps } from '../wiring/secrets';
import { logger } from '../observability/logger';
import { runCallbackJob } from '../use-cases/deliver-callbacks';
import { shardPart } from '../use-cases/work-queue';

/** Time kept back at the end of a run for the last writes. */
const END_MARGIN_MS = 5_000;

/**
 * Scheduled (EventBridge, every minute; the local runner every few seconds): the outbox relay.
 * Delivers every callback that is due, first attempts the stream did not get to and retries.
 */
export const handler = middy(async (event: unknown, context: Context) => {
  // Drains: keeps taking newly due callbacks while its time lasts, in lanes per merchant.
  const report = await runCallbackJob(withCallbacks(deps()), { drain: true, part: shardPart(event), stopAt: Date.now() + context.getRemainingTimeInMillis() - END_MARGIN_MS });
  if (report.dead) logger.warn('callback dead', { dead: report.dead });
  if (report.failed) logger.error('callback job: some payments failed and stay in the outbox', { ...report });
  else if (report.payments) logger.info('callback job', { ...report });
  return report;
}).use(jobObservability());
