import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { VOID_REFUNDED_REASON, VOID_WINDOW_REASON } from '../../lambdas/domain/void-window';
import { ManualClock } from '../../lambdas/ports/clock';
import type { VoidResponse } from '../../lambdas/protocol/merchant/void';
import { HASH_NOT_VALID, ledgerOf, openSession, paidPayment, refundOf, refusal, statusOf, storedPayment, transactionsOf, voidOf } from '../support/payments';
import { paidAs, serviceForFile } from '../support/suites';

/**
 * POST /api/v1/payment/void (seed spec 2.5, §3, §8): a settled payment can be voided on the day of
 * the payment before 21:00 UTC+3; every later request is answered FAIL with the reason.
 */
const VOID = '/api/v1/payment/void';
/** A wall-clock time at UTC+3. */
const at3 = (local: string) => new Date(`${local}+03:00`);
const DAY = '2030-03-01';
const NOT_SETTLED = refusal(208013, 'VOID_NOT_SETTLED');
const NOT_FOUND = refusal(208001, 'PAYMENT_NOT_FOUND');

const clock = new ManualClock(at3(`${DAY}T10:00:00`));
const { service, merchants: [shop, otherShop] } = serviceForFile({ clock, merchants: [{ name: 'Gift Shop' }, { name: 'Other Shop' }] });

/** A payment settled at the given local time (UTC+3) with the given test card. */
async function paidAt(local: string, card = '01/38') {
  clock.set(at3(local));
  return paidAs(service, shop, 'settled', { card, order: { amount: '25.00' } });
}

const voidAt = (local: string, paymentId: string, merchant = shop) => {
  clock.set(at3(local));
  return voidOf<VoidResponse>(service, merchant, paymentId);
};

describe('inside the window', () => {
  it('voids a payment the same day before 21:00 UTC+3: SUCCESS, payment_status void', async () => {
    const paid = await paidAt(`${DAY}T09:30:00`);
    const res = await voidAt(`${DAY}T14:45:10`, paid.paymentId);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'SUCCESS',
      payment_status: 'void',
      payment_id: paid.paymentId,
      date: '2030-03-01 11:45:10',
      order: { number: paid.order.number, amount: '25.00', currency: 'USD', description: 'Gift box' },
    });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'void' });
  });

  it('voids at 20:59:59 UTC+3, the last second of the window', async () => {
    const paid = await paidAt(`${DAY}T00:00:00`);
    const res = await voidAt(`${DAY}T20:59:59`, paid.paymentId);
    expect(res.json).toMatchObject({ status: 'SUCCESS', payment_status: 'void' });
  });

  it('answers a second void with 208013: the payment is no longer settled', async () => {
    const paid = await paidAt(`${DAY}T10:00:00`);
    await voidAt(`${DAY}T10:05:00`, paid.paymentId);
    const again = await voidAt(`${DAY}T10:06:00`, paid.paymentId);
    expect(again.status).toBe(409);
    expect(again.json).toEqual(NOT_SETTLED);
  });

  it('lets exactly one of fifty concurrent voids succeed; the others are refused, none fails', async () => {
    const paid = await paidAt(`${DAY}T10:00:00`);
    clock.set(at3(`${DAY}T11:00:00`));
    const answers = await Promise.all(Array.from({ length: 50 }, () => voidOf<VoidResponse>(service, shop, paid.paymentId)));
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const wins = answers.filter((a) => a.status === 200 && a.json.status === 'SUCCESS');
    expect(wins).toHaveLength(1);
    const others = answers.filter((a) => !wins.includes(a));
    expect(others.map((a) => [a.status, a.json])).toEqual(Array(49).fill([409, NOT_SETTLED]));

    const transactions = await transactionsOf(service, paid.paymentId);
    expect(transactions.filter((t) => t.type === 'void')).toEqual([expect.objectContaining({ type: 'void', status: 'success' })]);
    expect((await ledgerOf(service, paid.paymentId)).filter((e) => e.operation === 'void')).toHaveLength(1);
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'void' });
  });
});

