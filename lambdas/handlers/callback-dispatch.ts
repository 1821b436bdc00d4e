import middy from '@middy/core';
import { jobObservability } from '../middleware/observability';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { withCallbacks } from '../callback-container';
import { merchantSecretDeps as deps } from '../wiring/secrets';
import { logger } from '../observability/logger';
import { runCallbackJob } from '../use-cases/deliver-callbacks';

const END_MARGIN_MS = 5_000;

/**
 * The payment whose record asks for a delivery: a transaction was appended or a resend queued.
 * Every other change of a payment in the outbox (our own leases among them) is left alone.
 */
export function paymentToDeliver(record: DynamoDBRecord): string | undefined {
  return dueFromRecord(record)?.paymentId;
}

/** The payment a record asks to deliver, with its merchant (its lane). */
export function dueFromRecord(record: DynamoDBRecord): { paymentId: string; merchantKey?: string } | undefined {
  const next = record.dynamodb?.NewImage;
  // Due callbacks have a due time; a write that leaves them to this dispatcher alone sets no outbox partition (transition-expression.ts).
  if (!next?.sendSk || next.sk?.S !== 'PAYMENT') return undefined;
  const before = record.dynamodb?.OldImage;
  const grew = (attr: string) => (next[attr]?.L?.length ?? 0) > (before?.[attr]?.L?.length ?? 0);
  if (!grew('transactions') && !grew('callbackResends')) return undefined;
  const paymentId = next.pk?.S?.replace(/^PAYMENT#/, '');
  if (!paymentId) return undefined;
  return { paymentId, ...(next.merchantKey?.S ? { merchantKey: next.merchantKey.S } : {}) };
}

/**
 * The payment whose state item DynamoDB's TTL removed: a link that expired without an attempt (the
 * first attempt removes the TTL). Deletions by anyone else are not TTL's.
 */
export function expiredLinkOf(record: DynamoDBRecord): string | undefined {
  if (record.eventName !== 'REMOVE') return undefined;
  const by = record.userIdentity as { type?: string; principalId?: string } | undefined;
  if (by?.type !== 'Service' || by.principalId !== 'dynamodb.amazonaws.com') return undefined;
  const keys = record.dynamodb?.Keys;
  if (keys?.sk?.S !== 'PAYMENT' || !keys.pk?.S?.startsWith('PAYMENT#')) return undefined;
  return keys.pk.S.slice('PAYMENT#'.length);
}

/**
 * DynamoDB Stream of the table: delivers a payment's new callbacks seconds after the write that
 * created them (taking the lease that write left for it), and drops the details of links TTL removed. Only a fast path: the outbox holds them anyway, and the scheduled relay delivers
 * whatever this misses. Records whose payment failed are reported, so the stream retries them.
 */
export const handler = middy(async (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> => {
  const byPayment = new Map<string, string>();
  const merchants = new Map<string, string | undefined>();
  const expired = event.Records.map(expiredLinkOf).filter((id): id is string => id !== undefined);
  for (const id of expired) await deps().store.forgetExpiredLink(id);
  for (const record of event.Records) {
    const due = dueFromRecord(record);
    if (due && record.dynamodb?.SequenceNumber) {
      byPayment.set(due.paymentId, byPayment.get(due.paymentId) ?? record.dynamodb.SequenceNumber);
      merchants.set(due.paymentId, due.merchantKey);
    }
  }
  if (!byPayment.size) return { batchItemFailures: [] };
  // In lanes per merchant; a merchant whose endpoint is slow is left to the relay, so the shard's next batches do not wait on it.
  const payments = [...byPayment.keys()].map((paymentId) => ({ paymentId, ...(merchants.get(paymentId) ? { merchantKey: merchants.get(paymentId)! } : {}) }));
  const report = await runCallbackJob(withCallbacks(deps()), { payments, deferSlow: true, fromStream: true, stopAt: Date.now() + context.getRemainingTimeInMillis() - END_MARGIN_MS });
  const failedIds = new Set(report.failedPaymentIds);
  if (report.dead) logger.warn('callback dead', { dead: report.dead });
  if (report.failed) logger.error('callback dispatch: some payments failed', { ...report });
  const failures = [...byPayment].filter(([id]) => failedIds.has(id)).map(([, seq]) => ({ itemIdentifier: seq }));
  return { batchItemFailures: failures };
}).use(jobObservability());
