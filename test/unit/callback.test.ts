import fc from 'fast-check';
import {
  CALLBACK_POLICY,
  HEALTHY_ENDPOINT,
  afterTimeout,
  callbackFields,
  encodeForm,
  isBlocked,
  retriesExhausted,
  retryDelayMs,
  type EndpointHealth,
} from '../../lambdas/domain/callback';
import type { Payment, Transaction } from '../../lambdas/domain/payment';
import vectorsFile from '../fixtures/hash-vectors.json';

/** The callback's own known-answer vector (protocol.md §1: callback and return parameters). */
const vector = vectorsFile.vectors.find((v) => v.name === 'callback / return parameters')!;
const [paymentId, orderNumber, amount, currency, description] = vector.fields as [string, string, string, string, string];

const payment: Payment = {
  paymentId,
  merchantKey: 'merchant',
  status: 'void',
  order: { number: orderNumber, amount, amountMinor: 301, currency, description },
  customer: { name: 'John Doe', email: 'john@example.com' },
  createdAt: '2030-03-01T06:00:00.000Z',
  updatedAt: '2030-03-01T06:00:00.000Z',
  transactions: [],
  card: { mask: '411111****1111', brand: 'visa', expMonth: 1, expYear: 2038 },
  browser: { ip: '203.0.113.7' },
  customData: { basket: 'b&17=x' },
};
const sale: Transaction = { transId: 't-1', type: 'sale', status: 'success', amountMinor: 301, at: '2030-03-01T06:00:05.000Z', orderStatus: 'settled' };

describe('callback fields (protocol.md §4)', () => {
  it('are the platform\'s, in its order, signed with the known-answer hash', () => {
    expect(callbackFields(payment, sale, vector.password)).toEqual([
      ['id', paymentId],
      ['order_number', 'order-1234'],
      ['order_amount', '3.01'],
      ['order_currency', 'USD'],
      ['order_description', 'bloodline'],
      ['order_status', 'settled'],
      ['type', 'sale'],
      ['status', 'success'],
      ['trans_id', 't-1'],
      ['amount', '3.01'],
      ['card', '411111****1111'],
      ['card_expiration_date', '01/2038'],
      ['customer_name', 'John Doe'],
      ['customer_email', 'john@example.com'],
      ['customer_ip', '203.0.113.7'],
      ['date', '2030-03-01 06:00:05'],
      ['custom_data[basket]', 'b&17=x'],
      ['hash', vector.hash],
    ]);
  });

  it('report the status the transaction left the payment in, not the current one', () => {
    expect(Object.fromEntries(callbackFields(payment, sale, vector.password)).order_status).toBe('settled');
    const { orderStatus: _s, ...unstamped } = sale;
    expect(Object.fromEntries(callbackFields(payment, unstamped, vector.password)).order_status).toBe('void');
  });

  it('leave out what the payment does not have and carry the reason of a failure', () => {
    const bare: Payment = { ...payment, card: undefined, browser: undefined, customData: undefined, customer: { name: '' } };
    const fields = Object.fromEntries(callbackFields(bare, { ...sale, status: 'fail', reason: 'Declined by processing.' }, vector.password));
    expect(fields).not.toHaveProperty('card');
    expect(fields).not.toHaveProperty('customer_ip');
    expect(fields).not.toHaveProperty('customer_name');
    expect(fields.reason).toBe('Declined by processing.');
  });

  it('form-encode as UTF-8, escaping what must be escaped', () => {
    expect(encodeForm([['custom_data[a b]', 'ü&=+'], ['hash', 'x']])).toBe('custom_data%5Ba+b%5D=%C3%BC%26%3D%2B&hash=x');
  });
});

describe('retry delays', () => {
  it.each([
    [1, 15_000, 30_000],
    [2, 30_000, 60_000],
    [5, 240_000, 480_000],
    [8, 1_800_000, 3_600_000],
    [20, 1_800_000, 3_600_000],
  ])('after failure %i: from %i ms (no jitter) to %i ms (all jitter)', (failures, low, high) => {
    expect(retryDelayMs(failures, 0)).toBe(low);
    expect(retryDelayMs(failures, 1)).toBe(high);
  });

  it('stay within half and all of the nominal delay for any failure count and randomness', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (failures, r) => {
        const nominal = Math.min(CALLBACK_POLICY.maxDelayMs, CALLBACK_POLICY.firstDelayMs * 2 ** Math.min(failures - 1, 30));
        const d = retryDelayMs(failures, r);
        return d >= nominal / 2 && d <= nominal;
      }),
    );
  });

  it('refuse a failure count that is not a whole number of at least one', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => retryDelayMs(bad, 0.5)).toThrow();
  });

  it('stop after 24 hours of trying, not a millisecond sooner', () => {
    const first = new Date('2030-03-01T00:00:00Z');
    expect(retriesExhausted(first, new Date('2030-03-01T23:59:59.999Z'))).toBe(false);
    expect(retriesExhausted(first, new Date('2030-03-02T00:00:00Z'))).toBe(true);
  });

  it('with the worst luck, a day holds at least 25 attempts', () => {
    let elapsed = 0;
    let attempts = 1;
    while (elapsed < CALLBACK_POLICY.retryForMs) {
      elapsed += retryDelayMs(attempts, 1);
      attempts++;
    }
    expect(attempts).toBeGreaterThanOrEqual(25);
  });
});

describe('blocking a URL that keeps timing out', () => {
  const t = (minute: number, second = 0) => new Date(Date.UTC(2030, 2, 1, 10, minute, second));
  const timeoutsAt = (...times: Date[]): EndpointHealth => times.reduce((h, at) => afterTimeout(h, at), HEALTHY_ENDPOINT);

  it('five timeouts within five minutes block it for fifteen minutes', () => {
    const health = timeoutsAt(t(0), t(1), t(2), t(3), t(4, 59));
    expect(health).toEqual({ timeouts: [], blockedUntil: t(19, 59).toISOString() });
    expect(isBlocked(health, t(19, 58))).toBe(true);
    expect(isBlocked(health, t(19, 59))).toBe(false);
  });

  it('four do not, and the oldest falls out of the window', () => {
    expect(isBlocked(timeoutsAt(t(0), t(1), t(2), t(3)), t(3))).toBe(false);
    const spread = timeoutsAt(t(0), t(1), t(2), t(3), t(5, 1));
    expect(spread.blockedUntil).toBeUndefined();
    expect(spread.timeouts).toHaveLength(4);
  });

  it('counting starts again after a block', () => {
    const again = timeoutsAt(t(0), t(0, 1), t(0, 2), t(0, 3), t(0, 4), t(16));
    expect(again).toEqual({ timeouts: [t(16).toISOString()] });
  });
});
