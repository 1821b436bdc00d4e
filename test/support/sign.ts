import { signFields, type UpperCasing } from '../../lambdas/domain/hash';

/**
 * Signs request bodies the way merchant client libraries do (protocol.md §1): the fields each
 * message covers, exactly as sent, then the password.
 */
type Body = Record<string, unknown>;

const text = (value: unknown): string => (value === undefined || value === null ? '' : String(value));

const order = (body: Body): Body => (body.order !== null && typeof body.order === 'object' ? (body.order as Body) : {});

/** Recurring: no currency (protocol.md §1). */
const recurringFields = (b: Body): string[] =>
  [b.recurring_init_trans_id, b.recurring_token, order(b).number, order(b).amount, order(b).description].map(text);

/** The signed fields of each merchant API path. */
export const SIGNED_FIELDS: Readonly<Record<string, (body: Body) => string[]>> = {
  '/api/v1/session': (b) => [order(b).number, order(b).amount, order(b).currency, order(b).description].map(text),
  '/api/v1/payment/status': (b) => [text(b.payment_id ?? b.order_id)],
  '/api/v1/payment/recurring': (b) => recurringFields(b),
  // The Cyrillic "с" spelling of the same path, as clients send it (percent-encoded).
  '/api/v1/payment/re%D1%81urring': (b) => recurringFields(b),
  '/api/v1/payment/void': (b) => [text(b.payment_id)],
  '/api/v1/payment/retry': (b) => [text(b.payment_id)],
  '/api/v1/payment/refund': (b) => [text(b.payment_id), text(b.amount)],
  '/api/v1/payment/capture': (b) => [text(b.payment_id), text(b.amount)],
};

export function hashFor(path: string, body: Body, password: string, casing: UpperCasing = 'ascii'): string {
  const fields = SIGNED_FIELDS[path];
  if (!fields) throw new Error(`no signing rule for ${path}`);
  return signFields(fields(body), password, casing);
}

/** A copy of the body with its hash set. */
export function signBody<T extends Body>(path: string, body: T, password: string, casing: UpperCasing = 'ascii'): T & { hash: string } {
  return { ...body, hash: hashFor(path, body, password, casing) };
}
