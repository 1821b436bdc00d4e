import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { MerchantRateLimiter } from '../../ports/merchants';
import { conditionalUpdate } from './client';
import { key, TTL_ATTRIBUTE } from './keys';

/** How long a window's counter stays in the table after its second (TTL removes it within days). */
const KEEP_SECONDS = 60;

/**
 * A fixed one-second window per merchant, counted in the table so every instance of every function
 * sees the same count (ADR 0025): one conditional increment per admitted request, whose condition is
 * the rule (fewer than the limit so far this second). An instance that saw the window full refuses
 * the rest of that second itself, so a flood costs at most one refused write per instance and second.
 */
export class DynamoMerchantRateLimiter implements MerchantRateLimiter {
  /** Per merchant, the last window this instance found full (bounded: cleared when it grows large). */
  private readonly full = new Map<string, number>();

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly perSecond: number,
  ) {}

  async admit(merchantKey: string, now: Date): Promise<{ readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number }> {
    const second = Math.floor(now.getTime() / 1000);
    // Retry-After is whole seconds: the next window starts within one.
    const refused = { allowed: false, retryAfterSeconds: 1 } as const;
    if (this.full.get(merchantKey) === second) return refused;
    const counted = await conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: key.merchantRate(merchantKey, second),
      UpdateExpression: 'ADD #n :one SET #ttl = if_not_exists(#ttl, :expires)',
      ConditionExpression: 'attribute_not_exists(#n) OR #n < :limit',
      ExpressionAttributeNames: { '#n': 'requests', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':one': 1, ':limit': this.perSecond, ':expires': second + KEEP_SECONDS },
    });
    if (counted) return { allowed: true };
    if (this.full.size >= 10_000) this.full.clear();
    this.full.set(merchantKey, second);
    return refused;
  }
}
