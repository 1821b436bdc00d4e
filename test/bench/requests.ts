import { signFields } from '../../lambdas/domain/hash';

/** A merchant as the merchant API sees it: the key it sends and the password it signs with. */
export interface MerchantCredentials {
  readonly merchant_key: string;
  readonly password: string;
}

/** A valid, signed POST /api/v1/session body for a unique order number. */
export function createSessionBody(merchant: MerchantCredentials, orderNumber: string): Record<string, unknown> {
  const order = { number: orderNumber, amount: '10.00', currency: 'USD', description: 'Benchmark order' };
  return {
    merchant_key: merchant.merchant_key,
    operation: 'purchase',
    success_url: 'https://shop.example/success',
    cancel_url: 'https://shop.example/cancel',
    hash: signFields([order.number, order.amount, order.currency, order.description], merchant.password),
    order,
    customer: { name: 'John Doe', email: 'john@example.com' },
    billing_address: { country: 'US' },
  };
}

/** A valid, signed POST /api/v1/payment/status body, by payment_id or by order_id. */
export function paymentStatusBody(merchant: MerchantCredentials, by: { payment_id: string } | { order_id: string }): Record<string, unknown> {
  const id = 'payment_id' in by ? by.payment_id : by.order_id;
  return { merchant_key: merchant.merchant_key, ...by, hash: signFields([id], merchant.password) };
}
