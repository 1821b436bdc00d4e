import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The protocol's signature: sha1_hex(md5_hex(UPPER(concat(fields) + password))) (protocol.md §1).
 * Outgoing messages are signed with ASCII-only upper-casing, as the platform does; incoming ones
 * are accepted in either casing because some client libraries upper-case every Unicode letter —
 * the Unicode one only for texts it maps one to one (see unicodeUpperIsOneToOne).
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

/**
 * Whether Unicode upper-casing maps this text one to one, up to case: every character is its own
 * upper case, or upper-cases to a single character that lower-cases back to it, and is not a
 * compatibility character. Otherwise different texts sign alike (`Straße`/`Strasse` → `STRASSE`,
 * `ﬁ`/`fi`, `ſ`/`s`, `ı`/`i`), and the Unicode rendering of a hash is not accepted for it.
 */
export function unicodeUpperIsOneToOne(text: string): boolean {
  for (const c of text) {
    if (c.charCodeAt(0) < 0x80) continue;
    const upper = c.toUpperCase();
    if (upper === c) {
      if (c.normalize('NFKC') !== c) return false;
      continue;
    }
    if ([...upper].length !== 1 || upper.toLowerCase() !== c || c.normalize('NFKC') !== c) return false;
  }
  return true;
}

/** Constant-time check of a received hash; malformed input is simply "not valid". */
export function verifyFields(received: unknown, fields: readonly string[], password: string): boolean {
  if (typeof received !== 'string' || !HEX40.test(received)) return false;
  const given = Buffer.from(received.toLowerCase(), 'latin1');
  const unicodeAccepted = unicodeUpperIsOneToOne(fields.join('') + password);
  let ok = false;
  for (const casing of ['ascii', 'unicode'] as const) {
    const expected = Buffer.from(signFields(fields, password, casing), 'latin1');
    // Both casings are always compared so the time does not depend on which one matched.
    const matched = timingSafeEqual(given, expected);
    ok = (matched && (casing === 'ascii' || unicodeAccepted)) || ok;
  }
  return ok;
}
