import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SearchLeases } from '../../ports/operators';
import { conditionalUpdate } from './client';
import { key, TTL_ATTRIBUTE } from './keys';

/** How long a slot's item stays after its lease lapsed (TTL removes it within days). */
const KEEP_SECONDS = 3600;

/**
 * Retry-After for an operator whose slots are all held: a count or export answers within its
 * budget (BULK_LIMITS.requestBudgetMs), most far sooner; the portal asks again after this.
 */
export const SEARCH_RETRY_AFTER_SECONDS = 2;

/**
 * An operator's running counts and exports in the table, so every instance of every function sees
 * the same ones: `perOperator` slot items, each taken by one conditional update whose condition is
 * the rule (the slot is free, or its holder's deadline has passed) and given back by another
 * (only by its holder). A function that dies holding a slot frees it at its deadline, the latest
 * it could have run: a crash never locks an operator out for longer than one request's time.
 */
export class DynamoSearchLeases implements SearchLeases {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly perOperator: number,
  ) {}

  async take(operator: string, until: Date, now: Date): Promise<{ readonly taken: true; release(): Promise<void> } | { readonly taken: false; readonly retryAfterSeconds: number }> {
    const holder = randomUUID();
    // Start at a random slot: concurrent requests of one operator mostly try different items first.
    const first = Math.floor(Math.random() * this.perOperator);
    for (let i = 0; i < this.perOperator; i++) {
      const slot = (first + i) % this.perOperator;
      const taken = await conditionalUpdate(this.db, {
        TableName: this.tableName,
        Key: key.searchLease(operator, slot),
        UpdateExpression: 'SET #holder = :holder, #until = :until, #ttl = :expires',
        ConditionExpression: 'attribute_not_exists(#until) OR #until <= :now',
        ExpressionAttributeNames: { '#holder': 'holder', '#until': 'heldUntil', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':holder': holder, ':until': until.getTime(), ':now': now.getTime(), ':expires': Math.floor(until.getTime() / 1000) + KEEP_SECONDS },
      });
      if (taken) return { taken: true, release: () => this.release(operator, slot, holder) };
    }
    return { taken: false, retryAfterSeconds: SEARCH_RETRY_AFTER_SECONDS };
  }

  /** Frees the slot if this request still holds it (after its deadline another may have taken it). */
  private async release(operator: string, slot: number, holder: string): Promise<void> {
    await conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: key.searchLease(operator, slot),
      UpdateExpression: 'SET #until = :free',
      ConditionExpression: '#holder = :holder',
      ExpressionAttributeNames: { '#holder': 'holder', '#until': 'heldUntil' },
      ExpressionAttributeValues: { ':holder': holder, ':free': 0 },
    });
  }
}
