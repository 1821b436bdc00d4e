import { signFields, type UpperCasing } from '../../lambdas/domain/hash';

/**
 * Signs request bodies the way merchant client libraries do (protocol.md §1): the fields each
 * message covers, exactly as sent, then the password.
 */
type Body = Record<string, unknown>;

const text = (value: unknown): string => (value === undefined || value === null ? '' : String(value));

const order = (body: Body): Body => (body.order !== null && typeof body.order === 'object' ? (body.order as Body) : {});

/** The signed fields of each merchant API path. */
export const SIGNED_FIELDS: Readonly<Record<string, (body: Body) => string[]>> = {
  '/api/v1/session': (b) => [order(b).number, order(b).amount, order(b).currency, order(b).description].map(text),
  '/api/v1/payment/status': (b) => [text(b.payment_id ?? b.order_id)],
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
