import fc from 'fast-check';
import { awaitsAnotherAttempt } from '../../lambdas/domain/attempts';
import { NOT_RESENDABLE, callbackMessage, resendRefusal, type ResendableState } from '../../lambdas/domain/callback-resend';
import { PAYMENT_STATUSES, type Payment, type Transaction } from '../../lambdas/domain/payment';
import { SESSION_EXPIRED_REASON, alwaysReadsAsStored, paymentReading, storedStatusesReadingAs } from '../../lambdas/domain/payment-view';
import { linkPayment } from '../support/payment-fixtures';

/**
 * One reading of a payment's status for everyone (domain/payment-view.ts): table-driven for the
 * readings that differ from what is stored, then a property the admin search relies on: the stored
 * status is always among those it filters the index on for the status the payment reads as. Then
 * which callbacks may be resent (domain/callback-resend.ts) and when a resend contradicts the payment.
 */
const T0 = Date.parse('2030-05-01T09:00:00Z');
const MINUTE = 60_000;
const at = (ms: number) => new Date(T0 + ms);

const tx = (type: Transaction['type'], status: Transaction['status'], extra: Partial<Transaction> = {}): Transaction => ({
  transId: `t-${type}-${status}`,
  type,
  status,
  amountMinor: 2500,
  at: at(0).toISOString(),
  ...extra,
});

/** An unpaid link of no named customer, expiring `expiresInMs` after T0. */
const link = (overrides: Partial<Payment> = {}, expiresInMs = 60 * MINUTE): Payment => linkPayment(at(0), { customer: {}, ...overrides }, expiresInMs);
const noLink = (overrides: Partial<Payment> = {}): Payment => {
  const { checkout: _none, ...p } = link(overrides);
  return p;
};
const DECLINED = 'Declined by processing.';
const heldDecline = tx('sale', 'fail', { held: true, reason: DECLINED, orderStatus: 'decline' });
const inFlight = { attempt: 1, transId: 't-1', startedAt: at(0).toISOString(), idempotencyKey: 'k' };

describe('paymentReading: the status everyone reads', () => {
  it.each([
    ['an unpaid link before its expiry', link(), at(59 * MINUTE), { status: 'prepare' }],
    ['an unpaid link from its expiry on', link(), at(60 * MINUTE), { status: 'decline', reason: SESSION_EXPIRED_REASON }],
    ['an expired link whose attempt waits for the acquirer (it may yet be approved)', link({ inFlight }), at(61 * MINUTE), { status: 'prepare' }],
    ['a decline the customer may still follow on the open link', link({ status: 'decline', reason: DECLINED, transactions: [heldDecline] }), at(MINUTE), { status: 'prepare' }],
    ['the same decline once the link expired', link({ status: 'decline', reason: DECLINED, transactions: [heldDecline] }), at(60 * MINUTE), { status: 'decline', reason: DECLINED }],
    ['the same decline once the customer closed the page', link({ status: 'decline', reason: DECLINED, transactions: [heldDecline], linkClosed: { at: at(MINUTE).toISOString(), why: 'customer' } }), at(2 * MINUTE), { status: 'decline', reason: DECLINED }],
    ['a paid link after its expiry', link({ status: 'settled', transactions: [tx('sale', 'success')] }), at(2 * 60 * MINUTE), { status: 'settled' }],
    ['a declined merchant-initiated payment (no link)', noLink({ status: 'decline', reason: DECLINED, transactions: [tx('recurring', 'fail')] }), at(0), { status: 'decline', reason: DECLINED }],
  ] as const)('%s', (_what, p, now, expected) => {
    expect(paymentReading(p, now)).toEqual(expected);
  });
});

