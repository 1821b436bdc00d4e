import { randomUUID } from 'node:crypto';
import { verifyFields } from '../../lambdas/domain/hash';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import type { PaymentStatusResponse } from '../../lambdas/protocol/merchant/status';
import { receivingMerchants, verifiesWith } from '../support/callback-receiver';
import { invalidRequest, openSession, recurringChain, recurringOf, type Session, submitPage } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Orders written as shops write them (protocol.md §7): order numbers with the platform's characters
 * (`INV/2026/00001-12`, `A#1`, `x:y@z`, `"q"&'x'+%41`) and descriptions with any printable text,
 * followed everywhere an order number travels: status by order_id (the index key holds it after a
 * `#`), the return parameters appended to success_url and cancel_url (URL-encoded), the callback's
 * form body, and recurring charges. Through the real HTTP handlers and the DynamoDB engine.
 */
const STATUS = '/api/v1/payment/status';
const URLS = { success_url: 'https://shop.example/success?ref=a%2Bb&lang=de', cancel_url: 'https://shop.example/cancel' };
const DESCRIPTION = 'Payment Order # S00042-1 in the store http://localhost:8069/ [a_b]?x=1~ <b>&amp;</b> "q" \'x\'';

let service: TestService;
const merchants = receivingMerchants(() => service, 'Module Shop', { returnParams: true });
let shop: MerchantCredentials;
let otherShop: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  [{ shop }, { shop: otherShop }] = await Promise.all([merchants.merchant(), merchants.merchant()]);
});
afterAll(async () => {
  await merchants.close();
  await service.close();
});

/** A number of the given shape, its own to this test run. */
const unique = (shape: (tag: string) => string) => shape(randomUUID().slice(0, 6));

const byOrder = (merchant: MerchantCredentials, orderId: string) =>
  service.signedPost<PaymentStatusResponse>(STATUS, { merchant_key: merchant.merchant_key, order_id: orderId }, merchant.password);

const session = (merchant: MerchantCredentials, number: string, extra: Record<string, unknown> = {}) =>
  openSession(service, merchant, { order: { number, description: DESCRIPTION }, extra: { ...URLS, ...extra } });

/** The parameters of a return URL, and whether its hash is the one protocol.md §1 defines. */
function returnParameters(location: string, s: Session, password: string) {
  const url = new URL(location);
  const q = url.searchParams;
  const signed = [q.get('payment_id') ?? '', q.get('order_id') ?? '', s.order.amount, s.order.currency, s.order.description];
  return { at: `${url.origin}${url.pathname}`, paymentId: q.get('payment_id'), orderId: q.get('order_id'), ref: q.get('ref'), lang: q.get('lang'), hashVerifies: verifyFields(q.get('hash'), signed, password) };
}

describe('status by order_id', () => {
  it.each([
    ['an invoice reference', (t: string) => `INV/2026/${t}-12`],
    ['a #', (t: string) => `A#${t}`],
    [': and @', (t: string) => `x:${t}@z`],
    ['quotes, &, + and a percent escape', (t: string) => `"q"&'x'+%41${t}`],
    ['every character of the platform\'s list', (t: string) => `${t}-!"#$%&'()*+,./:;@`],
  ])('finds an order number with %s', async (_what, shape) => {
    const number = unique(shape);
    const s = await session(shop, number);
    const res = await byOrder(shop, number);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ payment_id: s.paymentId, order: { number, description: DESCRIPTION } });
  });

  it('keeps apart numbers one of which extends another after a # (A, A#1, A#1#2) and a percent escape from its letter', async () => {
    const base = unique((t) => `A${t}`);
    const numbers = [base, `${base}#1`, `${base}#1#2`, `${base}#`, `%41${base.slice(1)}`];
    const ids = new Map<string, string>();
    for (const number of numbers) ids.set(number, (await session(shop, number)).paymentId);
    for (const number of numbers) {
      const res = await byOrder(shop, number);
      expect({ number, found: res.json.payment_id }).toEqual({ number, found: ids.get(number) });
    }
    expect((await byOrder(shop, `${base}#1#`)).status).toBe(404);
  });

  it('answers 208001 to another merchant asking for the number, even one that ends like its key', async () => {
    const number = unique((t) => `A#${t}`);
    await session(shop, number);
    expect((await byOrder(otherShop, number)).status).toBe(404);
    // Someone trying to reach "ORDER#<shop>#<number>" by shifting the # into the merchant key is
    // not a merchant (keys hold no #): the answer is the one for an unknown merchant_key.
    const [head, ...tail] = number.split('#');
    const shifted = await service.signedPost(STATUS, { merchant_key: `${shop.merchant_key}#${head}`, order_id: tail.join('#') }, shop.password);
    expect(shifted.json).toEqual(invalidRequest('hash: Hash is not valid.'));
  });
});

