import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The protocol's signature: sha1_hex(md5_hex(UPPER(concat(fields) + password))) (protocol.md §1).
 * Outgoing messages are signed with ASCII-only upper-casing, as the platform does; incoming ones
 * are accepted in either casing because some client libraries upper-case every Unicode letter.
 */
export type UpperCasing = 'ascii' | 'unicode';

const asciiUpper = (s: string): string => s.replace(/[a-z]+/g, (m) => m.toUpperCase());

export function signFields(fields: readonly string[], password: string, casing: UpperCasing = 'ascii'): string {
  const joined = fields.join('') + password;
  const upper = casing === 'ascii' ? asciiUpper(joined) : joined.toUpperCase();
  const md5Hex = createHash('md5').update(upper, 'utf8').digest('hex');
  return createHash('sha1').update(md5Hex, 'utf8').digest('hex');
}

const HEX40 = /^[0-9a-fA-F]{40}$/;

/** Constant-time check of a received hash; malformed input is simply "not valid". */
export function verifyFields(received: unknown, fields: readonly string[], password: string): boolean {
  if (typeof received !== 'string' || !HEX40.test(received)) return false;
  const given = Buffer.from(received.toLowerCase(), 'latin1');
  let ok = false;
  for (const casing of ['ascii', 'unicode'] as const) {
    const expected = Buffer.from(signFields(fields, password, casing), 'latin1');
    // Both casings are always compared so the time does not depend on which one matched.
    ok = timingSafeEqual(given, expected) || ok;
  }
  return ok;
}
