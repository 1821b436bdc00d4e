import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Merchant, MerchantDirectory } from '../../ports/merchants';
import { key, withoutStorageAttributes } from './keys';

export class DynamoMerchantDirectory implements MerchantDirectory {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async find(merchantKey: string): Promise<Merchant | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.merchant(merchantKey) }));
    return out.Item ? withoutStorageAttributes<Merchant>(out.Item) : undefined;
  }

  async save(merchant: Merchant): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...key.merchant(merchant.merchantKey), kind: 'merchant', ...merchant },
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  }

  async create(merchant: Merchant): Promise<boolean> {
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { ...key.merchant(merchant.merchantKey), kind: 'merchant', ...merchant },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (e) {
      if ((e as Error).name === 'ConditionalCheckFailedException') return false;
      throw e;
    }
  }
}
