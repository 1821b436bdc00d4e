import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IDEMPOTENCY_KEY_TTL_MS, REQUEST_KEY_LEASE_MS, type RememberedAnswer } from '../../domain/request-key';
import { epochSeconds } from '../../domain/payment';
import type { RequestKeyClaim, RequestKeys } from '../../ports/request-keys';
import { isConditionFailure } from './client';
import { TTL_ATTRIBUTE, key } from './keys';
import { retryAtOnce, TRY_AGAIN } from '../../domain/retry-policy';

/** A claim lost to a concurrent one is read again; after this many rounds the key is busy. */
const CLAIM_ROUNDS = 3;

interface RequestKeyItem {
  readonly fingerprint: string;
  readonly expiresAt: string;
  readonly leaseUntil?: string;
  readonly answer?: RememberedAnswer;
}

/**
 * One small item per key in the service's table, removed by TTL after a day (and ignored once
 * expired, since TTL deletion is lazy). Every step is one conditional write whose condition is the
 * rule: a new (or expired) key is claimed by a put; a claim whose lease lapsed without an answer is
 * taken over by an update; the first answer is kept by an update that only passes while none is.
 */
export class DynamoRequestKeys implements RequestKeys {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(id: string, fingerprint: string, lease: string, now: Date): Promise<RequestKeyClaim> {
    const expiresAt = new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS);
    const leaseUntil = new Date(now.getTime() + REQUEST_KEY_LEASE_MS).toISOString();
    const claimed = await retryAtOnce(CLAIM_ROUNDS, async (): Promise<RequestKeyClaim | typeof TRY_AGAIN> => {
      if (
        await this.passes(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...key.requestKey(id), kind: 'request-key', fingerprint, createdAt: now.toISOString(), expiresAt: expiresAt.toISOString(), leaseId: lease, leaseUntil, [TTL_ATTRIBUTE]: epochSeconds(expiresAt) },
            ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now',
            ExpressionAttributeValues: { ':now': now.toISOString() },
          }),
        )
      ) {
        return { kind: 'run', lease, rerun: false };
      }
      const found = await this.read(id);
      // Expired and removed between the two calls: claim it anew.
      if (!found || found.expiresAt <= now.toISOString()) return TRY_AGAIN;
      if (found.fingerprint !== fingerprint) return { kind: 'different' };
      if (found.answer) return { kind: 'answered', answer: { statusCode: Number(found.answer.statusCode), body: String(found.answer.body) } };
      if (found.leaseUntil !== undefined && found.leaseUntil > now.toISOString()) return { kind: 'in-progress' };
      if (
        await this.passes(
          new UpdateCommand({
            TableName: this.tableName,
            Key: key.requestKey(id),
            UpdateExpression: 'SET leaseId = :lease, leaseUntil = :until',
            ConditionExpression: 'fingerprint = :fp AND expiresAt > :now AND attribute_not_exists(answer) AND (attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
            ExpressionAttributeValues: { ':lease': lease, ':until': leaseUntil, ':fp': fingerprint, ':now': now.toISOString() },
          }),
        )
      ) {
        return { kind: 'run', lease, rerun: true };
      }
      return TRY_AGAIN;
    });
    return claimed.exhausted ? { kind: 'in-progress' } : claimed.value;
  }

  async remember(id: string, answer: RememberedAnswer, now: Date): Promise<RememberedAnswer> {
    const kept = await this.passes(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key.requestKey(id),
        UpdateExpression: 'SET answer = :answer, answeredAt = :now REMOVE leaseId, leaseUntil',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(answer)',
        ExpressionAttributeValues: { ':answer': { statusCode: answer.statusCode, body: answer.body }, ':now': now.toISOString() },
      }),
    );
    if (kept) return answer;
    const first = (await this.read(id))?.answer;
    return first ? { statusCode: Number(first.statusCode), body: String(first.body) } : answer;
  }

  async release(id: string, lease: string): Promise<void> {
    await this.passes(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key.requestKey(id),
        UpdateExpression: 'REMOVE leaseId, leaseUntil',
        ConditionExpression: 'leaseId = :lease AND attribute_not_exists(answer)',
        ExpressionAttributeValues: { ':lease': lease },
      }),
    );
  }

  async check(id: string, fingerprint: string, now: Date): Promise<'same' | 'different'> {
    const expiresAt = new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS);
    const recorded = await this.passes(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...key.requestKey(id), kind: 'request-key', fingerprint, createdAt: now.toISOString(), expiresAt: expiresAt.toISOString(), [TTL_ATTRIBUTE]: epochSeconds(expiresAt) },
        ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now OR fingerprint = :fp',
        ExpressionAttributeValues: { ':now': now.toISOString(), ':fp': fingerprint },
      }),
    );
    return recorded ? 'same' : 'different';
  }

  /** Whether a conditional write passed (false when its condition did not hold). */
  private async passes(command: PutCommand | UpdateCommand): Promise<boolean> {
    try {
      await (command instanceof PutCommand ? this.db.send(command) : this.db.send(command));
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  private async read(id: string): Promise<RequestKeyItem | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.requestKey(id), ConsistentRead: true }));
    return out.Item as RequestKeyItem | undefined;
  }
}