describe('return parameters', () => {
  it('carry such an order number to success_url exactly (URL-encoded), beside the URL\'s own parameters, with a hash that verifies', async () => {
    const number = unique((t) => `INV/2026/${t}-12#A&hash;+%20"'`);
    const s = await session(shop, number);
    const page = await submitPage(service, s, { card: '01/38' });
    expect(page.status).toBe(303);
    const location = String(page.headers.location);
    // Nothing of the number is left raw in the query: each character that means something there is escaped,
    // so the number's "&hash;" adds no parameter.
    const raw = /[?&]order_id=([^&#]*)/.exec(new URL(location).search)?.[1] ?? '';
    expect(raw).not.toMatch(/[#&+;/"' ]/);
    expect(decodeURIComponent(raw)).toBe(number);
    expect(new URL(location).searchParams.getAll('hash')).toHaveLength(1);
    expect(returnParameters(location, s, shop.password)).toEqual({
      at: 'https://shop.example/success',
      paymentId: s.paymentId,
      orderId: number,
      ref: 'a+b',
      lang: 'de',
      hashVerifies: true,
    });
  });

  it('carry it to cancel_url after the last allowed decline', async () => {
    const { shop: strict } = await merchants.merchant({ maxDeclines: 1 });
    const number = unique((t) => `x:${t}@z/"1"`);
    const s = await session(strict, number);
    const page = await submitPage(service, s, { card: '02/38' });
    expect(page.status).toBe(303);
    expect(returnParameters(String(page.headers.location), s, strict.password)).toMatchObject({ at: 'https://shop.example/cancel', orderId: number, hashVerifies: true });
  });
});

it('the callback\'s form body carries the order number and description exactly, signed', async () => {
  const { shop: receiving, receiver } = await merchants.merchant();
  const number = unique((t) => `A#${t}&b+c%2F`);
  const s = await session(receiving, number);
  expect((await submitPage(service, s, { card: '01/38' })).status).toBe(303);
  await runCallbackJob(service.deps);
  const [callback] = await receiver.waitFor(1);
  expect(callback!.fields).toMatchObject({ id: s.paymentId, order_number: number, order_description: DESCRIPTION, type: 'sale', status: 'success' });
  // Decoded by any form parser: the raw body escapes every & + # / % of the values.
  expect(callback!.raw).toContain(`order_number=${encodeURIComponent(number).replace(/%20/g, '+')}`);
  expect(verifiesWith(callback!, receiving.password)).toBe(true);
});

it('a recurring charge takes the same order numbers and descriptions, and is found by its order_id', async () => {
  const chain = await recurringChain(service, shop);
  const number = unique((t) => `INV/2026/${t}-R#2`);
  const description = 'Subscription - month 2 of 12 (renewal) [auto] ~ ok?';
  const charged = await recurringOf<{ status: string; payment_id: string; order: { number: string } }>(service, shop, {
    initTransId: chain.initTransId,
    token: chain.token,
    order: { number, amount: '10.00', description },
  });
  expect(charged.status).toBe(200);
  expect(charged.json).toMatchObject({ status: 'settled', order: { number } });
  const found = await byOrder(shop, number);
  expect(found.json).toMatchObject({ payment_id: charged.json.payment_id, order: { number, description } });
  // Still refused: what the platform refuses (a space), and a line break in the description.
  const refused = await recurringOf(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { number: 'INV 1', amount: '10.00', description: 'line\nbreak' } });
  expect(refused.json).toEqual(invalidRequest('order.number: This value is not valid.', 'order.description: This value is not valid.'));
});
