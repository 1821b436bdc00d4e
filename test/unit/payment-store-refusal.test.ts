import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoPaymentStore, paymentItems } from '../../lambdas/adapters/dynamodb/payment-store';
import { SHARDS } from '../../lambdas/adapters/dynamodb/keys';
import type { Payment } from '../../lambdas/domain/payment';

/**
 * On AWS a refused conditional write answers with the item as it was (ReturnValuesOnConditionCheckFailure
 * ALL_OLD, marshalled on the error): the store reads it from there instead of reading the payment
 * again. The local engine does not return it (its path is covered by test/contract/), so this one is
 * pinned here against a client that answers as DynamoDB does.
 */
const payment: Payment = {
  paymentId: 'p-old',
  merchantKey: 'shop',
  status: 'settled',
  order: { number: 'o-1', amount: '10.00', amountMinor: 1000, currency: 'USD', description: 'Order' },
  customer: {},
  createdAt: '2031-01-01T00:00:00.000Z',
  updatedAt: '2031-01-01T00:00:00.000Z',
  transactions: [],
  refunds: {},
  watching: {},
};

test('a refused write answers with the payment the error carries, without a read', async () => {
  const { state, details } = paymentItems(payment, SHARDS);
  const sent: string[] = [];
  const db = {
    send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      sent.push(command.constructor.name);
      if (command.constructor.name === 'UpdateCommand') {
        expect(command.input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
        throw Object.assign(new Error('The conditional request failed'), {
          name: 'ConditionalCheckFailedException',
          Item: marshall({ ...state, status: 'void', operationIds: new Set(['v-1']) }, { removeUndefinedValues: true }),
        });
      }
      if (command.constructor.name === 'GetCommand') return { Item: details };
      throw new Error(`unexpected ${command.constructor.name}`);
    },
  } as unknown as DynamoDBDocumentClient;
  const store = new DynamoPaymentStore(db, 'table');
  const result = await store.apply(payment.paymentId, { guard: { statusIn: ['settled'] }, change: { set: { status: 'refund', updatedAt: '2031-01-01T00:01:00.000Z' } } });
  expect(result).toEqual({ applied: false, payment: { ...payment, status: 'void' } });
  // The details are read once (they never change); the payment's state is not read again.
  expect(sent).toEqual(['UpdateCommand', 'GetCommand']);
});
