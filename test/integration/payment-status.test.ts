import { randomUUID } from 'node:crypto';
import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { SESSION_EXPIRED_REASON } from '../../lambdas/protocol/merchant/status';
import { validSessionBody, type Json } from '../support/fixtures';
import { paymentIdOf } from '../support/links';
import { serviceForFile } from '../support/suites';
import { invalidRequest } from '../support/payments';

/** POST /api/v1/payment/status by payment_id and by order_id (seed 2.4, protocol.md §3). */
const SESSION = '/api/v1/session';
const STATUS = '/api/v1/payment/status';
const T0 = new Date('2030-03-01T08:30:15.000Z');

const NOT_FOUND = { error_code: 208001, error_message: 'Payment not found.', errors: [] };

const clock = new ManualClock(T0);
const { service, merchants: [shop, otherShop] } = serviceForFile({ clock, merchants: [{ name: 'Shop' }, { name: 'Other Shop' }] });

async function createPayment(merchant: MerchantCredentials, overrides: Json = {}): Promise<string> {
  const res = await service.signedPost<{ redirect_url: string }>(SESSION, validSessionBody(merchant.merchant_key, overrides), merchant.password);
  expect(res.status).toBe(200);
  return paymentIdOf(res.json.redirect_url);
}

const status = <T = Json>(merchant: MerchantCredentials, query: { payment_id?: string; order_id?: string }) =>
  service.signedPost<T>(STATUS, { merchant_key: merchant.merchant_key, ...query }, merchant.password);

describe('status by payment_id', () => {
  it('answers the payment with the protocol fields and date format', async () => {
    clock.set(T0);
    const paymentId = await createPayment(shop);
    const res = await status(shop, { payment_id: paymentId });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      payment_id: paymentId,
      date: '2030-03-01 08:30:15',
      status: 'prepare',
      order: { number: 'order-1234', amount: '0.19', currency: 'USD', description: 'Important gift' },
      customer: { name: 'John Doe', email: 'john@example.com' },
    });
  });

  it('echoes the amount literal exactly as the merchant sent it', async () => {
    const paymentId = await createPayment(shop, { order: { number: 'kw-1', amount: '10.250', currency: 'KWD', description: 'Order #9: gift, wrapped' } });
    const res = await status(shop, { payment_id: paymentId });
    expect(res.json.order).toEqual({ number: 'kw-1', amount: '10.250', currency: 'KWD', description: 'Order #9: gift, wrapped' });
  });

  it('sends schedule_id and, for existing clients, shedule_id when recurring was initialized', async () => {
    const paymentId = await createPayment(shop, { recurring_init: true, schedule_id: 'monthly-1' });
    const res = await status(shop, { payment_id: paymentId });
    expect(res.json).toMatchObject({ schedule_id: 'monthly-1', shedule_id: 'monthly-1' });
  });

  it('uses payment_id when order_id is sent too (the hash covers payment_id)', async () => {
    const paymentId = await createPayment(shop, { order: { number: 'both-1', amount: '1.00', currency: 'USD', description: 'Gift' } });
    const res = await status(shop, { payment_id: paymentId, order_id: 'some-other-order' });
    expect(res.json.payment_id).toBe(paymentId);
  });

  it('answers a wrong hash with the hash envelope', async () => {
    const paymentId = await createPayment(shop);
    const res = await service.post(STATUS, { merchant_key: shop.merchant_key, payment_id: paymentId, hash: 'a'.repeat(40) });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(invalidRequest('hash: Hash is not valid.'));
  });

  it('requires payment_id or order_id', async () => {
    const res = await service.signedPost(STATUS, { merchant_key: shop.merchant_key }, shop.password);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(invalidRequest('payment_id: This value should not be blank.'));
  });
});

describe('status by order_id', () => {
  it('answers the most recent payment of the order', async () => {
    const order = { number: 'order-77', amount: '5.00', currency: 'USD', description: 'Retry order' };
    const ids: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      clock.advance(1000);
      ids.push(await createPayment(shop, { order }));
    }
    const res = await status(shop, { order_id: 'order-77' });
    expect(res.status).toBe(200);
    expect(res.json.payment_id).toBe(ids[2]);
    expect(res.json.order).toMatchObject({ number: 'order-77' });
  });

  it('looks only at the calling merchant: another merchant reusing the order number does not hide it', async () => {
    const order = { number: 'shared-9', amount: '5.00', currency: 'USD', description: 'Shared number' };
    const mine = await createPayment(shop, { order });
    clock.advance(1000);
    const theirs = await createPayment(otherShop, { order });
    expect((await status(shop, { order_id: 'shared-9' })).json.payment_id).toBe(mine);
    expect((await status(otherShop, { order_id: 'shared-9' })).json.payment_id).toBe(theirs);
  });

  it('answers 208001 for an order without payments', async () => {
    const res = await status(shop, { order_id: 'never-ordered' });
    expect(res.status).toBe(404);
    expect(res.json).toEqual(NOT_FOUND);
  });
});

describe("another merchant's payment", () => {
  it('is answered exactly like a payment that does not exist (208001)', async () => {
    const paymentId = await createPayment(shop);
    const foreign = await status(otherShop, { payment_id: paymentId });
    const missing = await status(otherShop, { payment_id: randomUUID() });
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual(NOT_FOUND);
    expect({ status: foreign.status, body: foreign.text }).toEqual({ status: missing.status, body: missing.text });
  });

  it('is not found by its order number either', async () => {
    await createPayment(shop, { order: { number: 'private-1', amount: '1.00', currency: 'USD', description: 'Private' } });
    expect((await status(otherShop, { order_id: 'private-1' })).json).toEqual(NOT_FOUND);
  });

  it.each([
    ['not a UUID', 'not-a-uuid'],
    ['SQL', "' OR '1'='1"],
    ['a path', '../../etc/passwd'],
    ['255 characters', 'x'.repeat(255)],
  ])('an odd payment_id (%s) is simply not found', async (_name, paymentId) => {
    const res = await status(shop, { payment_id: paymentId });
    expect(res.status).toBe(404);
    expect(res.json).toEqual(NOT_FOUND);
  });
});

describe('an unpaid session whose link expired', () => {
  it('reads as prepare until the expiry, then as decline with the reason', async () => {
    clock.set(T0);
    const paymentId = await createPayment(shop, { session_expiry: 5 });

    clock.set(new Date(T0.getTime() + 5 * 60_000 - 1));
    expect((await status(shop, { payment_id: paymentId })).json).toMatchObject({ status: 'prepare' });
    expect((await status(shop, { payment_id: paymentId })).json).not.toHaveProperty('reason');

    clock.set(new Date(T0.getTime() + 5 * 60_000));
    const res = await status(shop, { payment_id: paymentId });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ payment_id: paymentId, status: 'decline', reason: SESSION_EXPIRED_REASON, date: '2030-03-01 08:30:15' });
  });

  it('expires after one hour by default', async () => {
    clock.set(T0);
    const paymentId = await createPayment(shop);
    clock.advance(59 * 60_000);
    expect((await status(shop, { payment_id: paymentId })).json).toMatchObject({ status: 'prepare' });
    clock.advance(60_000);
    expect((await status(shop, { payment_id: paymentId })).json).toMatchObject({ status: 'decline', reason: SESSION_EXPIRED_REASON });
  });
});
