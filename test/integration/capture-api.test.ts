import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { ManualClock } from '../../lambdas/ports/clock';
import type { CaptureResponse } from '../../lambdas/protocol/merchant/capture';
import type { RecurringResponse } from '../../lambdas/use-cases/recurring-payment';
import { HASH_NOT_VALID, captureOf, openSession, operationsOf, paidPayment, recurringChain, recurringOf, refundOf, refusal, statusOf, storedPayment, voidOf } from '../support/payments';
import { paidAs, serviceForFile } from '../support/suites';

/**
 * DMS and POST /api/v1/payment/capture (protocol.md §3, §4): a DMS merchant's page payment is an
 * authorization (status pending) until it is captured, at most once, for at most the authorized
 * amount; a declined capture leaves it pending.
 */
const T0 = new Date('2030-03-01T07:00:00.000Z');
const NOT_PENDING = refusal(208003, 'CAPTURE_NOT_PENDING');
const TOO_BIG = refusal(208004, 'CAPTURE_AMOUNT_TOO_BIG');
const NOT_FOUND = refusal(208001, 'PAYMENT_NOT_FOUND');

const clock = new ManualClock(T0);
const { service, merchants: [dmsShop, smsShop] } = serviceForFile({ clock, clockAt: T0, merchants: [{ name: 'Two Step Shop', settings: { dms: true } }, { name: 'One Step Shop' }] });

/** A DMS page payment: authorized, status pending. */
async function authorized(card = '01/38', amount = '25.00') {
  const paid = await paidAs(service, dmsShop, 'pending', { card, order: { amount } });
  expect(paid.page.status).toBe(303);
  return paid;
}

describe('a DMS page payment', () => {
  it('is reported pending, and the customer is sent to success_url', async () => {
    const paid = await authorized();
    expect(paid.page.headers.location).toBe('https://shop.example/success');
    expect(await storedPayment(service, paid.paymentId)).toMatchObject({ status: 'pending', transactions: [expect.objectContaining({ type: 'sale', status: 'success' })] });
  });
});

