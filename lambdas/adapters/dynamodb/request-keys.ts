import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { IDEMPOTENCY_KEY_TTL_MS } from '../../domain/request-key';
import { epochSeconds } from '../../domain/payment';
import type { RequestKeys } from '../../ports/request-keys';
import { isConditionFailure } from './client';
import { TTL_ATTRIBUTE, key } from './keys';

/**
 * One small item per key in the service's table, removed by TTL after a day (and ignored once
 * expired, since TTL deletion is lazy). One conditional write: new, expired or the same body passes.
 */
export class DynamoRequestKeys implements RequestKeys {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async claim(id: string, fingerprint: string, now: Date): Promise<'same' | 'different'> {
    const expiresAt = new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS);
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key.requestKey(id), kind: 'request-key', fingerprint, createdAt: now.toISOString(), expiresAt: expiresAt.toISOString(), [TTL_ATTRIBUTE]: epochSeconds(expiresAt) },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :now OR fingerprint = :fp',
          ExpressionAttributeValues: { ':now': now.toISOString(), ':fp': fingerprint },
        }),
      );
      return 'same';
    } catch (e) {
      if (isConditionFailure(e)) return 'different';
      throw e;
    }
  }
}
