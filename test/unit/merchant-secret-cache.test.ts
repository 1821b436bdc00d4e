import { randomUUID } from 'node:crypto';
import { CachedMerchantSecrets, UNKNOWN_KEYS_REMEMBERED } from '../../lambdas/adapters/secrets-manager/merchant-secrets';
import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantSecrets } from '../../lambdas/ports/merchants';

/**
 * The secret cache in front of Secrets Manager: random merchant keys are refused by the directory
 * check without a store call, and however many there are they never push a known merchant out.
 */
function world(capacity = 1000) {
  const clock = new ManualClock('2030-01-01T00:00:00.000Z');
  const passwords = new Map(Array.from({ length: 3 }, (_, i) => [`shop-${i}`, `password-${i}`]));
  const storeReads: string[] = [];
  const directoryReads: string[] = [];
  const store: MerchantSecrets = {
    passwordOf: async (k) => (storeReads.push(k), passwords.get(k)),
    put: async () => undefined,
    webhookSecretsOf: async () => [],
    putWebhookSecret: async () => undefined,
  };
  const exists = async (k: string) => (directoryReads.push(k), passwords.has(k));
  const cache = new CachedMerchantSecrets(store, clock, 300_000, 60_000, capacity, exists);
  return { cache, clock, storeReads, directoryReads };
}

it('asks the directory, never the store, about an unknown key, and remembers it for a minute', async () => {
  const { cache, clock, storeReads, directoryReads } = world();
  await expect(cache.passwordOf('no-such-shop')).resolves.toBeUndefined();
  await expect(cache.passwordOf('no-such-shop')).resolves.toBeUndefined();
  expect([storeReads, directoryReads]).toEqual([[], ['no-such-shop']]);
  clock.advance(60_001);
  await cache.passwordOf('no-such-shop');
  expect([storeReads, directoryReads]).toEqual([[], ['no-such-shop', 'no-such-shop']]);
});

it('never asks anyone about a key no merchant could have', async () => {
  const { cache, storeReads, directoryReads } = world();
  await expect(cache.passwordOf('<script>')).resolves.toBeUndefined();
  expect([storeReads, directoryReads]).toEqual([[], []]);
});

it(`keeps every known merchant cached through ${UNKNOWN_KEYS_REMEMBERED * 2} random keys`, async () => {
  const { cache, storeReads } = world(3);
  for (const k of ['shop-0', 'shop-1', 'shop-2']) await cache.passwordOf(k);
  for (let i = 0; i < UNKNOWN_KEYS_REMEMBERED * 2; i++) await cache.passwordOf(randomUUID());
  storeReads.splice(0);
  for (const k of ['shop-0', 'shop-1', 'shop-2']) await expect(cache.passwordOf(k)).resolves.toBe(`password-${k.slice(-1)}`);
  expect(storeReads).toEqual([]);
});

it('when full of known merchants, the least recently read one leaves first', async () => {
  const { cache, storeReads } = world(2);
  await cache.passwordOf('shop-0');
  await cache.passwordOf('shop-1');
  await cache.passwordOf('shop-0');
  await cache.passwordOf('shop-2');
  storeReads.splice(0);
  await cache.passwordOf('shop-0');
  await cache.passwordOf('shop-1');
  expect(storeReads).toEqual(['shop-1']);
});
