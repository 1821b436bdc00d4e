import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Merchant, MerchantDirectory } from '../../ports/merchants';
import { GSI1, key, withoutStorageAttributes } from './keys';
import { isConditionFailure } from './client';

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
        IndexName: GSI1,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.merchantsIndex },
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((i) => withoutStorageAttributes<Merchant>(i));
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
