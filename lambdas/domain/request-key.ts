import { createHash } from 'node:crypto';
import { ERRORS } from './errors';

/**
 * The optional `Idempotency-Key` header of merchant POSTs (beyond the platform's protocol, as the
 * largest providers offer it): the same key with the same body is one request, whose operation
 * keeps one transaction id; the same key with another body is refused. Keys are the merchant's
 * own, so they are scoped by merchant.
 */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const IDEMPOTENCY_KEY_MAX = 255;
/** How long a key is remembered. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3600_000;
/**
 * How long the run that claimed a key holds it: a replay arriving meanwhile answers "in progress"
 * (208012) instead of running the operation a second time. Longer than any merchant function may
 * run (29 s at most, lib/routes.ts; API Gateway gives up at 30 s), so a claim still held belongs to
 * a run that may still answer, and one past it to a run that died (crash, timeout) before
 * remembering its answer: the next replay runs the operation again under the same transaction id
 * and the use case finds what the dead run did.
 */
export const REQUEST_KEY_LEASE_MS = 30_000;

/** A merchant request's answer as first given, kept on its key so a replay answers it again byte for byte. */
export interface RememberedAnswer {
  readonly statusCode: number;
  /** The JSON body as sent (a session's with its link token left out, see the session handler). */
  readonly body: string;
}

/**
 * Whether a refusal is the request's answer for good: every 4xx of the catalog except the ones
 * that invite the same request again a little later (208012 "another operation is in progress",
 * any 429 "too many requests"), which must not be remembered; 5xx answers are failures of ours,
 * never remembered either.
 */
export const remembersRefusal = (error: { readonly code: number; readonly httpStatus: number }): boolean =>
  error.httpStatus >= 400 && error.httpStatus < 500 && error.httpStatus !== 429 && error.code !== ERRORS.OPERATION_IN_PROGRESS.code;

const PRINTABLE_ASCII = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

export const isValidIdempotencyKey = (key: string): boolean => key.length <= IDEMPOTENCY_KEY_MAX && PRINTABLE_ASCII.test(key);

export interface RequestKey {
  /** sha256 of merchant and key: what is stored (never the merchant's key itself). */
  readonly id: string;
  /** sha256 of the request body in canonical form (keys sorted, without `hash`). */
  readonly fingerprint: string;
  /** The transaction (or payment) id every run of this request uses: a UUID derived from `id`. */
  readonly transId: string;
}

/** A UUID (RFC 9562 version 8, custom) made from a hex digest. */
export function uuidFromDigest(h: string): string {
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v as object).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export function requestKeyOf(merchantKey: string, route: string, key: string, body: Record<string, unknown>): RequestKey {
  const id = createHash('sha256').update(`${merchantKey}\n${key}`).digest('hex');
  const { hash: _hash, ...content } = body;
  const fingerprint = createHash('sha256').update(`${route}\n${canonicalJson(content)}`).digest('hex');
  return { id, fingerprint, transId: uuidFromDigest(createHash('sha256').update(`transaction\n${id}`).digest('hex')) };
}
