import { applyChange, recordApproval, recordChargeback, recordDecline, recordOperationAnswer, recordRefundAnswer, startRefund, type Payment, type PendingOperation, type Transition } from '../../lambdas/domain/payment';
import { daysOfMonth, maySettleLater, monthTallyOf, NOTHING_SETTLED, sameFigure, settledSale, withPayments, type DayFigure } from '../../lambdas/domain/settled-days';
import { linkPayment, settledPayment } from '../support/payment-fixtures';

/**
 * The chargeback rate's denominator derived from the payments (lambdas/domain/settled-days.ts):
 * what a payment counts for in the month it was created, which payments keep their day open, and the
 * days of a month a reading counts.
 */
const T0 = new Date('2031-06-30T23:50:00.000Z');
const LATER = new Date('2031-07-02T10:00:00.000Z');

const applied = (p: Payment, t: Transition | { refused: string }): Payment => {
  if (!('change' in t)) throw new Error(`refused: ${t.refused}`);
  return applyChange(p, t.change);
};

/** A link of 25.00 USD whose first attempt is in flight. */
const attempted = (paymentId: string): Payment =>
  linkPayment(T0, { paymentId, refunds: {}, watching: {}, inFlight: { attempt: 1, transId: `${paymentId}.1`, startedAt: T0.toISOString(), idempotencyKey: `${paymentId}-1` } });
const answer = (p: Payment) => ({ ref: { attempt: 1, transId: `${p.paymentId}.1`, idempotencyKey: `${p.paymentId}-1` }, from: 'request' as const, type: 'sale' as const, acquirerRef: 'acq' });
const approved = (p: Payment, authorizeOnly: boolean) => applied(p, recordApproval(p, { ...answer(p), authorizeOnly, authorizationValidityMs: 7 * 86_400_000 }, T0));
const operation = (kind: PendingOperation['kind'], amountMinor: number): PendingOperation => ({ kind, transId: `${kind}-1`, amountMinor, idempotencyKey: 'k', startedAt: T0.toISOString(), actor: 'merchant:x' });
const answered = (p: Payment, op: PendingOperation, at = LATER) => applied({ ...p, operation: op }, recordOperationAnswer({ ...p, operation: op }, op, { approved: true, acquirerRef: 'acq-op' }, at));

describe('settledSale: what a payment counts for in its month', () => {
  it('a sale approved counts its order amount in its currency; an authorization counts nothing until its capture, which counts what it captured', () => {
    const sale = approved(attempted('p-1'), false);
    expect(settledSale(sale)).toEqual({ currency: 'USD', amountMinor: 2500 });
    const authorization = approved(attempted('p-2'), true);
    expect(authorization.status).toBe('pending');
    expect(settledSale(authorization)).toBeUndefined();
    // Captured in part, two days later, in the next month: the payment counts what was captured (in the month it was created: the caller's day).
    expect(settledSale(answered(authorization, operation('capture', 1500)))).toEqual({ currency: 'USD', amountMinor: 1500 });
  });

  it('stays counted whatever followed: a full refund, a void in its window, a chargeback', () => {
    const settled = settledPayment(T0, { refunds: {}, watching: {} });
    const refund = { amountMinor: 1000, idempotencyKey: 'r', startedAt: T0.toISOString(), actor: 'x' };
    const refunding = applied(settled, startRefund(settled, { transId: 'r-1', refund, recheck: { name: 'reconcile', dueAt: T0.toISOString() } }, T0));
    const refunded = applied(refunding, recordRefundAnswer(refunding, 'r-1', refund, { approved: true, acquirerRef: 'acq-r' }, T0));
    expect(refunded.status).toBe('refund');
    const voided = answered(settled, operation('void', 1000), T0);
    expect(voided.status).toBe('void');
    const chargedBack = applied(settled, recordChargeback(settled, 1, { amountMinor: 400 }, undefined, LATER));
    expect(chargedBack.status).toBe('chargeback');
    for (const p of [settled, refunded, voided, chargedBack]) expect(settledSale(p)).toEqual({ currency: 'USD', amountMinor: 1000 });
  });

  it('never counts a released authorization, a decline, an unpaid link, or a late approval kept for the ledger', () => {
    const released = answered(approved(attempted('p-3'), true), operation('reversal', 2500));
    expect(released.status).toBe('reversal');
    const declined = applied(attempted('p-4'), recordDecline(attempted('p-4'), { ...answer(attempted('p-4')), reason: 'Do not honor', soft: false, maxDeclines: 1 }, T0));
    for (const p of [released, declined, linkPayment(T0)]) expect(settledSale(p)).toBeUndefined();
    // A later attempt paid; an earlier one's approval came late and was reversed (internal): only the payment's own sale counts.
    const lateApproval = { transId: 'p-1.1', type: 'sale' as const, status: 'success' as const, amountMinor: 999, at: T0.toISOString(), internal: true, orderStatus: 'settled' as const };
    expect(settledSale(settledPayment(T0, { transactions: [lateApproval, ...settledPayment(T0).transactions] }))).toEqual({ currency: 'USD', amountMinor: 1000 });
  });
});

