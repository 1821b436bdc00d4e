import fc from 'fast-check';
import { disputeMonthOf, highestCountedRate, isMonth, previousMonth, ratesOf, settledBy, type DisputeEntry, type MonthTally } from '../../lambdas/domain/dispute-rates';
import { recordApproval, recordChargeback, recordOperationAnswer, startRefund, type Payment } from '../../lambdas/domain/payment';
import { MemoryPaymentStore } from '../../lambdas/adapters/memory/payment-store';
import type { SettlementTally } from '../../lambdas/ports/disputes';
import { tallyingSettlements } from '../../lambdas/use-cases/settlement-tally';
import { linkPayment, settledPayment } from '../support/payment-fixtures';

/** The chargeback rate's arithmetic and what counts as settled money (lambdas/domain/dispute-rates.ts). */
const T0 = new Date('2031-06-30T23:59:00.000Z');
const rule = { thresholdPercent: 0.9, minSettled: 100 };
const entry = (merchantKey: string, amountMinor: number, extra: Partial<DisputeEntry> = {}): DisputeEntry => ({
  transId: `p-${Math.random()}.cb1`, paymentId: 'p', merchantKey, amountMinor, currency: 'EUR', recordedAt: T0.toISOString(), outcome: 'recorded', ...extra,
});
const tally = (merchantKey: string, settledCount: number, settledMinor: Record<string, number>, month = '2031-06'): MonthTally => ({ merchantKey, month, settledCount, settledMinor });

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
      { merchantKey: 'b', month: '2031-06', settledCount: 10, chargebackCount: 1, countRatePercent: 10, amounts: [{ currency: 'EUR', settledMinor: 1_000, chargedBackMinor: 100, ratePercent: 10 }], over: false },
      {
        merchantKey: 'a', month: '2031-06', settledCount: 200, chargebackCount: 2, countRatePercent: 1,
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
      { merchantKey: 'c', month: '2031-06', settledCount: 0, chargebackCount: 1, amounts: [{ currency: 'EUR', settledMinor: 0, chargedBackMinor: 100 }], over: false },
    ]);
    expect(ratesOf('2031-06', [], [], rule)).toEqual([]);
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

describe('settledBy: the money a change settles', () => {
  /** A link whose first attempt is in flight. */
  const attempted = (paymentId: string): Payment =>
    linkPayment(T0, { paymentId, status: 'pending', refunds: {}, watching: {}, inFlight: { attempt: 1, transId: `${paymentId}.1`, startedAt: T0.toISOString(), idempotencyKey: `${paymentId}-1` } });
  const link = attempted('p-1');
  const approvalOf = (p: Payment, authorizeOnly: boolean) =>
    recordApproval(p, { ref: { attempt: 1, transId: `${p.paymentId}.1`, idempotencyKey: `${p.paymentId}-1` }, from: 'attempt', type: 'sale', acquirerRef: 'acq', authorizeOnly, authorizationValidityMs: 7 * 86_400_000 } as never, T0);
  const approval = (authorizeOnly: boolean) => approvalOf(link, authorizeOnly);

  it('a sale approved settles its amount; an authorization settles nothing', () => {
    expect(settledBy(approval(false).change)).toEqual({ amountMinor: link.order.amountMinor, at: T0.toISOString() });
    expect(settledBy(approval(true).change)).toBeUndefined();
  });

  it('a capture settles what it captured; a refund, a chargeback settle nothing', () => {
    const pending: Payment = settledPayment(T0, { status: 'pending', refunds: {}, watching: {}, operation: { kind: 'capture', transId: 'c-1', amountMinor: 600, idempotencyKey: 'k', startedAt: T0.toISOString(), actor: 'merchant:x' } });
    const capture = recordOperationAnswer(pending, pending.operation!, { approved: true } as never, T0);
    expect('change' in capture && settledBy(capture.change)).toEqual({ amountMinor: 600, at: T0.toISOString() });
    const settled = settledPayment(T0, { refunds: {}, watching: {} });
    const refund = startRefund(settled, { transId: 'r-1', refund: { amountMinor: 100, idempotencyKey: 'k', startedAt: T0.toISOString(), actor: 'x' }, recheck: { name: 'reconcile', dueAt: T0.toISOString() } }, T0);
    expect('change' in refund && settledBy(refund.change)).toBeUndefined();
    const chargeback = recordChargeback(settled, 1, { amountMinor: 100 }, undefined, T0);
    expect('change' in chargeback && settledBy(chargeback.change)).toBeUndefined();
  });

  it('the store counts a settling change once, when it applies, in the month of the change; a refused one and a failing tally change nothing of the payment', async () => {
    const added: unknown[] = [];
    let failing = false;
    const counter: SettlementTally = {
      add: async (...args) => {
        if (failing) throw new Error('tally unavailable');
        added.push(args);
      },
      ofMonth: async () => [],
    };
    const memory = new MemoryPaymentStore();
    const store = tallyingSettlements(memory, counter);
    await store.createPayment(link);
    const transition = approval(false);
    expect((await store.apply(link.paymentId, transition)).applied).toBe(true);
    // The same approval again is refused by its guard: not counted twice.
    expect((await store.apply(link.paymentId, transition)).applied).toBe(false);
    expect(added).toEqual([[link.merchantKey, '2031-06', link.order.currency, link.order.amountMinor]]);
    // Every other call is the store's own.
    expect((await store.findPayment(link.paymentId))?.status).toBe('settled');

    const other = attempted('p-2');
    await store.createPayment(other);
    failing = true;
    const applied = await store.apply(other.paymentId, approvalOf(other, false));
    expect(applied).toMatchObject({ applied: true, payment: { status: 'settled' } });
  });
});
