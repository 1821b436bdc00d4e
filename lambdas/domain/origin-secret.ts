import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The header CloudFront adds to every request it forwards to the API (lib/edge-stack.ts), and the
 * functions require on a stage with an edge: a request without it reached the origin name directly,
 * past AWS WAF. CloudFront replaces a header of this name a viewer sends.
 */
export const ORIGIN_SECRET_HEADER = 'x-origin-verify';

/**
 * The secret holds two slots. CloudFront sends one of them (the stage file's
 * `edge.originSecretSlot`); the functions accept either, so a rotation writes a new value into the
 * slot CloudFront does not send, and then switches CloudFront to it: the value it sent until then
 * stays accepted (docs/operations.md, "Rotating secrets").
 */
export const ORIGIN_SECRET_SLOTS = ['a', 'b'] as const;
export type OriginSecretSlot = (typeof ORIGIN_SECRET_SLOTS)[number];

/** Shorter values are refused: a guessable header would not keep anyone out. */
export const ORIGIN_SECRET_MIN_LENGTH = 32;

/** The values a request may carry: digests, so every comparison is of equal length. */
export interface OriginSecretValues {
  readonly digests: readonly Buffer[];
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * The secret's JSON (`{"a":"…","b":"…"}`): every slot of at least ORIGIN_SECRET_MIN_LENGTH
 * characters. An empty slot (the second, until the first rotation) accepts nothing; a secret with
 * no usable slot is an error, never "accept everything".
 */
export function parseOriginSecret(secretString: string): OriginSecretValues {
  let parsed: unknown;
  try {
    parsed = JSON.parse(secretString);
  } catch {
    throw new Error('the origin secret must be JSON: {"a":"…","b":"…"}');
  }
  if (parsed === null || typeof parsed !== 'object') throw new Error('the origin secret must be JSON: {"a":"…","b":"…"}');
  const record = parsed as Record<string, unknown>;
  const values = ORIGIN_SECRET_SLOTS.map((slot) => record[slot]).filter((v): v is string => typeof v === 'string' && v !== '');
  if (values.some((v) => v.length < ORIGIN_SECRET_MIN_LENGTH)) throw new Error(`every slot of the origin secret must hold at least ${ORIGIN_SECRET_MIN_LENGTH} characters`);
  if (values.length === 0) throw new Error('the origin secret has no value in slot a or b');
  return { digests: values.map(digest) };
}

/**
 * Whether a request's header carries one of the values, compared in constant time (over digests,
 * so neither the value's length nor its first differing character shows in the timing). Every
 * slot is compared, matched or not.
 */
export function carriesOriginSecret(header: string | undefined, values: OriginSecretValues): boolean {
  if (header === undefined || header === '') return false;
  const given = digest(header);
  let matched = false;
  for (const expected of values.digests) matched = timingSafeEqual(given, expected) || matched;
  return matched;
}
