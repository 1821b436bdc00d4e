import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { jobObservability } from '../middleware/observability';
import { storeDeps as deps } from '../wiring/stores';
import { logger } from '../observability/logger';
import { telemetry } from '../observability/telemetry';
import { checkChargebackRates } from '../use-cases/admin/disputes';

/** Time kept back at the end of a run: a page of a day's payments read, and the day's figure kept. */
const END_MARGIN_MS = 5_000;

/**
 * Scheduled (EventBridge, hourly): this month's chargeback rate of every merchant with a chargeback
 * this month. The highest that counts is the metric the ChargebackRate alarm watches; each merchant
 * at or over the threshold is logged by name for the operator the alarm wakes (docs/operations.md).
 * A merchant whose payments the run had no time to finish counting is logged and left to the next
 * run, which goes on from the days this one kept.
 */
export const handler = middy(async (_event: unknown, context: Context) => {
  const report = await checkChargebackRates(deps(), { stopAt: Date.now() + context.getRemainingTimeInMillis() - END_MARGIN_MS });
  telemetry.chargebackRates(report.highestPercent, report.over.length);
  if (report.counting.length) logger.warn('settled payments not counted to the end in this run: rated on the next', { month: report.month, counting: report.counting });
  if (report.over.length) logger.warn('merchants at or over the chargeback rate threshold', { month: report.month, over: report.over });
  else logger.info('chargeback rates checked', { month: report.month, merchants: report.merchants, highest_percent: report.highestPercent });
  return report;
}).use(jobObservability());
