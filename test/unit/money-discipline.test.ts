import fc from 'fast-check';
import { signedAmountRenderings } from '../../lambdas/domain/money';
import { isValidIdempotencyKey, requestKeyOf } from '../../lambdas/domain/request-key';
import { ApiError } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import { RECORD_BACKOFF, TRY_AGAIN, backoffDelay, withBackoff } from '../../lambdas/use-cases/backoff';
import { canonicalField, recurringPaymentId } from '../../lambdas/use-cases/recurring-payment';

describe('signed amount renderings', () => {
  it.each([
    [10, ['10', '10.00', '10.000', '10.0000']],
    [10.5, ['10.5', '10.50', '10.500', '10.5000']],
    [10.49, ['10.49', '10.490', '10.4900']],
    [0.125, ['0.125', '0.1250']],
    ['10.49', ['10.49']],
  ] as const)('%j may have been signed as %j', (amount, renderings) => {
    expect(signedAmountRenderings(amount)).toEqual(renderings);
  });

  it('never offers a rendering that changes the value', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 1e9, noNaN: true }), (amount) => {
        for (const r of signedAmountRenderings(amount)) expect(Number(r)).toBe(amount);
      }),
    );
  });
});

describe('canonical replay keys', () => {
  it('letter-case variants of a signed order number are one recurring payment', () => {
    const ids = ['sub-abc-1', 'SUB-ABC-1', 'Sub-abc-1'].map((n) => recurringPaymentId('shop', 'token', n));
    expect(new Set(ids).size).toBe(1);
    expect(recurringPaymentId('shop', 'token', 'sub-abc-2')).not.toBe(ids[0]);
  });

  it('the canonical form is what the hash covers (upper case)', () => {
    fc.assert(fc.property(fc.string(), (s) => expect(canonicalField(s.toLowerCase())).toBe(canonicalField(s.toUpperCase()))));
  });
});

describe('Idempotency-Key', () => {
  it.each([
    ['a', true],
    ['order-1/refund#2', true],
    ['x'.repeat(255), true],
    ['x'.repeat(256), false],
    ['', false],
    [' padded', false],
    ['tab\tinside', false],
    ['ключ', false],
  ])('%j valid: %s', (key, valid) => expect(isValidIdempotencyKey(key)).toBe(valid));

  it('is scoped by merchant; the body fingerprint ignores the hash and key order', () => {
    const body = { merchant_key: 'a', payment_id: 'p', amount: '1.00', hash: 'x' };
    const k = requestKeyOf('a', 'POST /r', 'k1', body);
    expect(requestKeyOf('b', 'POST /r', 'k1', body).id).not.toBe(k.id);
    expect(requestKeyOf('a', 'POST /r', 'k1', { amount: '1.00', payment_id: 'p', merchant_key: 'a', hash: 'y' })).toEqual(k);
    expect(requestKeyOf('a', 'POST /r', 'k1', { ...body, amount: '2.00' }).fingerprint).not.toBe(k.fingerprint);
    expect(k.transId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('the retry policy', () => {
  it('waits with full jitter under an exponential ceiling', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (n, r) => {
        const d = backoffDelay(RECORD_BACKOFF, n, () => r);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(Math.min(RECORD_BACKOFF.maxDelayMs, RECORD_BACKOFF.firstDelayMs * 2 ** (n - 1)));
      }),
    );
  });

  it('retries lost races and failed writes a bounded number of times, then gives up', async () => {
    let tries = 0;
    await expect(withBackoff(async () => (tries++, TRY_AGAIN), RECORD_BACKOFF, { clock: new ManualClock() })).resolves.toBeUndefined();
    expect(tries).toBe(RECORD_BACKOFF.tries);
    tries = 0;
    await expect(withBackoff(async () => (++tries < 3 ? Promise.reject(new Error('throttled')) : 'ok'), RECORD_BACKOFF, { clock: new ManualClock() })).resolves.toBe('ok');
  });

  it('never retries a refusal: it is the answer', async () => {
    let tries = 0;
    await expect(withBackoff(async () => { tries++; throw new ApiError('REFUND_AMOUNT_TOO_BIG'); }, RECORD_BACKOFF, { clock: new ManualClock() })).rejects.toThrow(ApiError);
    expect(tries).toBe(1);
  });
});
