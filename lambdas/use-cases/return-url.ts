import { signFields } from '../domain/hash';
import type { Payment } from '../domain/payment';
import type { Merchant, MerchantSecrets } from '../ports/merchants';

/**
 * The merchant's URL, with payment_id, trans_id, order_id and hash appended when the merchant's
 * return parameters are on (protocol.md §1, §4).
 */
export async function returnUrl(deps: { readonly secrets: MerchantSecrets }, payment: Payment, merchant: Merchant, base: string): Promise<string> {
  if (!merchant.returnParams) return base;
  const password = await deps.secrets.passwordOf(payment.merchantKey);
  if (!password) return base;
  const last = [...payment.transactions].reverse().find((t) => t.type === 'sale' || t.type === '3ds' || t.type === 'redirect');
  const url = new URL(base);
  url.searchParams.set('payment_id', payment.paymentId);
  url.searchParams.set('trans_id', last?.transId ?? '');
  url.searchParams.set('order_id', payment.order.number);
  url.searchParams.set('hash', returnHash(payment, password));
  return url.toString();
}

/** The outgoing signature of return parameters and callbacks. */
export const returnHash = (payment: Payment, password: string): string =>
  signFields([payment.paymentId, payment.order.number, payment.order.amount, payment.order.currency, payment.order.description], password);

