import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Merchant, MerchantDirectory } from '../../ports/merchants';
import { LOOKUP_INDEX, key, withoutStorageAttributes } from './keys';
import { isConditionFailure, itemsByKey } from './client';

export class DynamoMerchantDirectory implements MerchantDirectory {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  private toItem(merchant: Merchant): Record<string, unknown> {
    return {
      ...key.merchant(merchant.merchantKey),
      kind: 'merchant',
      ...merchant,
      gsi1pk: key.merchantsIndex,
      gsi1sk: `${merchant.name.toLowerCase()}#${merchant.merchantKey}`,
    };
  }

  /** Every merchant by name; bounded (the admin list pages through them). */
  async list(limit = 200): Promise<Merchant[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: LOOKUP_INDEX,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.merchantsIndex },
        Limit: limit,
      }),
    );
    // The index holds keys only; the merchants are read by key (eventually consistent, as the index is).
    const keys = (out.Items ?? []).map((i) => ({ pk: String(i.pk), sk: String(i.sk) }));
    return (await itemsByKey(this.db, this.tableName, keys, false)).map((i) => withoutStorageAttributes<Merchant>(i));
  }

  /**
   * Whether a merchant has this key: read consistently (a merchant created a moment ago exists), the
   * key alone. What stands between a random merchant_key and a Secrets Manager call.
   */
  async exists(merchantKey: string): Promise<boolean> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.merchant(merchantKey), ConsistentRead: true, ProjectionExpression: 'pk' }));
    return out.Item !== undefined;
  }

  async find(merchantKey: string): Promise<Merchant | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.merchant(merchantKey) }));
    return out.Item ? withoutStorageAttributes<Merchant>(out.Item) : undefined;
  }

  async save(merchant: Merchant): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: this.toItem(merchant),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  }

  /** One attribute set in place, so a settings change saved at the same moment cannot drop it. */
  async markWebhookSecretRotated(merchantKey: string, at: Date): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: key.merchant(merchantKey),
        UpdateExpression: 'SET webhookSecretRotatedAt = :at',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': at.toISOString() },
      }),
    );
  }

  async create(merchant: Merchant): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.toItem(merchant),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }
}
