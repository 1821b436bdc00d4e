import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AccountReader, AcquirerAccount, AcquirerAccounts } from '../../ports/acquirer-accounts';
import type { Clock } from '../../ports/clock';
import { conditionalPut, lookupItems } from './client';
import { key, withoutStorageAttributes } from './keys';

/** Most accounts listed (the portal and the CLI list them all). */
const MAX_ACCOUNTS = 500;

/** One item per account (`ACCOUNT#<id>`), listed through the lookup index; written whole, guarded by `updatedAt`. */
export class DynamoAcquirerAccounts implements AcquirerAccounts {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private toItem(account: AcquirerAccount): Record<string, unknown> {
    return { ...key.acquirerAccount(account.accountId), kind: 'acquirer-account', ...account, gsi1pk: key.accountsIndex, gsi1sk: account.accountId };
  }

  async find(accountId: string): Promise<AcquirerAccount | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.acquirerAccount(accountId), ConsistentRead: true }));
    return out.Item ? withoutStorageAttributes<AcquirerAccount>(out.Item) : undefined;
  }

  async list(): Promise<AcquirerAccount[]> {
    const { items } = await lookupItems(this.db, this.tableName, key.accountsIndex, { limit: MAX_ACCOUNTS });
    return items.map((i) => withoutStorageAttributes<AcquirerAccount>(i));
  }

  create(account: AcquirerAccount): Promise<boolean> {
    return conditionalPut(this.db, { TableName: this.tableName, Item: this.toItem(account), ConditionExpression: 'attribute_not_exists(pk)' });
  }

  save(account: AcquirerAccount, readAt: string): Promise<boolean> {
    return conditionalPut(this.db, {
      TableName: this.tableName,
      Item: this.toItem(account),
      ConditionExpression: 'attribute_exists(pk) AND updatedAt = :read',
      ExpressionAttributeValues: { ':read': readAt },
    });
  }
}

/**
 * Reads of `accounts` kept for `ttlMs` per account (an account that does not exist too); `fresh`
 * reads past them. Reads of one account at the same time share one request.
 */
export function cachedAccountReader(accounts: Pick<AcquirerAccounts, 'find'>, clock: Clock, ttlMs: number): AccountReader {
  const kept = new Map<string, { readonly account: Promise<AcquirerAccount | undefined>; readonly until: number }>();
  return {
    find(accountId, fresh = false) {
      const now = clock.now().getTime();
      const hit = kept.get(accountId);
      if (!fresh && hit && hit.until > now) return hit.account;
      const account = accounts.find(accountId);
      kept.set(accountId, { account, until: now + ttlMs });
      // A failed read is not kept: the next one asks again.
      account.catch(() => {
        if (kept.get(accountId)?.account === account) kept.delete(accountId);
      });
      return account;
    },
  };
}
