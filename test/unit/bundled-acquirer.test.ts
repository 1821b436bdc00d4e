import { buildAcquirer } from '../../lambdas/wiring/acquirer';
import { readConfig } from '../../lambdas/config';

/**
 * A stage's functions carry its acquirer's code only (esbuild defines CHECKOUT_BUNDLED_ACQUIRER per
 * stage; test/cdk/source-maps.test.ts shows what each stage's bundle holds). Such a function refuses
 * a configuration that names the other acquirer, saying why, instead of failing somewhere inside.
 */
const base = (acquirer: 'sandbox' | 's2s-card') => {
  const config = readConfig({
    TABLE_NAME: 't',
    MERCHANT_SECRET_PREFIX: 'checkout/dev/merchants/',
    ACQUIRER: acquirer,
    ...(acquirer === 's2s-card' ? { S2S_CARD_URL: 'https://gateway.example.com/post', S2S_CARD_CLIENT_KEY: 'k', S2S_CARD_PASSWORD: 'p' } : {}),
  });
  return { config, clock: { now: () => new Date() }, ids: {} as never, db: {} as never } as Parameters<typeof buildAcquirer>[0];
};

afterEach(() => {
  delete process.env.CHECKOUT_BUNDLED_ACQUIRER;
});

test.each([
  ['s2s-card', 'sandbox'],
  ['sandbox', 's2s-card'],
] as const)('a function bundled for %s refuses ACQUIRER=%s', (bundled, configured) => {
  process.env.CHECKOUT_BUNDLED_ACQUIRER = bundled;
  expect(() => buildAcquirer(base(configured), {} as never, undefined)).toThrow(`ACQUIRER=${configured}, but this function was bundled for ${bundled} only (its stage's acquirer)`);
});

test('a function bundled for S2S CARD has no sandbox: asking it anything says so', () => {
  process.env.CHECKOUT_BUNDLED_ACQUIRER = 's2s-card';
  const { sandbox, acquirer } = buildAcquirer(base('s2s-card'), {} as never, undefined);
  expect(acquirer).toBeDefined();
  expect(() => sandbox.challenges).toThrow('the sandbox acquirer is not in this bundle (asked for challenges)');
});

test('from the sources (unset) both are there, as the local runner and the tests use them', () => {
  expect(buildAcquirer(base('sandbox'), {} as never, undefined).sandbox.challenges).toBeDefined();
});
