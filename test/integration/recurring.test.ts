import { randomUUID } from 'node:crypto';
import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { signFields } from '../../lambdas/domain/hash';
import { ManualClock } from '../../lambdas/ports/clock';
import type { RecurringResponse } from '../../lambdas/use-cases/recurring-payment';
import { HASH_NOT_VALID, invalidRequest, ledgerOf, openSession, protocolDateOf, recurringBody, recurringChain, recurringOf, refusal, sessionBody, statusOf, storedPayment, submitPage, transactionsOf, voidOf } from '../support/payments';
import { serviceForFile } from '../support/suites';

/**
 * Recurring charges (seed spec 2.3, protocol.md §1, §3): a recurring_init payment on the hosted
 * page starts a chain; POST /api/v1/payment/recurring charges its stored card again.
 */
const RECURRING = '/api/v1/payment/recurring';
/** The same path with a Cyrillic "с" (U+0441) as its third letter, percent-encoded as clients send it. */
const RECURRING_CYRILLIC = '/api/v1/payment/re%D1%81urring';
const T0 = new Date('2030-03-01T07:00:00.000Z');
const TOKEN_INVALID = refusal(208020, 'RECURRING_TOKEN_INVALID');

const clock = new ManualClock(T0);
const { service, merchants: [shop, otherShop] } = serviceForFile({ clock, clockAt: T0, merchants: [{ name: 'Box Club' }, { name: 'Other Shop' }] });

/** A chain started with a EUR payment: every later charge is in EUR, whatever is asked. */
const eurChain = (merchant = shop, extra: Parameters<typeof recurringChain>[2] = {}) =>
  recurringChain(service, merchant, { scheduleId: 'monthly-1', order: { currency: 'EUR', amount: '19.99' }, ...extra });

describe('starting a chain: a recurring_init payment on the page', () => {
  it('reports recurring_token, recurring_init_trans_id (the sale), schedule_id and shedule_id', async () => {
    const init = await eurChain();
    expect(init.page.status).toBe(303);
    const [sale] = await transactionsOf(service, init.paymentId);
    expect(sale).toMatchObject({ type: 'sale', status: 'success' });
    expect(init.status).toMatchObject({
      status: 'settled',
      recurring_token: expect.stringMatching(/^[0-9a-f]{64}$/),
      recurring_init_trans_id: sale?.transId,
      schedule_id: 'monthly-1',
      shedule_id: 'monthly-1',
    });
  });

  it('accepts recurring_init sent as the string "true"', async () => {
    const init = await recurringChain(service, shop, { recurringInit: 'true' });
    expect(init.status.recurring_token).toHaveLength(64);
  });

  it('has no recurring token when the payment was declined', async () => {
    const session = await openSession(service, shop, { recurringInit: true });
    await submitPage(service, session, { card: '02/38' });
    const status = await statusOf(service, shop, session.paymentId);
    // The link still takes another attempt: not final yet, so it reads prepare.
    expect(status.status).toBe('prepare');
    expect(status.recurring_token).toBeUndefined();
  });

  it('refuses schedule_id without recurring_init, saying why', async () => {
    const res = await service.signedPost('/api/v1/session', sessionBody(shop, { scheduleId: 'monthly-1' }), shop.password);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(invalidRequest('schedule_id: This value is allowed only when recurring_init is true.'));
  });
});

