import fc from 'fast-check';
import vectorsFile from '../fixtures/hash-vectors.json';
import { signFields, unicodeUpperIsOneToOne, verifyFields } from '../../lambdas/domain/hash';

/**
 * Known-answer vectors of the platform's signature (protocol.md §1), copied into the fixtures so
 * the project checks itself without the spec folder beside it.
 */
interface Vector {
  name: string;
  fields: string[];
  password: string;
  hash: string;
}
const vectors = vectorsFile.vectors as Vector[];
/** The vector signed by a client library that upper-cases every Unicode letter. */
const isUnicodeVector = (v: Vector) => /full Unicode upper-casing/.test(v.name);

describe('signature known-answer vectors', () => {
  it('the fixture holds every vector of the protocol, all with the documented password', () => {
    expect(vectors).toHaveLength(10);
    expect(new Set(vectors.map((v) => v.password))).toEqual(new Set(['13a4822c5907ed235f3a068c76184fc3']));
  });

  it.each(vectors.map((v) => [v.name, v] as const))('%s: signs to the vector', (_name, v) => {
    expect(signFields(v.fields, v.password, isUnicodeVector(v) ? 'unicode' : 'ascii')).toBe(v.hash);
  });

  it.each(vectors.map((v) => [v.name, v] as const))('%s: the vector is accepted', (_name, v) => {
    expect(verifyFields(v.hash, v.fields, v.password)).toBe(true);
  });

  it.each(vectors.map((v) => [v.name, v] as const))('%s: one changed field makes it not valid', (_name, v) => {
    const changed = [...v.fields];
    changed[0] = `${changed[0]}x`;
    expect(verifyFields(v.hash, changed, v.password)).toBe(false);
    expect(verifyFields(v.hash, v.fields, `${v.password}0`)).toBe(false);
  });
});

describe('upper-casing: ASCII-only when we sign, either form when we verify', () => {
  const ascii = vectors.find((v) => /ASCII-only upper-casing/.test(v.name)) as Vector;
  const unicode = vectors.find(isUnicodeVector) as Vector;

  it('the two non-ASCII vectors sign the same fields differently', () => {
    expect(ascii.fields).toEqual(unicode.fields);
    expect(ascii.hash).not.toBe(unicode.hash);
  });

  it('outgoing messages are signed with ASCII-only upper-casing by default', () => {
    expect(signFields(ascii.fields, ascii.password)).toBe(ascii.hash);
  });

  it('an incoming hash made with either casing is accepted', () => {
    expect(verifyFields(ascii.hash, ascii.fields, ascii.password)).toBe(true);
    expect(verifyFields(unicode.hash, unicode.fields, unicode.password)).toBe(true);
  });

  it('for pure ASCII input both casings agree', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary-ascii', maxLength: 20 }), { maxLength: 5 }), fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }), (fields, password) => {
        expect(signFields(fields, password, 'unicode')).toBe(signFields(fields, password, 'ascii'));
      }),
    );
  });

  it('the signature is case-insensitive in its input: it is computed over the upper-cased text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-ascii', maxLength: 30 }), (s) => {
        expect(signFields([s.toLowerCase()], 'pw')).toBe(signFields([s.toUpperCase()], 'pw'));
      }),
    );
  });
});

describe('verifyFields never throws and accepts only a 40-digit hex string', () => {
  const v = vectors[0] as Vector;

  it('accepts the hash in upper-case hex', () => {
    expect(verifyFields(v.hash.toUpperCase(), v.fields, v.password)).toBe(true);
  });

  it('accepts the hash in mixed-case hex', () => {
    const mixed = [...v.hash].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
    expect(verifyFields(mixed, v.fields, v.password)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['39 digits', v.hash.slice(0, 39)],
    ['41 digits', `${v.hash}0`],
    ['the md5 stage (32 digits)', v.hash.slice(0, 32)],
    ['non-hex of the right length', `${v.hash.slice(0, 39)}g`],
    ['surrounding whitespace', ` ${v.hash} `],
    ['a trailing newline', `${v.hash}\n`],
    ['0x prefix', `0x${v.hash.slice(2)}`],
    ['non-ASCII digits', `${v.hash.slice(0, 39)}٠`],
    ['40 multibyte characters', 'é'.repeat(40)],
    ['a very long string', 'a'.repeat(100_000)],
  ])('refuses %s', (_name, received) => {
    expect(verifyFields(received, v.fields, v.password)).toBe(false);
  });

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a number', 792],
    ['an array', [v.hash]],
    ['an object', { hash: v.hash }],
    ['a boolean', true],
  ])('refuses %s without throwing', (_name, received) => {
    expect(() => verifyFields(received, v.fields, v.password)).not.toThrow();
    expect(verifyFields(received, v.fields, v.password)).toBe(false);
  });

  it('any string that is not the hash is refused without throwing', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        fc.pre(s.toLowerCase() !== v.hash);
        expect(verifyFields(s, v.fields, v.password)).toBe(false);
      }),
    );
  });
});

describe('Unicode upper-casing is accepted only where it maps letters one to one', () => {
  const password = '13a4822c5907ed235f3a068c76184fc3';
  const order = (description: string) => ['A-1', '10.00', 'EUR', description];

  it.each([
    ['Strasse', 'Straße'],
    ['STRASSE', 'Straße'],
    ['fish', 'ﬁsh'],
    ['sale', 'ſale'],
    ['ink', 'ınk'],
    ['Σοφίσ', 'Σοφίς'],
    ['μg', 'µg'],
  ])('a hash held for %s does not verify %s', (signed, sent) => {
    const hash = signFields(order(signed), password);
    // Both upper-case to the same text, so before this rule the forged description verified.
    expect(signFields(order(sent), password, 'unicode')).toBe(signFields(order(signed), password, 'unicode'));
    expect(verifyFields(hash, order(signed), password)).toBe(true);
    expect(verifyFields(hash, order(sent), password)).toBe(false);
  });

  it('a text that needs such a character is verified by its ASCII rendering, as the platform signs it', () => {
    expect(verifyFields(signFields(order('Straße'), password, 'ascii'), order('Straße'), password)).toBe(true);
    expect(verifyFields(signFields(order('Straße'), password, 'unicode'), order('Straße'), password)).toBe(false);
  });

  it('letters that upper-case one to one keep verifying in the Unicode rendering (Café, Ärger, Юля)', () => {
    for (const text of ['Café', 'Ärger', 'Юля', 'ÉLAN already upper']) {
      expect(unicodeUpperIsOneToOne(text)).toBe(true);
      expect(verifyFields(signFields(order(text), password, 'unicode'), order(text), password)).toBe(true);
    }
  });

  it('no two accepted texts that differ other than by case share a Unicode signature', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.string({ unit: 'grapheme', maxLength: 6 }), (a, b) => {
        if (!unicodeUpperIsOneToOne(a) || !unicodeUpperIsOneToOne(b)) return;
        if (a.toUpperCase() !== b.toUpperCase()) return;
        // Same upper case: then they are the same text up to case, letter by letter.
        expect([...a].length).toBe([...b].length);
        expect(a.toLowerCase()).toBe(b.toLowerCase());
      }),
      { numRuns: 2000 },
    );
  });
});
