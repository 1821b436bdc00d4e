import callbacksFixture from './fixtures/callbacks.json';
import invalidSession from './fixtures/invalid-session.json';
import sessionRequest from './fixtures/session-request.json';
import { signFields } from '../../lambdas/domain/hash';
import { ManualClock } from '../../lambdas/ports/clock';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { receivingMerchants, verifiesWith, type CallbackReceiver, type ReceivedCallback } from '../support/callback-receiver';
import { postJson } from '../support/http';
import { closePage, openSession, recurringChain, recurringOf, refundOf, statusOf, submitPage, type Session } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Conformance with the platform that merchants' existing integrations were written for: its
 * documented examples as fixtures (test/conformance/fixtures, each naming its source), answered
 * exactly; and the callback sequence of every page flow, as a receiver written for the platform
 * sees it (protocol notes §4, §7; README "Callbacks").
 */
const START = new Date('2030-05-01T09:00:00Z');
const MINUTE = 60_000;

let service: TestService;
const clock = new ManualClock(START);
const merchants = receivingMerchants(() => service, 'Conformance Shop', { returnParams: true });
const merchant = merchants.merchant;

beforeAll(async () => {
  service = await startTestService({ clock });
});
afterAll(async () => {
  await merchants.close();
  await service.close();
});
beforeEach(() => clock.set(START));

const signedSession = (shop: MerchantCredentials, body: Record<string, unknown>) => {
  const order = body.order as { number: string; amount: string; currency: string; description: string };
  return postJson<Record<string, unknown>>(service.baseUrl, '/api/v1/session', {
    merchant_key: shop.merchant_key,
    ...body,
    hash: signFields([order.number, order.amount, order.currency, order.description], shop.password),
  });
};

/** `type/status/order_status` of each callback of a payment, in the order received. */
const sequenceOf = (receiver: CallbackReceiver, paymentId: string) =>
  receiver.received.filter((c) => c.fields.id === paymentId).map((c) => `${c.fields.type}/${c.fields.status}/${c.fields.order_status}`);
const callbacksOf = (receiver: CallbackReceiver, paymentId: string) => receiver.received.filter((c) => c.fields.id === paymentId);
const relay = async () => {
  await runCallbackJob(service.deps);
  await runCallbackJob(service.deps);
};