describe('POST /api/v1/payment/recurring', () => {
  it('charges the chain and answers settled, in the currency of the first payment', async () => {
    const init = await eurChain();
    clock.set('2030-04-01T07:00:00.000Z');
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { number: 'april-1', amount: '19.99', description: 'April box' } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'settled',
      payment_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      date: '2030-04-01 07:00:00',
      schedule_id: 'monthly-1',
      order: { number: 'april-1', amount: '19.99', currency: 'EUR', description: 'April box' },
    });
    // The new payment is a payment of its own, readable by status.
    const status = await statusOf(service, shop, res.json.payment_id);
    expect(status).toMatchObject({ status: 'settled', order: { number: 'april-1', amount: '19.99', currency: 'EUR' }, schedule_id: 'monthly-1' });
    expect(res.json.payment_id).not.toBe(init.paymentId);
  });

  it('takes schedule_id from the request when given', async () => {
    const init = await eurChain();
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, scheduleId: 'weekly-7' });
    expect(res.json).toMatchObject({ status: 'settled', schedule_id: 'weekly-7' });
  });

  it('is served under the Cyrillic spelling of the path too', async () => {
    const init = await eurChain();
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token }, RECURRING_CYRILLIC);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'settled', order: { currency: 'EUR' } });
  });

  it('accepts the initial payment id as recurring_init_trans_id', async () => {
    const init = await eurChain();
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.paymentId, token: init.token });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('settled');
  });

  it('reads the amount in the currency of the chain (JPY: no decimals)', async () => {
    const init = await recurringChain(service, shop, { order: { currency: 'JPY', amount: '1500' } });
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { amount: '1500' } });
    expect(res.json).toMatchObject({ status: 'settled', order: { amount: '1500', currency: 'JPY' } });
    const decimals = await recurringOf(service, shop, { initTransId: init.initTransId, token: init.token, order: { amount: '15.00' } });
    expect(decimals.status).toBe(400);
    expect(decimals.json).toEqual(invalidRequest('order.amount: This value is not valid.'));
  });

  it('accepts the amount as a JSON number, signed in the currency format', async () => {
    const init = await eurChain();
    const body = { ...recurringBody(shop, { initTransId: init.initTransId, token: init.token, order: { number: 'num-1', description: 'Box' } }), order: { number: 'num-1', amount: 10, description: 'Box' } };
    const hash = signFields([init.initTransId, init.token, 'num-1', '10.00', 'Box'], shop.password);
    const res = await service.post<RecurringResponse>(RECURRING, { ...body, hash });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'settled', order: { amount: '10.00', currency: 'EUR' } });
  });

  it('refuses a wrong hash with the hash envelope, and charges nothing', async () => {
    const init = await eurChain();
    const body: Record<string, unknown> = { ...recurringBody(shop, { initTransId: init.initTransId, token: init.token }), hash: 'f'.repeat(40) };
    const res = await service.post(RECURRING, body);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(HASH_NOT_VALID);
    const number = (body.order as { number: string }).number;
    // No payment (its details name the order) was written.
    expect((await service.tableItems()).filter((i) => i.kind === 'payment-details' && (i.order as { number: string }).number === number)).toEqual([]);
  });

  it('refuses a body signed with the currency (the recurring hash has none)', async () => {
    const init = await eurChain();
    const body = recurringBody(shop, { initTransId: init.initTransId, token: init.token, order: { number: 'n-1', amount: '5.00', description: 'Box' } });
    const hash = signFields([init.initTransId, init.token, 'n-1', '5.00', 'EUR', 'Box'], shop.password);
    const res = await service.post(RECURRING, { ...body, hash });
    expect(res.json).toEqual(HASH_NOT_VALID);
  });

  it("refuses another merchant's token with 208020, as if it did not exist", async () => {
    const init = await eurChain();
    const foreign = await recurringOf(service, otherShop, { initTransId: init.initTransId, token: init.token });
    const unknown = await recurringOf(service, otherShop, { initTransId: init.initTransId, token: 'a'.repeat(64) });
    expect(foreign.status).toBe(400);
    expect(foreign.json).toEqual(TOKEN_INVALID);
    expect({ status: unknown.status, body: unknown.json }).toEqual({ status: foreign.status, body: foreign.json });
  });

  it('refuses a token that does not belong to recurring_init_trans_id with 208020', async () => {
    const [a, b] = await Promise.all([eurChain(), eurChain()]);
    const res = await recurringOf(service, shop, { initTransId: b.initTransId, token: a.token });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(TOKEN_INVALID);
    const random = await recurringOf(service, shop, { initTransId: randomUUID(), token: a.token });
    expect(random.json).toEqual(TOKEN_INVALID);
  });

  it('validates the body first: blank token, bad order number, amount in the wrong format', async () => {
    const init = await eurChain();
    const res = await service.signedPost(
      RECURRING,
      { ...recurringBody(shop, { initTransId: init.initTransId, token: '' }), order: { number: 'no spaces', amount: '10', description: 'Box' } },
      shop.password,
    );
    expect(res.status).toBe(400);
    expect(res.json).toEqual(invalidRequest('recurring_token: This value should not be blank.', 'order.number: This value is not valid.'));
    const amount = await recurringOf(service, shop, { initTransId: init.initTransId, token: init.token, order: { amount: '10' } });
    expect(amount.status).toBe(400);
    expect(amount.json).toEqual(invalidRequest('order.amount: This value is not valid.'));
  });
});

