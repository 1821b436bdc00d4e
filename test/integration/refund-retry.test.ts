import { randomUUID } from 'node:crypto';
import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { ManualClock } from '../../lambdas/ports/clock';
import type { RecurringResponse } from '../../lambdas/use-cases/recurring-payment';
import { HASH_NOT_VALID, invalidRequest, ledgerOf, openSession, operationsOf, paidPayment, recurringChain, recurringOf, refundOf, refusal, retryOf, statusOf, storedPayment, transactionsOf, voidOf } from '../support/payments';
import { paidAs, serviceForFile } from '../support/suites';

/**
 * Refund and retry, the platform's extensions (protocol.md §3, §4): both answer
 * {payment_id, result: "accepted"}; the outcome shows in the payment's status.
 */
const T0 = new Date('2030-03-01T07:00:00.000Z');
const REFUND_TOO_BIG = refusal(208006, 'REFUND_AMOUNT_TOO_BIG');
const REFUND_NOT_ALLOWED = refusal(208005, 'REFUND_NOT_ALLOWED');
const RETRY_NOT_ALLOWED = refusal(208011, 'RETRY_NOT_ALLOWED');
const NOT_FOUND = refusal(208001, 'PAYMENT_NOT_FOUND');

const clock = new ManualClock(T0);
const { service, merchants: [shop, otherShop] } = serviceForFile({ clock, clockAt: T0, merchants: [{ name: 'Gift Shop' }, { name: 'Other Shop' }] });

const settled = (amount = '25.00', card = '01/38') => paidAs(service, shop, 'settled', { card, order: { amount } });