/** The receiver's view of a callback against the fixture: the platform's field order and required fields, a valid hash. */
function expectPlatformCallback(cb: ReceivedCallback, password: string, example: Record<string, string>) {
  expect(cb.contentType).toBe('application/x-www-form-urlencoded; charset=utf-8');
  const names = cb.pairs.map(([name]) => name);
  const known = names.filter((n) => callbacksFixture.order.includes(n));
  expect(known).toEqual([...known].sort((a, b) => callbacksFixture.order.indexOf(a) - callbacksFixture.order.indexOf(b)));
  expect(names.filter((n) => !callbacksFixture.order.includes(n) && !n.startsWith('custom_data['))).toEqual([]);
  for (const field of callbacksFixture.required) expect({ [field]: cb.fields[field] }).toEqual({ [field]: expect.any(String) });
  expect(cb.fields).toMatchObject(example);
  expect(cb.fields.date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  expect(cb.fields.card).toMatch(/^\d{6}\*{4}\d{4}$/);
  expect(verifiesWith(cb, password)).toBe(true);
}

describe('the platform\'s documented examples', () => {
  it('its invalid session example is answered item for item, in its order', async () => {
    const { shop } = await merchant();
    const res = await postJson(service.baseUrl, '/api/v1/session', { merchant_key: shop.merchant_key, ...invalidSession.request, hash: 'x'.repeat(40) });
    expect(res.status).toBe(invalidSession.status);
    expect(res.json).toEqual(invalidSession.answer);
  });

  it.each(['0', '0.0', '0.00', 0])('an amount of %p is "should be greater than 0", with a valid or an invalid currency', async (amount) => {
    const { shop } = await merchant();
    for (const currency of ['USD', 'Dollar']) {
      const res = await postJson<{ errors: { error_message: string }[] }>(service.baseUrl, '/api/v1/session', {
        merchant_key: shop.merchant_key,
        ...sessionRequest.request,
        order: { ...sessionRequest.request.order, amount, currency },
        hash: 'x'.repeat(40),
      });
      expect(res.status).toBe(400);
      expect(res.json.errors.map((e) => e.error_message)).toContain('order.amount: This value should be greater than 0.');
    }
  });

  it.each([['as documented', {}], ...Object.entries(sessionRequest.variants)] as [string, Record<string, unknown>][])(
    'its session request (%s) is answered with a redirect_url, and the link opens',
    async (_what, variant) => {
      const { shop } = await merchant();
      const res = await signedSession(shop, { ...sessionRequest.request, ...variant });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['redirect_url']);
      const url = new URL(String(res.json.redirect_url));
      expect(url.pathname).toMatch(/^\/auth\/[A-Za-z0-9_-]+$/);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('id="pay-form"');
    },
  );

  it('the documented sale, decline and refund callbacks: fields in the platform\'s order, required ones present, signed', async () => {
    const { shop, receiver } = await merchant({ maxDeclines: 1 });
    const paid = await openSession(service, shop, { order: { amount: '3.01', description: 'bloodline' } });
    await submitPage(service, paid, { card: '01/38' });
    const declined = await openSession(service, shop);
    await submitPage(service, declined, { card: '02/38' });
    expect((await refundOf(service, shop, paid.paymentId, '3.01')).status).toBe(200);
    await relay();
    const [sale, refundAccepted, refundDone] = callbacksOf(receiver, paid.paymentId);
    expectPlatformCallback(sale!, shop.password, callbacksFixture.examples.sale);
    expectPlatformCallback(refundAccepted!, shop.password, callbacksFixture.examples['refund accepted']);
    expectPlatformCallback(refundDone!, shop.password, callbacksFixture.examples['refund done']);
    const [decline] = callbacksOf(receiver, declined.paymentId);
    expectPlatformCallback(decline!, shop.password, callbacksFixture.examples.decline);
    expect(callbacksOf(receiver, declined.paymentId)).toHaveLength(1);
  });

  it('a recurring payment\'s callback carries customer_ip: the IP of the payment that started the chain', async () => {
    const { shop, receiver } = await merchant();
    const chain = await recurringChain(service, shop);
    const charged = await recurringOf(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { amount: '4.00' } });
    expect(charged.status).toBe(200);
    await relay();
    const [first] = callbacksOf(receiver, chain.paymentId);
    const [recurring] = callbacksOf(receiver, String((charged.json as { payment_id: string }).payment_id));
    expect(first!.fields.customer_ip).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    expect(recurring!.fields).toMatchObject({ type: 'recurring', status: 'success', order_status: 'settled', customer_ip: first!.fields.customer_ip });
  });
});

