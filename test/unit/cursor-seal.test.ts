import { configureCursorSeal, configureCursorSealFromSecret, CursorRefused, loadCursorSeal, openCursor, resetCursorSeal, sealCursor } from '../../lambdas/adapters/dynamodb/cursor';

/**
 * The key page cursors are sealed with: on AWS a generated secret (CURSOR_SECRET_ID) read when a
 * request first needs it and cached like the other secrets; never a key derived from public names.
 */
afterEach(resetCursorSeal);

const KEY_A = 'a'.repeat(64);
const KEY_B = 'b'.repeat(64);

function secretSource(values: string[]) {
  let now = 0;
  const reads: string[] = [];
  configureCursorSealFromSecret(
    async () => {
      const value = values[Math.min(reads.length, values.length - 1)]!;
      reads.push(value);
      return value;
    },
    300_000,
    () => now,
  );
  return { reads, advance: (ms: number) => (now += ms) };
}

test('a function with no key refuses to seal or open a cursor, rather than sealing with a guessable one', () => {
  expect(() => sealCursor({ day: 0 })).toThrow(/cursor seal not configured/);
  expect(() => openCursor('e30.AAAAAAAAAAAAAAAAAAAAAA')).toThrow(/cursor seal not configured/);
});

test('the secret is read once, then from memory until its cache time ends', async () => {
  const source = secretSource([KEY_A]);
  expect(() => sealCursor({ day: 1 })).toThrow(/not read yet/);
  await loadCursorSeal();
  await loadCursorSeal();
  const cursor = sealCursor({ day: 1 });
  expect(openCursor(cursor)).toEqual({ day: 1 });
  expect(source.reads).toHaveLength(1);
  source.advance(300_001);
  await loadCursorSeal();
  expect(source.reads).toHaveLength(2);
});

test('a cursor sealed with another key is refused: knowing the stack\'s names is not enough', async () => {
  configureCursorSeal(KEY_B);
  const foreign = sealCursor({ day: 0, merchant: 0, counted: 123456789 });
  secretSource([KEY_A]);
  await loadCursorSeal();
  expect(() => openCursor(foreign)).toThrow(CursorRefused);
});

test('after a rotation new cursors are sealed with the new key, and those sealed just before still open', async () => {
  const source = secretSource([KEY_A, KEY_B]);
  await loadCursorSeal();
  const before = sealCursor({ day: 2 });
  source.advance(300_001);
  await loadCursorSeal();
  const after = sealCursor({ day: 2 });
  expect(after).not.toBe(before);
  expect(openCursor(before)).toEqual({ day: 2 });
  expect(openCursor(after)).toEqual({ day: 2 });
});

test('a secret too short to be a key stops the request', async () => {
  secretSource(['short']);
  await expect(loadCursorSeal()).rejects.toThrow(/at least 32 characters/);
});