describe('declines', () => {
  it('answers declined with the reason for an amount ending in .51 (hard decline)', async () => {
    const init = await eurChain();
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { amount: '7.51' } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'declined', reason: SANDBOX_REASONS.recurringDeclined, order: { amount: '7.51', currency: 'EUR' } });
    await expect(statusOf(service, shop, res.json.payment_id)).resolves.toMatchObject({ status: 'decline', reason: SANDBOX_REASONS.recurringDeclined });
    expect(await storedPayment(service, res.json.payment_id)).toMatchObject({ softDecline: false });
  });

  it('answers declined with the reason for an amount ending in .52 (soft decline: a retry may pass)', async () => {
    const init = await eurChain();
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { amount: '7.52' } });
    expect(res.json).toMatchObject({ status: 'declined', reason: SANDBOX_REASONS.softDeclined });
    expect(await storedPayment(service, res.json.payment_id)).toMatchObject({ status: 'decline', softDecline: true });
  });

  it('cannot charge a card other than 01/38 (its stored credentials do not allow it)', async () => {
    const init = await recurringChain(service, shop, { card: '04/38' });
    expect(init.status.status).toBe('settled');
    const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ status: 'declined', reason: SANDBOX_REASONS.recurringUnavailable });
  });
});

describe('idempotency: one charge per chain and order number', () => {
  it('charges once for 20 identical concurrent requests, and answers them all with that payment', async () => {
    const init = await eurChain();
    const authorize = jest.spyOn(service.deps.acquirer, 'authorize');
    try {
      const input = { initTransId: init.initTransId, token: init.token, order: { number: `burst-${randomUUID().slice(0, 8)}`, amount: '12.00' } };
      const answers = await Promise.all(Array.from({ length: 20 }, () => recurringOf<RecurringResponse>(service, shop, input)));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      const ids = new Set(answers.map((a) => a.json.payment_id));
      expect(ids.size).toBe(1);
      const [paymentId] = [...ids] as [string];
      expect(authorize.mock.calls.filter(([r]) => r.paymentId === paymentId)).toHaveLength(1);
      expect(await ledgerOf(service, paymentId)).toHaveLength(1);
      const item = await storedPayment(service, paymentId);
      expect(item.status).toBe('settled');
      expect(item.transactions.filter((t) => t.type === 'recurring' && t.status === 'success')).toHaveLength(1);
      const payments = (await service.tableItems()).filter((i) => i.kind === 'payment-details' && (i.order as { number: string }).number === input.order.number);
      expect(payments).toHaveLength(1);
    } finally {
      authorize.mockRestore();
    }
  });

  it('answers a replay after the charge with the same payment, without charging again', async () => {
    const init = await eurChain();
    const input = { initTransId: init.initTransId, token: init.token, order: { number: 'replay-1', amount: '3.00' } };
    const first = await recurringOf<RecurringResponse>(service, shop, input);
    clock.advance(60_000);
    const again = await recurringOf<RecurringResponse>(service, shop, input);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(await ledgerOf(service, first.json.payment_id)).toHaveLength(1);
  });

  it('refuses a replay of the order number with a different amount: 409, code 400 "Duplicate request."', async () => {
    const init = await eurChain();
    const first = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { number: 'dup-1', amount: '3.00' } });
    expect(first.json.status).toBe('settled');
    const res = await recurringOf(service, shop, { initTransId: init.initTransId, token: init.token, order: { number: 'dup-1', amount: '4.00' } });
    expect(res.status).toBe(409);
    expect(res.json).toEqual(refusal(400, 'DUPLICATE_REQUEST'));
    expect(await storedPayment(service, first.json.payment_id)).toMatchObject({ order: { amount: '3.00' }, status: 'settled' });
  });

  it('keeps order numbers of different chains apart', async () => {
    const [a, b] = await Promise.all([eurChain(), eurChain()]);
    const order = { number: 'shared-7', amount: '3.00' };
    const [ra, rb] = await Promise.all([
      recurringOf<RecurringResponse>(service, shop, { initTransId: a.initTransId, token: a.token, order }),
      recurringOf<RecurringResponse>(service, shop, { initTransId: b.initTransId, token: b.token, order }),
    ]);
    expect(ra.json.status).toBe('settled');
    expect(rb.json.status).toBe('settled');
    expect(ra.json.payment_id).not.toBe(rb.json.payment_id);
  });
});

