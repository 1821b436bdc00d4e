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