/** Any payment: any stored status, with or without a link, expired or not, closed or not, attempts or not. */
const payments = fc
  .record({
    status: fc.constantFrom(...PAYMENT_STATUSES),
    hasLink: fc.boolean(),
    expiresInMs: fc.integer({ min: -120, max: 120 }).map((m) => m * MINUTE),
    closed: fc.boolean(),
    attempts: fc.array(fc.constantFrom('held-decline', 'decline', 'success', 'internal'), { maxLength: 4 }),
    inFlight: fc.boolean(),
    nowMs: fc.integer({ min: 0, max: 180 }).map((m) => m * MINUTE),
  })
  .map(({ status, hasLink, expiresInMs, closed, attempts, inFlight: flying, nowMs }) => {
    const transactions = attempts.map((a, i) =>
      a === 'held-decline' ? { ...heldDecline, transId: `t${i}` } : a === 'decline' ? tx('sale', 'fail', { transId: `t${i}`, orderStatus: 'decline' }) : a === 'success' ? tx('sale', 'success', { transId: `t${i}`, orderStatus: 'settled' }) : tx('sale', 'success', { transId: `t${i}`, internal: true }),
    );
    const base: Partial<Payment> = {
      status,
      transactions,
      ...(status === 'decline' ? { reason: DECLINED } : {}),
      ...(closed ? { linkClosed: { at: at(0).toISOString(), why: 'customer' as const } } : {}),
      ...(flying ? { inFlight } : {}),
    };
    return { payment: hasLink ? link(base, expiresInMs) : noLink(base), now: at(nowMs) };
  });

describe('over any payment and any time', () => {
  it('the stored status is among those a search keeps for the status the payment reads as', () => {
    fc.assert(
      fc.property(payments, ({ payment, now }) => {
        const reading = paymentReading(payment, now);
        expect(storedStatusesReadingAs(reading.status)).toContain(payment.status);
        // A status the index answers alone is never read otherwise.
        if (alwaysReadsAsStored(payment.status)) expect(reading.status).toBe(payment.status);
        if (alwaysReadsAsStored(reading.status)) expect(payment.status).toBe(reading.status);
      }),
      { numRuns: 1000 },
    );
  });

  it('a callback may be resent only when it is not ledger-only, not a superseded or open decline, and delivered or dead', () => {
    const states: ResendableState[] = ['pending', 'delivered', 'dead', 'skipped', 'not-sent'];
    fc.assert(
      fc.property(payments, fc.constantFrom(...states), fc.nat(), ({ payment, now }, state, n) => {
        if (!payment.transactions.length) return;
        const index = n % payment.transactions.length;
        const t = payment.transactions[index]!;
        const refusal = resendRefusal(payment, index, state, now);
        const laterAttempt = payment.transactions.slice(index + 1).some((later) => !later.internal);
        if (t.internal) expect(refusal).toBe(NOT_RESENDABLE.internal);
        else if (t.held && laterAttempt) expect(refusal).toBe(NOT_RESENDABLE.superseded);
        if (refusal === undefined) {
          expect(['delivered', 'dead']).toContain(state);
          expect(t.internal).toBeUndefined();
          expect(t.held && laterAttempt).toBeFalsy();
          expect(t.held && awaitsAnotherAttempt(payment, now)).toBeFalsy();
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('what a resend tells the merchant', () => {
  it('names type, status, amount and order status, and contradicts nothing when it is the payment\'s state', () => {
    const paid = link({ status: 'settled', transactions: [tx('sale', 'success', { orderStatus: 'settled' })] });
    expect(callbackMessage(paid, 0, at(0))).toEqual({ type: 'sale', status: 'success', amount: '25.00', currency: 'USD', orderStatus: 'settled', paymentStatus: 'settled' });
  });

  it('warns when the order status it carries is not the payment\'s now: a decline after the payment (the issue: 02/38, then 01/38)', () => {
    const p = link({ status: 'settled', transactions: [heldDecline, tx('sale', 'success', { orderStatus: 'settled' })] });
    expect(callbackMessage(p, 0, at(0))?.contradiction).toBe('It tells the merchant the order is decline, but the payment is settled now: the merchant may take it as the latest state.');
    expect(resendRefusal(p, 0, 'skipped', at(0))).toBe(NOT_RESENDABLE.superseded);
    expect(resendRefusal(p, 0, 'delivered', at(0))).toBe(NOT_RESENDABLE.superseded);
    expect(resendRefusal(p, 1, 'delivered', at(0))).toBeUndefined();
  });

  it('names the reason of the state it contradicts', () => {
    const refunded = link({ status: 'refund', reason: 'Refunded.', transactions: [tx('sale', 'success', { orderStatus: 'settled' }), tx('refund', 'success', { orderStatus: 'refund' })] });
    expect(callbackMessage(refunded, 0, at(0))?.contradiction).toBe('It tells the merchant the order is settled, but the payment is refund (Refunded.) now: the merchant may take it as the latest state.');
    expect(callbackMessage(refunded, 1, at(0))).not.toHaveProperty('contradiction');
  });
});