describe('POST /api/v1/payment/capture', () => {
  it('captures part of the authorization: settled, SUCCESS', async () => {
    const paid = await authorized();
    clock.set('2030-03-01T08:20:05.000Z');
    const res = await captureOf<CaptureResponse>(service, dmsShop, paid.paymentId, '10.00');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ payment_id: paid.paymentId, status: 'settled', trans_status: 'SUCCESS', date: '2030-03-01 08:20:05' });
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'settled' });
    const item = await storedPayment(service, paid.paymentId);
    expect(item.capturedMinor).toBe(1000);
    expect(operationsOf(item.transactions).map((o) => [o.outcome.type, o.statuses, o.outcome.amountMinor, o.outcome.at])).toEqual([
      ['sale', ['success'], 2500, T0.toISOString()],
      ['capture', ['success'], 1000, '2030-03-01T08:20:05.000Z'],
    ]);
  });

  it('captures the whole authorization, the amount sent as a JSON number', async () => {
    const paid = await authorized();
    const res = await captureOf<CaptureResponse>(service, dmsShop, paid.paymentId, 25);
    expect(res.json).toMatchObject({ status: 'settled', trans_status: 'SUCCESS' });
  });

  it('refuses more than the authorized amount with 208004 and leaves the payment pending', async () => {
    const paid = await authorized();
    const res = await captureOf(service, dmsShop, paid.paymentId, '25.01');
    expect([res.status, res.json]).toEqual([400, TOO_BIG]);
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'pending' });
  });

  it('refuses a second capture, and a settled one-step payment, with 208003', async () => {
    const paid = await authorized();
    await captureOf(service, dmsShop, paid.paymentId, '10.00');
    const again = await captureOf(service, dmsShop, paid.paymentId, '5.00');
    expect([again.status, again.json]).toEqual([409, NOT_PENDING]);
    const sale = await paidPayment(service, smsShop);
    expect(sale.status.status).toBe('settled');
    const res = await captureOf(service, smsShop, sale.paymentId, '1.00');
    expect([res.status, res.json]).toEqual([409, NOT_PENDING]);
  });

  it('refuses a payment that was never authorized with 208003', async () => {
    const session = await openSession(service, dmsShop);
    const res = await captureOf(service, dmsShop, session.paymentId, '1.00');
    expect([res.status, res.json]).toEqual([409, NOT_PENDING]);
  });

  it('answers FAIL for a capture the acquirer declines (03/38); the payment stays pending', async () => {
    const paid = await authorized('03/38');
    const res = await captureOf<CaptureResponse>(service, dmsShop, paid.paymentId, '25.00');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      payment_id: paid.paymentId,
      status: 'pending',
      trans_status: 'FAIL',
      date: '2030-03-01 07:00:00',
      reason: SANDBOX_REASONS.captureDeclined,
    });
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'pending' });
    const item = await storedPayment(service, paid.paymentId);
    expect(item.operation).toBeUndefined();
    expect(item.transactions.map((t) => [t.type, t.status, t.reason])).toEqual([
      ['sale', 'success', undefined],
      ['capture', 'fail', SANDBOX_REASONS.captureDeclined],
    ]);
  });

  it('lets exactly one of ten concurrent captures capture; the others are refused with 208003, none fails', async () => {
    const paid = await authorized();
    const answers = await Promise.all(Array.from({ length: 10 }, () => captureOf<CaptureResponse>(service, dmsShop, paid.paymentId, '25.00')));
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const wins = answers.filter((a) => a.status === 200);
    expect(wins.map((a) => a.json)).toEqual([{ payment_id: paid.paymentId, status: 'settled', trans_status: 'SUCCESS', date: '2030-03-01 07:00:00' }]);
    expect(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.json])).toEqual(Array(9).fill([409, NOT_PENDING]));
    const item = await storedPayment(service, paid.paymentId);
    expect(item.status).toBe('settled');
    expect(item.transactions.filter((t) => t.type === 'capture')).toEqual([expect.objectContaining({ status: 'success', amountMinor: 2500 })]);
  });

  it("answers 208001 for another merchant's payment, and a wrong hash with the hash envelope", async () => {
    const paid = await authorized();
    const foreign = await captureOf(service, smsShop, paid.paymentId, '1.00');
    expect([foreign.status, foreign.json]).toEqual([404, NOT_FOUND]);
    const forged = await service.post('/api/v1/payment/capture', { merchant_key: dmsShop.merchant_key, payment_id: paid.paymentId, amount: '1.00', hash: 'c'.repeat(40) });
    expect([forged.status, forged.json]).toEqual([400, HASH_NOT_VALID]);
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'pending' });
  });
});

describe('after a capture', () => {
  it('refunds at most what was captured (208006 beyond it)', async () => {
    const paid = await authorized('01/38', '25.00');
    await captureOf(service, dmsShop, paid.paymentId, '10.00');
    const over = await refundOf(service, dmsShop, paid.paymentId, '15.00');
    expect([over.status, over.json]).toEqual([400, refusal(208006, 'REFUND_AMOUNT_TOO_BIG')]);
    const all = await refundOf(service, dmsShop, paid.paymentId, '10.00');
    expect(all.json).toEqual({ payment_id: paid.paymentId, result: 'accepted' });
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'refund', refunded_amount: '10.00' });
  });

  it('cannot void an authorization (208013), but can void the captured payment the same day', async () => {
    const paid = await authorized();
    const pending = await voidOf(service, dmsShop, paid.paymentId);
    expect([pending.status, pending.json]).toEqual([409, refusal(208013, 'VOID_NOT_SETTLED')]);
    await captureOf(service, dmsShop, paid.paymentId, '25.00');
    const voided = await voidOf(service, dmsShop, paid.paymentId);
    expect(voided.json).toMatchObject({ status: 'SUCCESS', payment_status: 'void' });
  });
});

describe('recurring charges of a DMS merchant', () => {
  it('are settled at once (merchant-initiated charges are sales), while the first payment waits for its capture', async () => {
    const init = await recurringChain(service, dmsShop);
    expect(init.status.status).toBe('pending');
    const res = await recurringOf<RecurringResponse>(service, dmsShop, { initTransId: init.initTransId, token: init.token });
    expect(res.json.status).toBe('settled');
  });
});
