import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A checkout link token is the payment id and a random secret, base64url-encoded: the page finds the
 * payment with one read and proves the holder knows the secret. Only the secret's hash is stored.
 */
const UUID_BYTES = 16;
const SECRET_BYTES = 18;

export function encodeLinkToken(paymentId: string, secret: Buffer): string {
  if (secret.length !== SECRET_BYTES) throw new RangeError('link secret must be 18 bytes');
  return Buffer.concat([Buffer.from(paymentId.replace(/-/g, ''), 'hex'), secret]).toString('base64url');
}

export const hashLinkSecret = (secret: Buffer): string => createHash('sha256').update(secret).digest('hex');

export interface DecodedLinkToken {
  readonly paymentId: string;
  readonly secret: Buffer;
}

export function decodeLinkToken(token: string): DecodedLinkToken | undefined {
  if (!/^[A-Za-z0-9_-]{45,46}$/.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length !== UUID_BYTES + SECRET_BYTES) return undefined;
  const hex = raw.subarray(0, UUID_BYTES).toString('hex');
  const paymentId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return { paymentId, secret: raw.subarray(UUID_BYTES) };
}

export function linkSecretMatches(secret: Buffer, secretHash: string): boolean {
  const expected = Buffer.from(secretHash, 'hex');
  const actual = createHash('sha256').update(secret).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
