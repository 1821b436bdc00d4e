import { GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { epochSeconds, type Payment } from '../../domain/payment';
import type { PaymentStore } from '../../ports/payments';
import { GSI1, TTL_ATTRIBUTE, key, withoutStorageAttributes } from './keys';

/** Payments are one item each; every change of one is a single conditional write. */
export class DynamoPaymentStore implements PaymentStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  static toItem(payment: Payment): Record<string, unknown> {
    return {
      ...key.payment(payment.paymentId),
      kind: 'payment',
      ...payment,
      gsi1pk: key.orderIndex(payment.merchantKey, payment.order.number),
      gsi1sk: `${payment.createdAt}#${payment.paymentId}`,
    };
  }

  async createPayment(payment: Payment): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...DynamoPaymentStore.toItem(payment), [TTL_ATTRIBUTE]: epochSeconds(new Date(payment.checkout.expiresAt)) },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  async findPayment(paymentId: string): Promise<Payment | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.payment(paymentId), ConsistentRead: true }));
    return out.Item ? withoutStorageAttributes<Payment>(out.Item) : undefined;
  }

  async findLatestPaymentByOrder(merchantKey: string, orderNumber: string): Promise<Payment | undefined> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        IndexName: GSI1,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': key.orderIndex(merchantKey, orderNumber) },
        ScanIndexForward: false,
        Limit: 1,
      }),
    );
    const item = out.Items?.[0];
    return item ? withoutStorageAttributes<Payment>(item) : undefined;
  }
}
