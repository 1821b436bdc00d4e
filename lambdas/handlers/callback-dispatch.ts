import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { withCallbacks } from '../callback-container';
import { deps } from '../container';
import { logger } from '../observability/logger';
import { runCallbackJob } from '../use-cases/deliver-callbacks';

const END_MARGIN_MS = 5_000;

/**
 * The payment whose record asks for a delivery: a transaction was appended or a resend queued.
 * Every other change of a payment in the outbox (our own leases among them) is left alone.
 */
export function paymentToDeliver(record: DynamoDBRecord): string | undefined {
  const next = record.dynamodb?.NewImage;
  if (!next?.outboxPk || next.sk?.S !== 'PAYMENT') return undefined;
  const before = record.dynamodb?.OldImage;
  const grew = (attr: string) => (next[attr]?.L?.length ?? 0) > (before?.[attr]?.L?.length ?? 0);
  if (!grew('transactions') && !grew('callbackResends')) return undefined;
  return next.pk?.S?.replace(/^PAYMENT#/, '');
}

/**
 * DynamoDB Stream of the table: delivers a payment's new callbacks seconds after the write that
 * created them. Only a fast path: the outbox holds them anyway, and the scheduled relay delivers
 * whatever this misses. Records whose payment failed are reported, so the stream retries them.
 */
export const handler = middy(async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
  const byPayment = new Map<string, string>();
  for (const record of event.Records) {
    const paymentId = paymentToDeliver(record);
    if (paymentId && record.dynamodb?.SequenceNumber) byPayment.set(paymentId, byPayment.get(paymentId) ?? record.dynamodb.SequenceNumber);
  }
  if (!byPayment.size) return { batchItemFailures: [] };
  const report = await runCallbackJob(withCallbacks(deps()), { paymentIds: [...byPayment.keys()], stopAt: Date.now() + context.getRemainingTimeInMillis() - END_MARGIN_MS });
  const failedIds = new Set(report.failedPaymentIds);
  if (report.dead) logger.warn('callback dead', { dead: report.dead });
  if (report.failed) logger.error('callback dispatch: some payments failed', { ...report });
  const failures = [...byPayment].filter(([id]) => failedIds.has(id)).map(([, seq]) => ({ itemIdentifier: seq }));
  return { batchItemFailures: failures };
}).use(injectLambdaContext(logger, { logEvent: false, resetKeys: true }));