describe('one payment, one history', () => {
  it('records the recurring-init sale and its void on the payment, one entry per operation', async () => {
    clock.set('2030-03-01T07:00:00.000Z');
    const init = await eurChain();
    clock.set('2030-03-01T08:15:30.000Z');
    const voided = await voidOf(service, shop, init.paymentId);
    expect(voided.json).toMatchObject({ status: 'SUCCESS', payment_status: 'void' });
    const transactions = await transactionsOf(service, init.paymentId);
    expect(transactions).toEqual([
      expect.objectContaining({ type: 'sale', status: 'success', amountMinor: 1999, at: '2030-03-01T07:00:00.000Z', transId: init.initTransId }),
      expect.objectContaining({ type: 'void', status: 'success', amountMinor: 1999, at: '2030-03-01T08:15:30.000Z', transId: expect.stringMatching(/^[0-9a-f-]{36}$/) }),
    ]);
    expect(new Set(transactions.map((t) => t.transId)).size).toBe(2);
  });

  it('records a recurring charge as one recurring transaction; a soft decline and its retry as two', async () => {
    const init = await eurChain();
    const charged = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { amount: '2.00' } });
    expect(await transactionsOf(service, charged.json.payment_id)).toEqual([
      expect.objectContaining({ type: 'recurring', status: 'success', amountMinor: 200, at: T0.toISOString() }),
    ]);
    expect(charged.json.date).toBe(protocolDateOf(T0));

    const soft = await recurringOf<RecurringResponse>(service, shop, { initTransId: init.initTransId, token: init.token, order: { amount: '2.52' } });
    clock.advance(3_600_000);
    const retried = await service.signedPost('/api/v1/payment/retry', { merchant_key: shop.merchant_key, payment_id: soft.json.payment_id }, shop.password);
    expect(retried.json).toEqual({ payment_id: soft.json.payment_id, result: 'accepted' });
    const history = await transactionsOf(service, soft.json.payment_id);
    expect(history).toEqual([
      expect.objectContaining({ type: 'recurring', status: 'fail', amountMinor: 252, reason: SANDBOX_REASONS.softDeclined, at: T0.toISOString() }),
      expect.objectContaining({ type: 'recurring', status: 'success', amountMinor: 252, at: new Date(T0.getTime() + 3_600_000).toISOString() }),
    ]);
    expect(history[0]?.transId).not.toBe(history[1]?.transId);
  });
});
