import type { Payment } from '../../lambdas/domain/payment';

/**
 * A payment of 25.00 USD on a checkout link, unpaid, made at `createdAt` and expiring `expiresInMs`
 * later: the start of the domain rules' table tests.
 */
export function linkPayment(createdAt: Date, overrides: Partial<Payment> = {}, expiresInMs = 60 * 60_000): Payment {
  return {
    paymentId: 'p-1',
    merchantKey: 'shop',
    status: 'prepare',
    order: { number: 'order-1', amount: '25.00', amountMinor: 2500, currency: 'USD', description: 'Gift box' },
    customer: { name: 'John Doe' },
    createdAt: createdAt.toISOString(),
    updatedAt: createdAt.toISOString(),
    transactions: [],
    checkout: {
      secretHash: 'x',
      operation: 'purchase',
      successUrl: 'https://shop.example/success',
      reqToken: false,
      recurringInit: false,
      expiresAt: new Date(createdAt.getTime() + expiresInMs).toISOString(),
    },
    ...overrides,
  };
}

/**
 * A payment of 10.00 USD settled at `settledAt`, voidable for an hour, with no refund or operation
 * in flight: the start of the money rules' tests.
 */
export function settledPayment(settledAt: Date, overrides: Partial<Payment> = {}): Payment {
  return {
    paymentId: 'p-1',
    merchantKey: 'shop',
    status: 'settled',
    order: { number: 'o-1', amount: '10.00', amountMinor: 1000, currency: 'USD', description: 'Order' },
    customer: {},
    createdAt: settledAt.toISOString(),
    updatedAt: settledAt.toISOString(),
    transactions: [{ transId: 'sale-1', type: 'sale', status: 'success', amountMinor: 1000, at: settledAt.toISOString(), orderStatus: 'settled' }],
    authorization: { idempotencyKey: 'p-1.1', acquirerRef: 'ref-1' },
    voidableUntil: new Date(settledAt.getTime() + 60 * 60_000).toISOString(),
    ...overrides,
  };
}
