import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Merchant, MerchantDirectory } from '../../ports/merchants';
import { key, withoutStorageAttributes } from './keys';
import { conditionalPut, lookupItems } from './client';

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
    const { items } = await lookupItems(this.db, this.tableName, key.merchantsIndex, { limit });
    return items.map((i) => withoutStorageAttributes<Merchant>(i));
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

  create(merchant: Merchant): Promise<boolean> {
    return conditionalPut(this.db, { TableName: this.tableName, Item: this.toItem(merchant), ConditionExpression: 'attribute_not_exists(pk)' });
  }
}
