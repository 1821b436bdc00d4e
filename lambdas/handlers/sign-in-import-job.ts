import middy from '@middy/core';
import { createCognitoSignIns, type CognitoSignIns } from '../adapters/cognito/sign-ins';
import { jobObservability } from '../middleware/observability';
import { logger } from '../observability/logger';
import { storeDeps as deps } from '../wiring/stores';
import { importSignIns } from '../use-cases/import-sign-ins';

let signIns: CognitoSignIns | undefined;

/**
 * Scheduled (EventBridge, every 5 minutes; cloud stages only): the operators' sign-ins on Cognito's
 * pages, successful and refused, copied into the audit log (ADR 0019). The local runner records its
 * own sign-ins as they happen.
 */
export const handler = middy(async () => {
  const d = deps();
  const pool = d.config.OPERATOR_POOL_ID;
  if (!pool) throw new Error('OPERATOR_POOL_ID is not set: this job runs beside the operators\' user pool');
  signIns ??= createCognitoSignIns(pool);
  const report = await importSignIns({ signIns, audit: d.audit, clock: d.clock });
  if (report.imported) logger.info('operator sign-ins recorded', { ...report });
  return report;
}).use(jobObservability());