describe('maySettleLater: the payments that keep their day open', () => {
  const expiresAt = new Date(T0.getTime() + 60 * 60_000);
  const afterExpiry = new Date(expiresAt.getTime() + 1);

  it('an attempt in flight, a challenge, an authorization to capture, a link still open, a soft decline its merchant may retry', () => {
    const held = applied(attempted('p-5'), recordDecline(attempted('p-5'), { ...answer(attempted('p-5')), reason: 'Do not honor', soft: false, maxDeclines: 3 }, T0));
    const softRecurring = settledPayment(T0, { status: 'decline', transactions: [], checkout: undefined, softDecline: true, recurringChainToken: 'chain-1' });
    const challenged = linkPayment(T0, { status: '3ds' });
    for (const p of [attempted('p-6'), approved(attempted('p-7'), true), linkPayment(T0), held, softRecurring, challenged]) expect(maySettleLater(p, T0)).toBe(true);
    // Once the link has expired, its unpaid or declined payment is final.
    expect(maySettleLater(linkPayment(T0), afterExpiry)).toBe(false);
    expect(maySettleLater(held, afterExpiry)).toBe(false);
    // An attempt in flight on an expired link may still be approved.
    expect(maySettleLater(attempted('p-8'), afterExpiry)).toBe(true);
  });

  it('a payment at rest does not: settled (counted), released, declined for good, a hard decline without a link', () => {
    const released = answered(approved(attempted('p-9'), true), operation('reversal', 2500));
    const closed = applied(attempted('p-10'), recordDecline(attempted('p-10'), { ...answer(attempted('p-10')), reason: 'Do not honor', soft: false, maxDeclines: 1 }, T0));
    const hardRecurring = settledPayment(T0, { status: 'decline', transactions: [], checkout: undefined, softDecline: false, recurringChainToken: 'chain-1' });
    for (const p of [settledPayment(T0), released, closed, hardRecurring]) expect(maySettleLater(p, T0)).toBe(false);
  });
});

describe('a day\'s figure', () => {
  const sale = (paymentId: string, amountMinor: number, currency = 'EUR'): Payment => settledPayment(T0, { paymentId, order: { number: paymentId, amount: '', amountMinor, currency, description: '' }, transactions: [{ transId: `${paymentId}.1`, type: 'sale', status: 'success', amountMinor, at: T0.toISOString(), orderStatus: 'settled' }] });

  it('counts the settled payments per currency, keeps those that may still settle open, leaves the rest out', () => {
    const authorization = approved(attempted('auth-1'), true);
    const figure = withPayments(NOTHING_SETTLED, [sale('a', 1000), sale('b', 250, 'USD'), sale('c', 500), authorization, answered(approved(attempted('rel-1'), true), operation('reversal', 2500))], T0);
    expect(figure).toEqual({ settledCount: 3, settledMinor: { EUR: 1500, USD: 250 }, open: ['auth-1'] });
    // Read again later: the authorization was captured; the kept figure without its open payments, plus them as they are now.
    const again = withPayments({ ...figure, open: [] }, [answered(authorization, operation('capture', 2500))], LATER);
    expect(again).toEqual({ settledCount: 4, settledMinor: { EUR: 1500, USD: 2750 }, open: [] });
    // One gone from the table (an abandoned link the TTL removed) drops out.
    expect(withPayments({ ...figure, open: [] }, [], LATER)).toEqual({ settledCount: 3, settledMinor: { EUR: 1500, USD: 250 }, open: [] });
    expect(sameFigure(figure, { settledCount: 3, settledMinor: { USD: 250, EUR: 1500 }, open: ['auth-1'] })).toBe(true);
    expect(sameFigure(figure, again)).toBe(false);
    expect(sameFigure(figure, { ...figure, open: [] })).toBe(false);
  });

  it('a month is its days added up; complete as the reading says', () => {
    const days: DayFigure[] = [{ settledCount: 2, settledMinor: { EUR: 300 }, open: [] }, { settledCount: 1, settledMinor: { EUR: 50, USD: 7 }, open: ['x'] }];
    expect(monthTallyOf('m', '2031-06', days, true)).toEqual({ merchantKey: 'm', month: '2031-06', settledCount: 3, settledMinor: { EUR: 350, USD: 7 }, complete: true });
    expect(monthTallyOf('m', '2031-06', [], false)).toEqual({ merchantKey: 'm', month: '2031-06', settledCount: 0, settledMinor: {}, complete: false });
  });
});

describe('daysOfMonth: the days a reading counts, and which are closed', () => {
  it('every day of the month up to today; a day is closed ten minutes after it ends, today never', () => {
    expect(daysOfMonth('2031-06', new Date('2031-06-03T00:05:00.000Z'))).toEqual([
      { day: '2031-06-01', closed: true },
      { day: '2031-06-02', closed: false },
      { day: '2031-06-03', closed: false },
    ]);
    expect(daysOfMonth('2031-06', new Date('2031-06-03T00:10:00.000Z'))[1]).toEqual({ day: '2031-06-02', closed: true });
  });

  it('a past month is all its days, closed (a leap February too); a month to come has none', () => {
    const february = daysOfMonth('2028-02', LATER);
    expect(february).toHaveLength(29);
    expect(february.every((d) => d.closed)).toBe(true);
    expect(february.at(-1)?.day).toBe('2028-02-29');
    expect(daysOfMonth('2031-06', LATER).map((d) => d.day)).toEqual(Array.from({ length: 30 }, (_, i) => `2031-06-${String(i + 1).padStart(2, '0')}`));
    expect(daysOfMonth('2031-08', LATER)).toEqual([]);
  });
});
