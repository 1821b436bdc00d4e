import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Opaque page cursors: whatever the store needs to resume a query, as base64url JSON. A cursor that
 * is not one of ours fails to decode (SyntaxError) or names a key the query refuses
 * (ValidationException); callers turn either into a 400.
 */
export const encodeCursor = (position: unknown): string => Buffer.from(JSON.stringify(position)).toString('base64url');

export const decodeCursor = <T = Record<string, unknown>>(cursor: string): T => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as T;

/** A cursor that was not sealed by this stack, or was changed since: the caller answers 400. */
export class CursorRefused extends Error {
  constructor() {
    super('cursor refused');
    this.name = 'CursorRefused';
  }
}

const keyOf = (secret: string): Buffer => createHmac('sha256', secret).update('checkout page cursor v1').digest();

/** Where the key comes from: a value of the configuration, or a secret read when first needed. */
type KeySource =
  | { readonly kind: 'fixed'; readonly key: Buffer }
  | {
      readonly kind: 'secret';
      readonly read: () => Promise<string>;
      readonly ttlMs: number;
      readonly now: () => number;
      /** The key in use, and the one before it (cursors sealed just before a rotation still open). */
      keys?: { readonly current: Buffer; readonly previous?: Buffer; readonly until: number };
    };

let source: KeySource | undefined;

/**
 * The key cursors handed to operators are sealed with (HMAC-SHA256), derived from a secret of the
 * stack: set once at cold start. The local runner's comes from its data directory (CURSOR_SECRET).
 */
export function configureCursorSeal(secret: string): void {
  source = { kind: 'fixed', key: keyOf(secret) };
}

/**
 * On AWS: the key is a generated Secrets Manager secret (CURSOR_SECRET_ID), read by loadCursorSeal
 * before a request uses cursors and kept for `ttlMs`, as the other secrets are cached, so a rotation
 * is picked up without a deploy; the key before a rotation still opens the cursors it sealed.
 */
export function configureCursorSealFromSecret(read: () => Promise<string>, ttlMs: number, now: () => number): void {
  source = { kind: 'secret', read, ttlMs, now };
}

/** Forgets the key source (tests). */
export function resetCursorSeal(): void {
  source = undefined;
}

/** Reads the cursor key if it comes from a secret not read yet, or read longer ago than its cache time; otherwise nothing. */
export async function loadCursorSeal(): Promise<void> {
  if (source?.kind !== 'secret') return;
  const now = source.now();
  if (source.keys && source.keys.until > now) return;
  const value = await source.read();
  if (value.length < 32) throw new Error('the cursor secret must hold at least 32 characters');
  const current = keyOf(value);
  const before = source.keys?.current;
  const previous = before && !before.equals(current) ? before : source.keys?.previous;
  source.keys = { current, ...(previous ? { previous } : {}), until: now + source.ttlMs };
}

/** The keys a tag may be made with, the sealing one first. */
function sealKeys(): Buffer[] {
  if (!source) throw new Error('cursor seal not configured (CURSOR_SECRET or CURSOR_SECRET_ID)');
  if (source.kind === 'fixed') return [source.key];
  if (!source.keys) throw new Error('cursor key not read yet (loadCursorSeal)');
  return [source.keys.current, ...(source.keys.previous ? [source.keys.previous] : [])];
}

const tagWith = (key: Buffer, body: string): string => createHmac('sha256', key).update(body).digest('base64url').slice(0, 22);

/**
 * A position sealed for a client to hand back: what it holds (a running total, a store key) is
 * trusted on return only if the tag matches, so a forged or edited cursor is refused, never read.
 */
export function sealCursor(position: unknown): string {
  const body = encodeCursor(position);
  return `${body}.${tagWith(sealKeys()[0]!, body)}`;
}

/** The position of a cursor sealCursor made; CursorRefused for anything else. */
export function openCursor(cursor: string): unknown {
  const [body, tag, extra] = cursor.split('.');
  if (!body || !tag || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(body)) throw new CursorRefused();
  const given = Buffer.from(tag);
  const sealedByUs = sealKeys().some((key) => {
    const expected = Buffer.from(tagWith(key, body));
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!sealedByUs) throw new CursorRefused();
  try {
    const position = decodeCursor<unknown>(body);
    if (position === null || typeof position !== 'object') throw new CursorRefused();
    return position;
  } catch {
    throw new CursorRefused();
  }
}