describe('outside the window: FAIL, payment_status settled, with the reason', () => {
  it.each([
    ['at 21:00:00 UTC+3 the same day', `${DAY}T09:30:00`, `${DAY}T21:00:00`],
    ['at 23:59:59 UTC+3 the same day', `${DAY}T09:30:00`, `${DAY}T23:59:59`],
    ['the next day at 00:00:00 UTC+3', `${DAY}T09:30:00`, '2030-03-02T00:00:00'],
    ['the next day at 10:00 UTC+3', `${DAY}T20:59:58`, '2030-03-02T10:00:00'],
    ['for a payment made at 21:00:00 UTC+3, right away', `${DAY}T21:00:00`, `${DAY}T21:00:01`],
    ['for a payment made at 23:59:59 UTC+3, right away', `${DAY}T23:59:59`, `${DAY}T23:59:59`],
  ])('%s', async (_name, paidLocal, voidLocal) => {
    const paid = await paidAt(paidLocal);
    const res = await voidAt(voidLocal, paid.paymentId);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'FAIL',
      payment_status: 'settled',
      payment_id: paid.paymentId,
      date: at3(voidLocal).toISOString().slice(0, 19).replace('T', ' '),
      reason: VOID_WINDOW_REASON,
      order: { number: paid.order.number, amount: '25.00', currency: 'USD', description: 'Gift box' },
    });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'settled' });
    // The acquirer was never asked.
    expect((await ledgerOf(service, paid.paymentId)).filter((e) => e.operation === 'void')).toEqual([]);
  });
});

describe('after a refund', () => {
  it('answers FAIL with the reason once part of the payment was refunded (a void would give it back twice)', async () => {
    const paid = await paidAt(`${DAY}T10:00:00`);
    expect((await refundOf(service, shop, paid.paymentId, '5.00')).status).toBe(200);
    const res = await voidAt(`${DAY}T10:30:00`, paid.paymentId);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'FAIL', payment_status: 'settled', reason: VOID_REFUNDED_REASON });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'settled', refunded_amount: '5.00' });
    expect((await ledgerOf(service, paid.paymentId)).filter((e) => e.operation === 'void')).toEqual([]);
  });

  it('still voids when the only refund was declined (nothing was given back)', async () => {
    const paid = await paidAt(`${DAY}T10:00:00`, '07/38');
    await refundOf(service, shop, paid.paymentId, '5.00');
    expect((await storedPayment(service, paid.paymentId))).toMatchObject({ refundHeldMinor: 0, refunds: {} });
    const res = await voidAt(`${DAY}T10:30:00`, paid.paymentId);
    expect(res.json).toMatchObject({ status: 'SUCCESS', payment_status: 'void' });
  });
});

describe('declined by the acquirer', () => {
  it('answers FAIL with the sandbox reason for card 04/38 and records the failed void', async () => {
    const paid = await paidAt(`${DAY}T10:00:00`, '04/38');
    const res = await voidAt(`${DAY}T10:30:00`, paid.paymentId);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'FAIL', payment_status: 'settled', payment_id: paid.paymentId, reason: SANDBOX_REASONS.voidDeclined });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'settled' });
    const transactions = await transactionsOf(service, paid.paymentId);
    expect(transactions.map((t) => [t.type, t.status, t.reason])).toEqual([
      ['sale', 'success', undefined],
      ['void', 'fail', SANDBOX_REASONS.voidDeclined],
    ]);
  });
});

describe('refusals', () => {
  it('refuses to void a declined payment with 208013', async () => {
    clock.set(at3(`${DAY}T10:00:00`));
    const declined = await paidPayment(service, shop, { card: '02/38', close: true });
    expect(declined.status.status).toBe('decline');
    const res = await voidOf(service, shop, declined.paymentId);
    expect(res.status).toBe(409);
    expect(res.json).toEqual(NOT_SETTLED);
  });

  it('refuses to void a payment still in prepare with 208013', async () => {
    clock.set(at3(`${DAY}T10:00:00`));
    const session = await openSession(service, shop);
    const res = await voidOf(service, shop, session.paymentId);
    expect(res.status).toBe(409);
    expect(res.json).toEqual(NOT_SETTLED);
  });

  it("answers 208001 for another merchant's payment, exactly as for one that does not exist", async () => {
    const paid = await paidAt(`${DAY}T10:00:00`);
    const foreign = await voidAt(`${DAY}T10:01:00`, paid.paymentId, otherShop);
    const missing = await voidOf(service, otherShop, '6c1d2b8e-0000-4000-8000-000000000000');
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual(NOT_FOUND);
    expect({ status: missing.status, body: missing.text }).toEqual({ status: foreign.status, body: foreign.text });
    expect((await storedPayment(service, paid.paymentId)).status).toBe('settled');
  });

  it('refuses a wrong hash with the hash envelope and leaves the payment settled', async () => {
    const paid = await paidAt(`${DAY}T10:00:00`);
    const res = await service.post(VOID, { merchant_key: shop.merchant_key, payment_id: paid.paymentId, hash: '0'.repeat(40) });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(HASH_NOT_VALID);
    expect((await storedPayment(service, paid.paymentId)).status).toBe('settled');
  });
});
