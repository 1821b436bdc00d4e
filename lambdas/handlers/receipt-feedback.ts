import middy from '@middy/core';
import { DynamoMailSuppressions } from '../adapters/dynamodb/receipt-outbox';
import { jobObservability } from '../middleware/observability';
import { logger } from '../observability/logger';
import { mailFeedbackOf } from '../protocol/mail-feedback';
import type { MailSuppressions } from '../ports/receipts';
import { recordMailFeedback } from '../use-cases/mail-feedback';
import { baseDeps } from '../wiring/stores';

let suppressions: MailSuppressions | undefined;

/**
 * EventBridge, for each bounce or complaint SES reports of a receipt (lib/constructs/receipt-mail.ts):
 * the recipients of permanent bounces and of complaints are suppressed by digest (ADR 0037). A
 * failure is retried by EventBridge, then lands in the dead-letter queue; suppressing twice is harmless.
 */
export const handler = middy(async (event: unknown) => {
  const feedback = mailFeedbackOf(event);
  if (!feedback) {
    logger.warn('mail feedback: not a bounce or complaint', { detailType: (event as { 'detail-type'?: unknown })?.['detail-type'] });
    return { suppressed: 0 };
  }
  const d = baseDeps();
  suppressions ??= new DynamoMailSuppressions(d.db, d.config.TABLE_NAME);
  return recordMailFeedback({ suppressions, clock: d.clock }, feedback);
}).use(jobObservability());
