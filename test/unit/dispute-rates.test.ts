import fc from 'fast-check';
import { disputeMonthOf, highestCountedRate, isMonth, previousMonth, ratesOf, type DisputeEntry, type MonthTally } from '../../lambdas/domain/dispute-rates';

/** The chargeback rate's arithmetic and what counts as settled money (lambdas/domain/dispute-rates.ts). */
const T0 = new Date('2031-06-30T23:59:00.000Z');
const rule = { thresholdPercent: 0.9, minSettled: 100 };
const entry = (merchantKey: string, amountMinor: number, extra: Partial<DisputeEntry> = {}): DisputeEntry => ({
  transId: `p-${Math.random()}.cb1`, paymentId: 'p', merchantKey, amountMinor, currency: 'EUR', recordedAt: T0.toISOString(), outcome: 'recorded', ...extra,
});
const tally = (merchantKey: string, settledCount: number, settledMinor: Record<string, number>, complete = true): MonthTally => ({ merchantKey, month: '2031-06', settledCount, settledMinor, complete });

describe('months', () => {
  it.each([['2031-06', '2031-05'], ['2031-01', '2030-12'], ['2000-12', '2000-11']])('the month before %s is %s', (m, before) => expect(previousMonth(m)).toBe(before));
  it.each([['2031-06', true], ['2031-13', false], ['2031-00', false], ['2031-6', false], ['31-06', false], ['2031-06-01', false]])('%s is a month: %s', (m, ok) => expect(isMonth(m)).toBe(ok));
  it('a chargeback counts in the month of the acquirer\'s date when it gave one, else when our records took it', () => {
    expect(disputeMonthOf({ chargebackDate: '2031-05-31', recordedAt: '2031-06-02T00:00:00.000Z' })).toBe('2031-05');
    expect(disputeMonthOf({ recordedAt: '2031-06-02T00:00:00.000Z' })).toBe('2031-06');
    expect(disputeMonthOf({ chargebackDate: 'garbage', recordedAt: '2031-06-02T00:00:00.000Z' })).toBe('2031-06');
  });
});

describe('ratesOf', () => {
  it('counts chargebacks (recorded or refused) over settled payments, by count and per currency by amount', () => {
    const rates = ratesOf('2031-06', [tally('a', 200, { EUR: 100_000, USD: 5_000 }), tally('b', 10, { EUR: 1_000 })], [entry('a', 500), entry('a', 300, { outcome: 'refused' }), entry('b', 100), entry('a', 999, { chargebackDate: '2031-05-30' })], rule);
    expect(rates).toEqual([
      { merchantKey: 'b', month: '2031-06', settledCount: 10, complete: true, chargebackCount: 1, countRatePercent: 10, amounts: [{ currency: 'EUR', settledMinor: 1_000, chargedBackMinor: 100, ratePercent: 10 }], over: false },
      {
        merchantKey: 'a', month: '2031-06', settledCount: 200, complete: true, chargebackCount: 2, countRatePercent: 1,
        amounts: [{ currency: 'EUR', settledMinor: 100_000, chargedBackMinor: 800, ratePercent: 0.8 }, { currency: 'USD', settledMinor: 5_000, chargedBackMinor: 0, ratePercent: 0 }],
        over: true,
      },
    ]);
    // b is worst but has too few payments for its month to count.
    expect(highestCountedRate(rates, rule)).toBe(1);
    expect(highestCountedRate(rates, { ...rule, minSettled: 0 })).toBe(10);
  });

  it('a merchant with chargebacks and nothing settled has no rate (and never counts); one with neither is absent', () => {
    expect(ratesOf('2031-06', [], [entry('c', 100)], { ...rule, minSettled: 0 })).toEqual([
      { merchantKey: 'c', month: '2031-06', settledCount: 0, complete: true, chargebackCount: 1, amounts: [{ currency: 'EUR', settledMinor: 0, chargedBackMinor: 100 }], over: false },
    ]);
    expect(ratesOf('2031-06', [], [], rule)).toEqual([]);
  });

  it('a part count (the reading ran out of time) is rated but never over the threshold, nor the highest that counts', () => {
    const rates = ratesOf('2031-06', [tally('a', 200, { EUR: 100_000 }, false), tally('b', 200, { EUR: 100_000 })], [...Array.from({ length: 10 }, () => entry('a', 100)), entry('b', 100), entry('b', 100)], rule);
    expect(rates.map((r) => [r.merchantKey, r.countRatePercent, r.complete, r.over])).toEqual([['a', 5, false, false], ['b', 1, true, true]]);
    expect(highestCountedRate(rates, rule)).toBe(1);
  });

  it('the threshold is inclusive and the rate exact to a thousandth of a percent', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 0, max: 1000 }), (settled, charged) => {
        fc.pre(charged <= settled);
        const [r] = ratesOf('2031-06', [tally('m', settled, { EUR: settled * 100 })], Array.from({ length: charged }, () => entry('m', 100)), { thresholdPercent: 0.9, minSettled: 0 });
        expect(r!.countRatePercent).toBeCloseTo((charged / settled) * 100, 3);
        // 0.9 % is 9 in 1000, decided exactly (a rate shown rounded to 0.900 % may be just under it).
        expect(r!.over).toBe(charged * 1000 >= settled * 9);
      }),
    );
  });
});
