import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RECEIPT_KEPT_DAYS } from '../../domain/receipt';
import type { ShardPart } from '../../ports/payments';
import type { ClaimedReceipt, MailSuppressions, ReceiptEnd, ReceiptOutbox, ReceiptRecord } from '../../ports/receipts';
import { conditionalPut, conditionalUpdate, isConditionFailure } from './client';
import { key, workPartitionOf, type ShardCounts } from './keys';
import { dueBatches } from './payment-queries';

/** The work index's queue of due receipts (`receipt#<shard>`), beside the jobs' `reconcile` and `capture`. */
export const RECEIPT_QUEUE = 'receipt';

const STORAGE = ['pk', 'sk', 'workPk', 'workSk', 'lease', 'ttl'] as const;

const recordOf = (item: Record<string, unknown>): ReceiptRecord => {
  const copy = { ...item };
  for (const a of STORAGE) delete copy[a];
  return copy as unknown as ReceiptRecord;
};

const epochSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * Receipts in the table: one item per payment (`RECEIPT#<payment id>`), queued by a conditional put
 * (`attribute_not_exists`: a second queueing of the same payment is a no-op), in the sparse work
 * index while due. A try is claimed by one conditional update that moves its due time to the end
 * of the lease (so a crashed worker's receipt comes due again then, and no other worker takes it
 * before); the try's end is written under that lease. An ended receipt leaves the index and is
 * removed by TTL after RECEIPT_KEPT_DAYS, with the address on it.
 */
export class DynamoReceiptOutbox implements ReceiptOutbox {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly shards: ShardCounts,
  ) {}

  private dueKeys(paymentId: string, at: Date) {
    return { workPk: workPartitionOf(RECEIPT_QUEUE, paymentId, this.shards), workSk: `${at.toISOString()}#${paymentId}` };
  }

  async queue(receipt: Omit<ReceiptRecord, 'state' | 'tries'>, dueAt: Date): Promise<'queued' | 'exists'> {
    const queued = await conditionalPut(this.db, {
      TableName: this.tableName,
      Item: { ...key.receipt(receipt.paymentId), ...receipt, state: 'queued', tries: 0, nextAttemptAt: dueAt.toISOString(), ...this.dueKeys(receipt.paymentId, dueAt) },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    return queued ? 'queued' : 'exists';
  }

  async due(until: Date, limit: number, part?: ShardPart): Promise<readonly { paymentId: string; dueAt: string }[]> {
    const found: { paymentId: string; dueAt: string }[] = [];
    const table = { db: this.db, tableName: this.tableName, shards: this.shards };
    // The first round holds every shard's soonest: its head is the soonest due of all.
    for await (const batch of dueBatches(table, RECEIPT_QUEUE, until, Math.min(limit, 100), part)) {
      found.push(...batch);
      if (found.length >= limit) break;
    }
    return found.slice(0, limit);
  }

  async claim(paymentId: string, now: Date, leaseUntil: Date): Promise<ClaimedReceipt | undefined> {
    const lease = randomUUID();
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.receipt(paymentId),
          UpdateExpression: 'SET lease = :lease, nextAttemptAt = :until, workSk = :sk ADD tries :one',
          ConditionExpression: '#state = :queued AND nextAttemptAt <= :now',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':lease': lease, ':until': leaseUntil.toISOString(), ':sk': this.dueKeys(paymentId, leaseUntil).workSk, ':one': 1, ':queued': 'queued', ':now': now.toISOString() },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { receipt: recordOf(out.Attributes ?? {}), lease };
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  retryAt(claimed: ClaimedReceipt, next: Date, error: string): Promise<boolean> {
    const { paymentId } = claimed.receipt;
    return conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: key.receipt(paymentId),
      UpdateExpression: 'SET nextAttemptAt = :next, workSk = :sk, lastError = :error REMOVE lease',
      ConditionExpression: 'lease = :lease AND #state = :queued',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':next': next.toISOString(), ':sk': this.dueKeys(paymentId, next).workSk, ':error': error.slice(0, 300), ':lease': claimed.lease, ':queued': 'queued' },
    });
  }

  end(claimed: ClaimedReceipt, end: ReceiptEnd, at: Date): Promise<boolean> {
    const detail: Record<string, string> =
      end.state === 'sent' ? { sentAt: at.toISOString(), messageId: end.messageId } : end.state === 'skipped' ? { skipped: end.why } : { lastError: end.error.slice(0, 300) };
    const names = Object.keys(detail);
    return conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: key.receipt(claimed.receipt.paymentId),
      UpdateExpression: `SET #state = :end, endedAt = :at, #ttl = :ttl, ${names.map((n) => `${n} = :${n}`).join(', ')} REMOVE lease, workPk, workSk, nextAttemptAt`,
      ConditionExpression: 'lease = :lease AND #state = :queued',
      ExpressionAttributeNames: { '#state': 'state', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':end': end.state,
        ':at': at.toISOString(),
        ':ttl': epochSeconds(at) + RECEIPT_KEPT_DAYS * 86_400,
        ':lease': claimed.lease,
        ':queued': 'queued',
        ...Object.fromEntries(names.map((n) => [`:${n}`, detail[n]])),
      },
    });
  }

  async find(paymentId: string): Promise<ReceiptRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.receipt(paymentId), ConsistentRead: true }));
    return out.Item ? recordOf(out.Item) : undefined;
  }
}

/** The suppression list: one item per address digest, counting the feedback it got. */
export class DynamoMailSuppressions implements MailSuppressions {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async isSuppressed(digest: string): Promise<boolean> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.mailSuppression(digest), ProjectionExpression: 'pk' }));
    return out.Item !== undefined;
  }

  async suppress(digest: string, reason: 'bounce' | 'complaint', at: Date): Promise<void> {
    // One update whatever came before: SES may report the same address twice, or two at once.
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key.mailSuppression(digest),
        UpdateExpression: 'SET firstAt = if_not_exists(firstAt, :at), lastAt = :at, lastReason = :reason ADD feedback :one',
        ExpressionAttributeValues: { ':at': at.toISOString(), ':reason': reason, ':one': 1 },
      }),
    );
  }
}
