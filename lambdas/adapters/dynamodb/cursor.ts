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

let sealKey: Buffer | undefined;

/**
 * The key cursors handed to operators are sealed with (HMAC-SHA256), derived from a secret of the
 * stack (CURSOR_SECRET; the local runner's comes from its data directory): set once at cold start.
 */
export function configureCursorSeal(secret: string): void {
  sealKey = createHmac('sha256', secret).update('checkout page cursor v1').digest();
}

const tagOf = (body: string): string => {
  if (!sealKey) throw new Error('cursor seal not configured (configureCursorSeal)');
  return createHmac('sha256', sealKey).update(body).digest('base64url').slice(0, 22);
};

/**
 * A position sealed for a client to hand back: what it holds (a running total, a store key) is
 * trusted on return only if the tag matches, so a forged or edited cursor is refused, never read.
 */
export function sealCursor(position: unknown): string {
  const body = encodeCursor(position);
  return `${body}.${tagOf(body)}`;
}

/** The position of a cursor sealCursor made; CursorRefused for anything else. */
export function openCursor(cursor: string): unknown {
  const [body, tag, extra] = cursor.split('.');
  if (!body || !tag || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(body)) throw new CursorRefused();
  const expected = Buffer.from(tagOf(body));
  const given = Buffer.from(tag);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new CursorRefused();
  try {
    const position = decodeCursor<unknown>(body);
    if (position === null || typeof position !== 'object') throw new CursorRefused();
    return position;
  } catch {
    throw new CursorRefused();
  }
}
