import fc from 'fast-check';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { MERCHANT_KEY_PATTERN } from '../../lambdas/adapters/secrets-manager/merchant-secrets';
import { ORDER_NUMBER_CHARACTERS } from '../../lambdas/domain/payment';

/**
 * Status by order_id reads the index key `ORDER#<merchant key>#<order number>`. Order numbers may hold
 * `#` (the platform's characters, `A#1`), so the key names one (merchant, order) pair only because a
 * merchant key never holds `#`: the first `#` after the prefix ends the merchant key. These tests
 * pin that reasoning; if merchant keys ever take `#`, they fail and the key must change (with a
 * migration of the stored `gsi1pk` attributes: the local runner's index repair rebuilds index
 * entries from items, it does not rewrite the items' key attributes).
 */
const merchantKeys = fc.stringMatching(MERCHANT_KEY_PATTERN);
const orderNumbers = fc.stringMatching(ORDER_NUMBER_CHARACTERS, { size: 'small' }).filter((n) => n.length <= 255);
/** Order numbers made mostly of `#`, where a collision would hide. */
const hashHeavy = fc.array(fc.constantFrom('#', 'A', '1', '/', ':'), { minLength: 1, maxLength: 12 }).map((a) => a.join(''));

/** Merchant keys that are prefixes of one another, so that a shifted boundary would show. */
const nearbyMerchants = fc.constantFrom('shop', 'shop-A', 'shop-A-1', 'A', '1');

/** What the key says, read back the only way it can be: merchant key up to the first `#`. */
function readBack(indexKey: string): { merchantKey: string; orderNumber: string } {
  const rest = indexKey.slice('ORDER#'.length);
  const cut = rest.indexOf('#');
  return { merchantKey: rest.slice(0, cut), orderNumber: rest.slice(cut + 1) };
}

it('no merchant key can hold #', () => {
  expect(MERCHANT_KEY_PATTERN.test('shop#A')).toBe(false);
  fc.assert(fc.property(merchantKeys, (m) => !m.includes('#')));
});

it('names exactly one merchant and order number, whatever # the order number holds', () => {
  fc.assert(
    fc.property(merchantKeys, fc.oneof(orderNumbers, hashHeavy), (merchantKey, orderNumber) => {
      expect(readBack(key.orderIndex(merchantKey, orderNumber))).toEqual({ merchantKey, orderNumber });
    }),
    { numRuns: 2000 },
  );
});

it('keeps apart the pairs that would share a key if merchant keys took #', () => {
  // ("shop", "A#1") and a merchant "shop#A" with order "1" would both be ORDER#shop#A#1.
  expect(key.orderIndex('shop', 'A#1')).toBe('ORDER#shop#A#1');
  expect(MERCHANT_KEY_PATTERN.test('shop#A')).toBe(false);
  fc.assert(
    fc.property(nearbyMerchants, nearbyMerchants, hashHeavy, hashHeavy, (m1, m2, o1, o2) => {
      fc.pre(m1 !== m2 || o1 !== o2);
      expect(key.orderIndex(m1, o1)).not.toBe(key.orderIndex(m2, o2));
    }),
    { numRuns: 2000 },
  );
});
