import fc from 'fast-check';
import {
  applyChange,
  checkedAtRest,
  claimAttempt,
  closeLink,
  guardHolds,
  recordDecline,
  recordOperationAnswer,
  recordRefundAnswer,
  refundLeftMinor,
  startRefund,
  startVoid,
  type Payment,
  type PendingOperation,
  type PendingRefund,
} from '../../lambdas/domain/payment';
import { settledPayment } from '../support/payment-fixtures';

/**
 * The payment's transitions as functions: what each decides on a payment, and that the guard it
 * writes holds on the payment it was decided on (a use case that lost no race always applies it).
 * Whether DynamoDB's condition is the same guard is test/contract/'s property.
 */
const T0 = new Date('2031-06-01T08:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const recheck = { name: 'reconcile', dueAt: at(2).toISOString() };

const settled = (extra: Partial<Payment> = {}): Payment => settledPayment(T0, { refunds: {}, watching: {}, ...extra });
const refundOf = (amountMinor: number): PendingRefund => ({ amountMinor, idempotencyKey: `p-1.refund.${amountMinor}`, startedAt: T0.toISOString(), actor: 'merchant:shop' });

describe('startRefund: what a new refund may take', () => {
  it.each([
    ['a payment not settled', settled({ status: 'pending' }), 100, 'REFUND_NOT_ALLOWED'],
    ['more than is left', settled({ refundHeldMinor: 700 }), 400, 'REFUND_AMOUNT_TOO_BIG'],
    ['more than was captured', settled({ capturedMinor: 600 }), 700, 'REFUND_AMOUNT_TOO_BIG'],
    ['while a void is in flight', settled({ operation: { kind: 'void', transId: 'v', amountMinor: 1000, idempotencyKey: 'k', startedAt: T0.toISOString(), actor: 'x' } }), 100, 'OPERATION_IN_PROGRESS'],
  ])('refuses %s before any write', (_, payment, amountMinor, refused) => {
    expect(startRefund(payment, { transId: 'r-1', refund: refundOf(amountMinor), recheck }, T0)).toEqual({ refused });
  });

  it('reserves what fits, and the reservation is what the next refund must fit beside', () => {
    const payment = settled({ refundHeldMinor: 300, refundedMinor: 300 });
    const intent = startRefund(payment, { transId: 'r-2', refund: refundOf(700), recheck }, T0);
    if ('refused' in intent) throw new Error(intent.refused);
    expect(guardHolds(intent.guard, payment)).toBe(true);
    const after = applyChange(payment, intent.change);
    expect(after).toMatchObject({ status: 'settled', refundHeldMinor: 1000, refunds: { 'r-2': refundOf(700) } });
    expect(after.transactions.at(-1)).toMatchObject({ transId: 'r-2', type: 'refund', status: 'waiting', orderStatus: 'settled' });
    expect(refundLeftMinor(after)).toBe(0);
    expect(startRefund(after, { transId: 'r-3', refund: refundOf(1), recheck }, T0)).toEqual({ refused: 'REFUND_AMOUNT_TOO_BIG' });
  });
});

describe('recordRefundAnswer: the refunded total and the status', () => {
  const inFlight = (amountMinor: number, extra: Partial<Payment> = {}) => settled({ refundHeldMinor: amountMinor, refunds: { r: refundOf(amountMinor) }, ...extra });
  it.each([
    ['an approved refund of the rest ends in refund', inFlight(1000), 1000, true, { status: 'refund', refundedMinor: 1000, refundHeldMinor: 1000 }],
    ['an approved part stays settled', inFlight(300), 300, true, { status: 'settled', refundedMinor: 300, refundHeldMinor: 300 }],
    ['a declined refund gives its reservation back', inFlight(300), 300, false, { status: 'settled', refundHeldMinor: 0 }],
  ])('%s', (_, payment, amountMinor, approved, expected) => {
    const t = recordRefundAnswer(payment, 'r', refundOf(amountMinor), { approved, acquirerRef: 'ref-r', ...(approved ? {} : { reason: 'Declined.' }) }, at(1));
    expect(guardHolds(t.guard, payment)).toBe(true);
    const after = applyChange(payment, t.change);
    expect(after).toMatchObject(expected);
    expect(after.refunds).toEqual({});
    // The answer is recorded once: the same answer again no longer holds.
    expect(guardHolds(t.guard, after)).toBe(false);
  });
});

describe('exclusive operations', () => {
  const op: PendingOperation = { kind: 'void', transId: 'v-1', amountMinor: 1000, idempotencyKey: 'p-1.void.v-1', startedAt: T0.toISOString(), actor: 'merchant:shop' };
  it('a void starts inside its window with nothing refunded, once', () => {
    const start = startVoid(op, recheck, T0);
    expect(guardHolds(start.guard, settled())).toBe(true);
    expect(guardHolds(start.guard, settled({ voidableUntil: T0.toISOString() }))).toBe(false);
    expect(guardHolds(start.guard, settled({ refundHeldMinor: 100 }))).toBe(false);
    expect(guardHolds(start.guard, settled(), new Set(['v-1']))).toBe(false);
    const started = applyChange(settled(), start.change);
    expect(guardHolds(start.guard, started)).toBe(false);
    const answered = recordOperationAnswer(started, op, { approved: true, acquirerRef: 'ref-v' }, at(1));
    expect(guardHolds(answered.guard, started)).toBe(true);
    expect(applyChange(started, answered.change)).toMatchObject({ status: 'void' });
    expect(applyChange(started, answered.change).operation).toBeUndefined();
  });
});

describe('attempts on a link', () => {
  const link = (extra: Partial<Payment> = {}): Payment =>
    settled({
      status: 'prepare',
      authorization: undefined,
      voidableUntil: undefined,
      transactions: [],
      checkout: { secretHash: 'h', operation: 'purchase', successUrl: 'https://shop.test/ok', reqToken: false, recurringInit: false, expiresAt: at(30).toISOString() },
      ...extra,
    });
  const ref = { attempt: 1, transId: 't-1', idempotencyKey: 'p-1.1' };
  const claim = (p: Payment, now: Date) => claimAttempt(p, { ref, card: { mask: '411111****1111', brand: 'visa', expMonth: 1, expYear: 2038 } as never, customer: {}, recheck }, now);

  it('an attempt is claimed while the link is open and nothing is in flight, by one submission only', () => {
    expect(guardHolds(claim(link(), T0).guard, link())).toBe(true);
    expect(guardHolds(claim(link(), at(30)).guard, link())).toBe(false);
    const claimed = applyChange(link(), claim(link(), T0).change);
    expect(guardHolds(claim(link(), T0).guard, claimed)).toBe(false);
  });

  it('an attempt names the account it goes through, and an attempt through the stage\'s forgets an earlier one\'s', () => {
    const through = (p: Payment, acquirerAccount?: string) =>
      applyChange(p, claimAttempt(p, { ref, card: { mask: '411111****1111', brand: 'visa', expMonth: 1, expYear: 2038 } as never, customer: {}, recheck, ...(acquirerAccount ? { acquirerAccount } : {}) }, T0).change);
    expect(through(link(), 'shop-a').acquirerAccount).toBe('shop-a');
    expect(through(link({ acquirerAccount: 'shop-a' }), 'shop-b').acquirerAccount).toBe('shop-b');
    expect(through(link({ acquirerAccount: 'shop-a' })).acquirerAccount).toBeUndefined();
  });

  it('the last decline the merchant allows closes the link; an earlier one is held, and Close then queues its callback', () => {
    const inFlight = (declines: number) => link({ attempt: declines + 1, declines, inFlight: { ...ref, attempt: declines + 1, startedAt: T0.toISOString() } });
    const decline = (p: Payment) => applyChange(p, recordDecline(p, { ref: { ...ref, attempt: p.attempt! }, from: 'request', type: 'sale', acquirerRef: 'r', reason: 'Declined.', soft: false, maxDeclines: 3 }, T0).change);
    const last = decline(inFlight(2));
    expect(last.linkClosed).toMatchObject({ why: 'declines' });
    const held = decline(inFlight(0));
    expect(held.linkClosed).toBeUndefined();
    expect(held.transactions.at(-1)).toMatchObject({ status: 'fail', held: true, orderStatus: 'decline' });
    const close = closeLink(held, 'customer', at(1));
    expect(guardHolds(close.guard, held)).toBe(true);
    expect(close.change.sendCallback).toBe(held.transactions.length - 1);
    expect(guardHolds(close.guard, applyChange(held, close.change))).toBe(false);
  });
});

describe('a transition decided on a payment applies to that payment', () => {
  it('holds for refunds of any amount on any refund state', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 1200 }), (refunded, extraHeld, amountMinor) => {
        const payment = settled({ refundedMinor: refunded, refundHeldMinor: Math.min(1000, refunded + extraHeld) });
        const intent = startRefund(payment, { transId: 'r', refund: refundOf(amountMinor), recheck }, T0);
        if ('refused' in intent) return expect(intent.refused === 'REFUND_AMOUNT_TOO_BIG' && amountMinor > refundLeftMinor(payment)).toBe(true);
        expect(guardHolds(intent.guard, payment)).toBe(true);
        expect(applyChange(payment, intent.change).refundHeldMinor).toBeLessThanOrEqual(1000);
      }),
    );
  });
});

