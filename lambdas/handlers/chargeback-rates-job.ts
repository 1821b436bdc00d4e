import middy from '@middy/core';
import { jobObservability } from '../middleware/observability';
import { storeDeps as deps } from '../wiring/stores';
import { logger } from '../observability/logger';
import { telemetry } from '../observability/telemetry';
import { checkChargebackRates } from '../use-cases/admin/disputes';

/**
 * Scheduled (EventBridge, hourly): this month's chargeback rate of every merchant. The highest that
 * counts is the metric the ChargebackRate alarm watches; each merchant at or over the threshold is
 * logged by name for the operator the alarm wakes (docs/operations.md).
 */
export const handler = middy(async () => {
  const report = await checkChargebackRates(deps());
  telemetry.chargebackRates(report.highestPercent, report.over.length);
  if (report.over.length) logger.warn('merchants at or over the chargeback rate threshold', { month: report.month, over: report.over });
  else logger.info('chargeback rates checked', { month: report.month, merchants: report.merchants, highest_percent: report.highestPercent });
  return report;
}).use(jobObservability());
