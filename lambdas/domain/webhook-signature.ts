/**
 * The callback signature the protocol lacks (the legacy `hash` covers the order, not the outcome,
 * and the customer holds it): `X-Checkout-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 * `<t>.<raw body>` with the merchant's webhook secret, which never leaves the server side. During a
 * rotation the previous secret signs too (a second `v1=`), so receivers can switch without losing
 * callbacks. Receivers reject a `t` older than five minutes (a replayed callback).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Checkout-Signature';
/** How old a signature may be when it is checked. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;
/** How long the previous secret keeps signing after a rotation. */
export const WEBHOOK_ROTATION_GRACE_MS = 24 * 3600_000;

export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

const mac = (secret: string, t: number, body: string): string => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');

/** The header value for a body sent at `at`, signed by each secret given (current first). */
export function signatureHeader(body: string, at: Date, secrets: readonly string[]): string {
  const t = Math.floor(at.getTime() / 1000);
  return [`t=${t}`, ...secrets.map((s) => `v1=${mac(s, t, body)}`)].join(',');
}

export type SignatureCheck = { readonly ok: true } | { readonly ok: false; readonly why: 'missing' | 'malformed' | 'stale' | 'mismatch' };

/** What a receiver does with the header: any v1 made with its secret over this exact body, and fresh. */
export function verifySignatureHeader(header: string | undefined, body: string, secret: string, now: Date, toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS): SignatureCheck {
  if (!header) return { ok: false, why: 'missing' };
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  const given = parts.filter(([k, v]) => k === 'v1' && v && /^[0-9a-f]{64}$/.test(v)).map(([, v]) => v!);
  if (!Number.isInteger(t) || !given.length) return { ok: false, why: 'malformed' };
  if (Math.abs(now.getTime() / 1000 - t) > toleranceSeconds) return { ok: false, why: 'stale' };
  const expected = Buffer.from(mac(secret, t, body), 'hex');
  return given.some((v) => timingSafeEqual(Buffer.from(v, 'hex'), expected)) ? { ok: true } : { ok: false, why: 'mismatch' };
}