describe('a scheduled dispute check counted and filed in one write', () => {
  const DAY = 24 * 60 * 60_000;
  it('at rest: the count, and the payment filed for its next check (out of the queue after the last), guarded on nothing having started', () => {
    const p = settledPayment(T0, { disputeChecks: 0 });
    const t = checkedAtRest(p, 0, at(24 * 60 + 1))!;
    expect(t.change.set).toMatchObject({ disputeChecks: 1 });
    expect(t.change.queue).toEqual({ name: 'reconcile', dueAt: new Date(T0.getTime() + 7 * DAY).toISOString() });
    expect(guardHolds(t.guard, p)).toBe(true);
    expect(guardHolds(t.guard, { ...p, operation: { kind: 'void', transId: 'v', amountMinor: 1, idempotencyKey: 'k', startedAt: T0.toISOString() } as PendingOperation })).toBe(false);
    expect(checkedAtRest({ ...p, disputeChecks: 3 }, 3, at(120 * 24 * 60 + 1))!.change.queue).toBeNull();
  });

  it('with anything under way: not decided here (the count alone, and the reconciler\'s refile)', () => {
    const refunding = settledPayment(T0, { disputeChecks: 1, refunds: { r: { amountMinor: 100, idempotencyKey: 'k', startedAt: T0.toISOString() } as PendingRefund } });
    expect(checkedAtRest(refunding, 1, at(7 * 24 * 60 + 1))).toBeUndefined();
  });
});
