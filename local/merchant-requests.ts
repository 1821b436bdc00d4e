import { callbackHash } from '../lambdas/domain/callback';
import { signFields } from '../lambdas/domain/hash';
import { currencyExponent } from '../lambdas/domain/money';
import type { Payment } from '../lambdas/domain/payment';
import { amountHashFields, paymentIdHashFields, type AmountOperationRequest, type PaymentIdRequest } from '../lambdas/protocol/merchant/operations';
import { createSessionHashFields, type CreateSessionRequest } from '../lambdas/protocol/merchant/session';
import { paymentStatusHashFields, type PaymentStatusRequest } from '../lambdas/protocol/merchant/status';
import { recurringHashFields, type RecurringRequest } from '../lambdas/use-cases/recurring-payment';

/**
 * Signed merchant requests as a merchant's own code makes them (protocol.md §1), for the merchant
 * helper commands (local/merchant-api-command.ts) and the runner's result page: each message signed
 * with the fields the service itself checks (the handlers' *HashFields), never a second copy of the
 * formula.
 */
export interface MerchantCredentials {
  readonly merchant_key: string;
  readonly password: string;
}

/** The messages whose hash `sign` computes, with the fields each signs, in order. */
export const SIGNED_MESSAGES = {
  session: ['order.number', 'order.amount', 'order.currency', 'order.description'],
  recurring: ['recurring_init_trans_id', 'recurring_token', 'order.number', 'order.amount', 'order.description'],
  status: ['payment_id (or order_id)'],
  void: ['payment_id'],
  retry: ['payment_id'],
  refund: ['payment_id', 'amount'],
  capture: ['payment_id', 'amount'],
  callback: ['payment_id', 'order.number', 'order.amount', 'order.currency', 'order.description'],
} as const;
export type SignedMessage = keyof typeof SIGNED_MESSAGES;
export const isSignedMessage = (name: string): name is SignedMessage => Object.hasOwn(SIGNED_MESSAGES, name);

/** The hash of a message, from its signed fields in the order SIGNED_MESSAGES lists them. */
export function signMessage(message: SignedMessage, values: readonly string[], password: string): string {
  const [a = '', b = '', c = '', d = '', e = ''] = values;
  const first = (renderings: string[][]) => signFields(renderings[0] ?? [], password);
  switch (message) {
    case 'session':
      return first(createSessionHashFields({ order: { number: a, amount: b, currency: c, description: d } } as unknown as CreateSessionRequest));
    case 'recurring':
      return first(recurringHashFields({ recurring_init_trans_id: a, recurring_token: b, order: { number: c, amount: d, description: e } } as unknown as RecurringRequest));
    case 'status':
      return first(paymentStatusHashFields({ payment_id: a } as PaymentStatusRequest));
    case 'void':
    case 'retry':
      return first(paymentIdHashFields({ payment_id: a } as PaymentIdRequest));
    case 'refund':
    case 'capture':
      return first(amountHashFields({ payment_id: a, amount: b } as AmountOperationRequest));
    case 'callback':
      return callbackHash({ paymentId: a, order: { number: b, amount: c, currency: d, description: e } } as unknown as Payment, password);
  }
}

/**
 * Why "This value is not valid." may be the answer to an amount, which the protocol's wording does
 * not say (docs/errors.md): an amount carries exactly its currency's decimals. Undefined when the
 * amount is written that way (or the currency is unknown).
 */
export function amountDecimalsHint(amount: string, currency: string, field = 'order.amount'): string | undefined {
  const exponent = currencyExponent(currency.toUpperCase());
  if (exponent === undefined || !/^\d+(\.\d*)?$/.test(amount)) return undefined;
  const decimals = amount.split('.')[1]?.length ?? 0;
  if (decimals === exponent && !(exponent === 0 && amount.includes('.'))) return undefined;
  const example = exponent === 0 ? '1500' : `10.${'0'.repeat(exponent)}`;
  return `${currency.toUpperCase()} amounts take ${exponent === 0 ? 'no decimals' : `exactly ${exponent} decimals`} (e.g. "${example}"); "${amount}" is answered "${field}: This value is not valid." (docs/errors.md)`;
}

/** The requests the helper sends, by operation: path and the body's fields besides merchant_key and hash. */
const PATHS = { status: '/api/v1/payment/status', refund: '/api/v1/payment/refund', void: '/api/v1/payment/void' } as const;
export type SentOperation = keyof typeof PATHS;

/** The runner (or stage) could not be reached at all: nothing answered. */
export class RunnerUnreachable extends Error {}

/**
 * Signs and POSTs one request: status (by payment_id or order_id), refund (payment_id, amount) or
 * void (payment_id). Resolves with the HTTP status and the JSON answered.
 */
export async function merchantRequest(
  baseUrl: string,
  merchant: MerchantCredentials,
  operation: SentOperation,
  fields: { payment_id: string; amount?: string } | { order_id: string },
  timeoutMs = 30_000,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const signed = 'order_id' in fields ? [fields.order_id] : operation === 'refund' ? [fields.payment_id, fields.amount ?? ''] : [fields.payment_id];
  const hash = signMessage(operation, signed, merchant.password);
  const url = `${baseUrl.replace(/\/+$/, '')}${PATHS[operation]}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ merchant_key: merchant.merchant_key, ...fields, hash }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
    throw new RunnerUnreachable(`nothing answered at ${url} (${cause})`);
  }
  const text = await res.text();
  try {
    return { status: res.status, json: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: res.status, json: { answer: text.slice(0, 500) } };
  }
}
