import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { MerchantRateLimiter } from '../../ports/merchants';
import { key, TTL_ATTRIBUTE } from './keys';

/** How long a window's counter stays in the table after its second (TTL removes it within days). */
const KEEP_SECONDS = 60;

/** The largest block an instance takes at once: an eighth of the limit, so a few instances' unused blocks cannot starve the rest. */
export const maxBlockOf = (perSecond: number): number => Math.max(1, Math.floor(perSecond / 8));

interface Window {
  readonly second: number;
  /** Requests this instance may still admit in this second, from blocks it took. */
  tokens: number;
  /** Requests this instance admitted in this second. */
  used: number;
  /** No request is left in this second for anyone (a block came back short). */
  full: boolean;
  /** The block being taken: concurrent requests of this instance wait for it instead of each taking one. */
  taking?: Promise<void>;
}

/**
 * A fixed one-second window per merchant, counted in the table so every instance of every function
 * sees the same count (ADR 0025). An instance takes the window's requests in blocks: one atomic
 * `ADD k` to the second's counter returns the new count n, and the block is the counter's range
 * (n − k, n]; the part of it under the limit is this instance's to admit, the rest is nobody's. So
 * the instances together never admit more than the limit, and a merchant's requests cost one write
 * per block instead of one each. A block is as large as what this instance admitted for the merchant
 * in the previous second (or so far in this one), at most an eighth of the limit; what an instance
 * leaves of a block lapses with the second. A block that comes back empty marks the window full, so
 * a flood costs at most one write per instance and second.
 */
export class DynamoMerchantRateLimiter implements MerchantRateLimiter {
  /**
   * This instance's windows by merchant and second (bounded: cleared when it grows large). One per
   * second, never replaced by another second's: requests of two seconds in flight at once (at a
   * second's turn) each keep their own window and blocks.
   */
  private readonly windows = new Map<string, Window>();
  private readonly maxBlock: number;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly perSecond: number,
  ) {
    this.maxBlock = maxBlockOf(perSecond);
  }

  async admit(merchantKey: string, now: Date): Promise<{ readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number }> {
    const second = Math.floor(now.getTime() / 1000);
    // Retry-After is whole seconds: the next window starts within one.
    const refused = { allowed: false, retryAfterSeconds: 1 } as const;
    // Each turn takes a token, refuses, or waits for a block (which adds tokens or marks the window full).
    for (;;) {
      const window = this.windowOf(merchantKey, second);
      if (window.tokens > 0) {
        window.tokens--;
        window.used++;
        return { allowed: true };
      }
      if (window.full) return refused;
      window.taking ??= this.takeBlock(merchantKey, window).finally(() => {
        window.taking = undefined;
      });
      await window.taking;
    }
  }

  /** One atomic addition to the second's counter: the part of the range it returns under the limit is this instance's. */
  private async takeBlock(merchantKey: string, window: Window): Promise<void> {
    const lastSecond = this.windows.get(windowKey(merchantKey, window.second - 1))?.used ?? 0;
    const block = Math.min(this.maxBlock, Math.max(1, lastSecond, window.used));
    const out = await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key.merchantRate(merchantKey, window.second),
        UpdateExpression: 'ADD #n :block SET #ttl = if_not_exists(#ttl, :expires)',
        ExpressionAttributeNames: { '#n': 'requests', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':block': block, ':expires': window.second + KEEP_SECONDS },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const counted = Number(out.Attributes?.requests ?? 0);
    const granted = Math.max(0, Math.min(block, this.perSecond - (counted - block)));
    window.tokens += granted;
    if (granted < block) window.full = true;
  }

  private windowOf(merchantKey: string, second: number): Window {
    const id = windowKey(merchantKey, second);
    const window = this.windows.get(id);
    if (window) return window;
    if (this.windows.size >= 10_000) this.windows.clear();
    const fresh: Window = { second, tokens: 0, used: 0, full: false };
    this.windows.set(id, fresh);
    // The second before sizes this one's blocks; older ones are done with.
    this.windows.delete(windowKey(merchantKey, second - 2));
    return fresh;
  }
}

const windowKey = (merchantKey: string, second: number): string => `${merchantKey}\u0000${second}`;