describe('refund', () => {
  it('refunds the whole amount: accepted, then status refund', async () => {
    const paid = await settled('25.00');
    const res = await refundOf(service, shop, paid.paymentId, '25.00');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ payment_id: paid.paymentId, result: 'accepted' });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'refund', refunded_amount: '25.00' });
  });

  it('refunds in two parts up to the amount: settled after the first, refund after the second', async () => {
    const paid = await settled('25.00');
    expect((await refundOf(service, shop, paid.paymentId, '10.00')).json).toEqual({ payment_id: paid.paymentId, result: 'accepted' });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'settled', refunded_amount: '10.00' });
    expect((await refundOf(service, shop, paid.paymentId, '15.00')).json).toEqual({ payment_id: paid.paymentId, result: 'accepted' });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'refund', refunded_amount: '25.00' });
  });

  it('accepts the amount as a JSON number, signed as written', async () => {
    const paid = await settled('25.00');
    const res = await refundOf(service, shop, paid.paymentId, 5);
    expect(res.json).toEqual({ payment_id: paid.paymentId, result: 'accepted' });
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ refunded_amount: '5.00' });
  });

  it('refuses more than the amount with 208006, also after a partial refund', async () => {
    const paid = await settled('25.00');
    const over = await refundOf(service, shop, paid.paymentId, '25.01');
    expect(over.status).toBe(400);
    expect(over.json).toEqual(REFUND_TOO_BIG);
    await refundOf(service, shop, paid.paymentId, '10.00');
    const rest = await refundOf(service, shop, paid.paymentId, '15.01');
    expect(rest.json).toEqual(REFUND_TOO_BIG);
    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'settled', refunded_amount: '10.00' });
  });

  it('refuses a payment that is not settled with 208005: prepare, declined, voided, fully refunded', async () => {
    const prepare = await openSession(service, shop);
    const declined = await paidPayment(service, shop, { card: '02/38' });
    const voided = await settled();
    await voidOf(service, shop, voided.paymentId);
    const refunded = await settled('25.00');
    await refundOf(service, shop, refunded.paymentId, '25.00');
    for (const paymentId of [prepare.paymentId, declined.paymentId, voided.paymentId, refunded.paymentId]) {
      const res = await refundOf(service, shop, paymentId, '1.00');
      expect([res.status, res.json]).toEqual([409, REFUND_NOT_ALLOWED]);
    }
  });

  it('validates the amount in the payment currency', async () => {
    const paid = await settled('25.00');
    const res = await refundOf(service, shop, paid.paymentId, '1.5');
    expect(res.status).toBe(400);
    expect(res.json).toEqual(invalidRequest('amount: This value is not valid.'));
    const zero = await refundOf(service, shop, paid.paymentId, '0.00');
    expect(zero.json).toEqual(invalidRequest('amount: This value should be greater than 0.'));
  });

  it("answers 208001 for another merchant's payment, and a wrong hash with the hash envelope", async () => {
    const paid = await settled();
    const foreign = await refundOf(service, otherShop, paid.paymentId, '1.00');
    expect([foreign.status, foreign.json]).toEqual([404, NOT_FOUND]);
    const forged = await service.post('/api/v1/payment/refund', { merchant_key: shop.merchant_key, payment_id: paid.paymentId, amount: '1.00', hash: 'b'.repeat(40) });
    expect([forged.status, forged.json]).toEqual([400, HASH_NOT_VALID]);
    expect((await storedPayment(service, paid.paymentId)).refundedMinor).toBeUndefined();
  });

  it('accepts exactly three of ten concurrent refunds of 30% each; the others get 208006', async () => {
    const paid = await settled('100.00');
    const answers = await Promise.all(Array.from({ length: 10 }, () => refundOf(service, shop, paid.paymentId, '30.00')));
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted.map((a) => a.json)).toEqual(Array(3).fill({ payment_id: paid.paymentId, result: 'accepted' }));
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.json])).toEqual(Array(7).fill([400, REFUND_TOO_BIG]));

    await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'settled', refunded_amount: '90.00' });
    const item = await storedPayment(service, paid.paymentId);
    expect(item.refundedMinor).toBe(9000);
    const refunds = operationsOf(item.transactions).filter((o) => o.outcome.type === 'refund');
    expect(refunds.map((o) => [o.statuses, o.outcome.amountMinor])).toEqual(Array(3).fill([['waiting', 'success'], 3000]));
    expect((await ledgerOf(service, paid.paymentId)).filter((e) => String(e.idempotencyKey).includes('.refund.'))).toHaveLength(3);
  });

  it('gives the amount back when the acquirer declines the refund (card 07/38)', async () => {
    const paid = await settled('25.00', '07/38');
    const res = await refundOf(service, shop, paid.paymentId, '10.00');
    expect(res.json).toEqual({ payment_id: paid.paymentId, result: 'accepted' });
    const status = await statusOf(service, shop, paid.paymentId);
    expect(status.status).toBe('settled');
    expect(status.refunded_amount).toBeUndefined();
    const item = await storedPayment(service, paid.paymentId);
    expect(item.refundedMinor ?? 0).toBe(0);
    expect(item.refundHeldMinor).toBe(0);
    const refunds = operationsOf(item.transactions).filter((o) => o.outcome.type === 'refund');
    expect(refunds).toEqual([
      {
        transId: expect.any(String),
        statuses: ['waiting', 'fail'],
        outcome: expect.objectContaining({ type: 'refund', status: 'fail', amountMinor: 1000, reason: SANDBOX_REASONS.refundDeclined }),
      },
    ]);
    // Nothing is held back: the whole amount can still be asked for.
    expect((await refundOf(service, shop, paid.paymentId, '25.00')).status).toBe(200);
  });

  it('keeps one operation per refund in the history (waiting, then its outcome) with type, amount, time and trans id', async () => {
    const paid = await settled('25.00');
    clock.set('2030-03-01T09:00:00.000Z');
    await refundOf(service, shop, paid.paymentId, '5.00');
    clock.set('2030-03-01T10:00:00.000Z');
    await refundOf(service, shop, paid.paymentId, '20.00');
    const operations = operationsOf(await transactionsOf(service, paid.paymentId));
    expect(operations).toEqual([
      { transId: expect.any(String), statuses: ['success'], outcome: expect.objectContaining({ type: 'sale', amountMinor: 2500, at: T0.toISOString() }) },
      { transId: expect.any(String), statuses: ['waiting', 'success'], outcome: expect.objectContaining({ type: 'refund', amountMinor: 500, at: '2030-03-01T09:00:00.000Z' }) },
      { transId: expect.any(String), statuses: ['waiting', 'success'], outcome: expect.objectContaining({ type: 'refund', amountMinor: 2000, at: '2030-03-01T10:00:00.000Z' }) },
    ]);
    for (const o of operations) expect(o.transId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('retry of a soft-declined recurring payment', () => {
  const chain = () => recurringChain(service, shop);
  const charge = async (amount: string) => {
    const init = await chain();
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { number: `r-${randomUUID().slice(0, 8)}`, amount } });
    expect(res.status).toBe(200);
    return res.json;
  };

  it('retries an amount ending in .52 (soft decline): accepted, then settled', async () => {
    const declined = await charge('9.52');
    expect(declined).toMatchObject({ status: 'declined', reason: SANDBOX_REASONS.softDeclined });
    const res = await retryOf(service, shop, declined.payment_id);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ payment_id: declined.payment_id, result: 'accepted' });
    const status = await statusOf(service, shop, declined.payment_id);
    expect(status.status).toBe('settled');
    expect(status.reason).toBeUndefined();
    // Settled by the retry: nothing left to retry.
    expect((await retryOf(service, shop, declined.payment_id)).json).toEqual(RETRY_NOT_ALLOWED);
  });

  it('lets one of five concurrent retries charge; the others are refused with 208011', async () => {
    const declined = await charge('9.52');
    const answers = await Promise.all(Array.from({ length: 5 }, () => retryOf(service, shop, declined.payment_id)));
    expect(answers.filter((a) => a.status === 200).map((a) => a.json)).toEqual([{ payment_id: declined.payment_id, result: 'accepted' }]);
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.json])).toEqual(Array(4).fill([409, RETRY_NOT_ALLOWED]));
    const item = await storedPayment(service, declined.payment_id);
    expect(item.status).toBe('settled');
    expect(item.transactions.filter((t) => t.type === 'recurring' && t.status === 'success')).toHaveLength(1);
  });

  it('refuses a hard decline (.51) with 208011', async () => {
    const declined = await charge('9.51');
    expect(declined.status).toBe('declined');
    const res = await retryOf(service, shop, declined.payment_id);
    expect([res.status, res.json]).toEqual([409, RETRY_NOT_ALLOWED]);
    expect((await storedPayment(service, declined.payment_id)).attempt).toBe(1);
  });

  it('refuses a settled recurring payment and a page payment declined by the card with 208011', async () => {
    const charged = await charge('9.00');
    expect((await retryOf(service, shop, charged.payment_id)).json).toEqual(RETRY_NOT_ALLOWED);
    const pageDecline = await paidPayment(service, shop, { card: '02/38', close: true });
    expect(pageDecline.status.status).toBe('decline');
    const res = await retryOf(service, shop, pageDecline.paymentId);
    expect([res.status, res.json]).toEqual([409, RETRY_NOT_ALLOWED]);
  });

  it("answers 208001 for another merchant's payment", async () => {
    const declined = await charge('9.52');
    const res = await retryOf(service, otherShop, declined.payment_id);
    expect([res.status, res.json]).toEqual([404, NOT_FOUND]);
    expect((await storedPayment(service, declined.payment_id)).status).toBe('decline');
  });
});