describe('the callback sequence of each page flow', () => {
  /** Answers the sandbox challenge or bank page the page sent the customer to, and comes back. */
  async function completeChallenge(answer: { location?: string | string[] }, code = '123456') {
    const challengeUrl = new URL(String(answer.location ?? ''), service.baseUrl).toString();
    const res = await fetch(challengeUrl, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ code, decision: 'confirm', return: new URL(challengeUrl).searchParams.get('return') ?? '' }).toString() });
    await res.text();
    const back = await fetch(new URL(res.headers.get('location') ?? '', challengeUrl), { redirect: 'manual' });
    await back.text();
    return back;
  }
  const pay = async (s: Session, card: string) => submitPage(service, s, { card });

  it('card approved: sale/success/settled', async () => {
    const { shop, receiver } = await merchant();
    const s = await openSession(service, shop);
    await pay(s, '01/38');
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual(['sale/success/settled']);
  });

  it('card approved for a DMS merchant: sale/success/pending', async () => {
    const { shop, receiver } = await merchant({ dms: true });
    const s = await openSession(service, shop);
    await pay(s, '01/38');
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual(['sale/success/pending']);
  });

  it.each([
    ['3-D Secure (05/38)', '05/38', '3ds'],
    ['bank redirect (12/38)', '12/38', 'redirect'],
  ])('%s: the step when the customer is sent there, then the sale', async (_what, card, flow) => {
    const { shop, receiver } = await merchant();
    const s = await openSession(service, shop);
    const sent = await pay(s, card);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual([`${flow}/success/${flow}`]);
    await expect(statusOf(service, shop, s.paymentId)).resolves.toMatchObject({ status: flow });
    await completeChallenge(sent.headers);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual([`${flow}/success/${flow}`, 'sale/success/settled']);
  });

  it('3-D Secure declined (06/38) and the customer closes the page: the step, then sale/fail/decline', async () => {
    const { shop, receiver } = await merchant();
    const s = await openSession(service, shop);
    await completeChallenge((await pay(s, '06/38')).headers);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual(['3ds/success/3ds']);
    await expect(statusOf(service, shop, s.paymentId)).resolves.toMatchObject({ status: 'prepare' });
    const closed = await closePage(service, s);
    expect(closed.status).toBe(303);
    expect(new URL(String(closed.headers.location)).searchParams.get('payment_id')).toBe(s.paymentId);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual(['3ds/success/3ds', 'sale/fail/decline']);
    expect(callbacksOf(receiver, s.paymentId)[1]!.fields.reason).toBe('3-D Secure authentication failed.');
  });

  it('declined, then approved on the same link: only sale/success/settled (status prepare in between)', async () => {
    const { shop, receiver } = await merchant();
    const s = await openSession(service, shop);
    await pay(s, '02/38');
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual([]);
    const between = await statusOf(service, shop, s.paymentId);
    expect([between.status, between.reason]).toEqual(['prepare', undefined]);
    await pay(s, '01/38');
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual(['sale/success/settled']);
  });

  it('declined until the declines are used up: one sale/fail/decline, for the last attempt, and the customer goes to cancel_url', async () => {
    const { shop, receiver } = await merchant({ maxDeclines: 2 });
    const s = await openSession(service, shop);
    await pay(s, '02/38');
    const last = await pay(s, '02/38');
    expect(last.status).toBe(303);
    expect(String(last.headers.location)).toMatch(/\/cancel\?payment_id=/);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual(['sale/fail/decline']);
    const stored = await service.deps.store.findPayment(s.paymentId);
    expect(callbacksOf(receiver, s.paymentId)[0]!.fields.trans_id).toBe(stored!.transactions.at(-1)!.transId);
    await expect(statusOf(service, shop, s.paymentId)).resolves.toMatchObject({ status: 'decline', reason: 'Declined by processing.' });
  });

  it('declined, then the link expires: sale/fail/decline once the reconciler sees the expiry', async () => {
    const { shop, receiver } = await merchant();
    const s = await openSession(service, shop, { extra: { session_expiry: 10 } });
    await pay(s, '02/38');
    await reconcileDue(service.deps, 500);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual([]);
    clock.set(new Date(START.getTime() + 11 * MINUTE));
    await reconcileDue(service.deps, 500);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual(['sale/fail/decline']);
    await expect(statusOf(service, shop, s.paymentId)).resolves.toMatchObject({ status: 'decline', reason: 'Declined by processing.' });
  });

  it('refund, partial then the rest: refund/waiting then refund/success, settled then refund', async () => {
    const { shop, receiver } = await merchant();
    const s = await openSession(service, shop, { order: { amount: '10.00' } });
    await pay(s, '01/38');
    expect((await refundOf(service, shop, s.paymentId, '4.00')).status).toBe(200);
    expect((await refundOf(service, shop, s.paymentId, '6.00')).status).toBe(200);
    await relay();
    expect(sequenceOf(receiver, s.paymentId)).toEqual([
      'sale/success/settled',
      'refund/waiting/settled',
      'refund/success/settled',
      'refund/waiting/settled',
      'refund/success/refund',
    ]);
  });
});
