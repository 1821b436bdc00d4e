import { NOT_RESENDABLE } from '../../lambdas/domain/callback-resend';
import { ERRORS, type ErrorName } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import { ADMIN_LIMITS } from '../../lambdas/use-cases/admin/deps';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { CallbackView } from '../../lambdas/protocol/admin/callbacks';
import { adminApi, adminRequest, seedOperator, signIn, type AdminApi, type DeadCallback } from '../support/admin';
import { type CallbackReceiver, saleCallbackDeliveredSecondTime, startCallbackReceiver, verifiesWith } from '../support/callback-receiver';
import { closePage, invalidRequest, openSession, paidPayment, refundOf, submitPage, transactionsOf } from '../support/payments';
import { NO_URL_REASON } from '../../lambdas/use-cases/deliver-callbacks';
import { startTestService, type TestService } from '../support/service';

/** An audit entry without its chain fields (seq, prevHash, hash, and a day's link to the day before: see audit-chain.test.ts). */
const withoutChain = <T extends object>(e: T): Omit<T, 'seq' | 'prevHash' | 'hash' | 'prevDay' | 'prevSeq'> => {
  const { seq: _s, prevHash: _p, hash: _h, prevDay: _d, prevSeq: _q, ...rest } = e as T & { seq?: number; prevHash?: string; hash?: string; prevDay?: string; prevSeq?: number };
  return rest;
};


/**
 * The callback delivery log in the admin API: each transaction's callback with every attempt (time,
 * HTTP status, latency, error), an operator's resend of one callback, and the dead callbacks of a
 * merchant with a resend of them all. Over real HTTP with an operator's token; callbacks are posted
 * to a real receiver on loopback by the callback job, run explicitly; time moves on a manual clock.
 */
const HOUR = 3600_000;
const UNAUTHORIZED = { message: 'Unauthorized' };
const refusal = (name: ErrorName, message: string = ERRORS[name].message) => ({ error_code: ERRORS[name].code, error_message: message, errors: [] });

// Only moves forward: a callback due earlier is never skipped by a later test.
const clock = new ManualClock('2030-07-01T08:00:00.000Z');
let service: TestService;
let api: AdminApi;
let token: string;
const receivers: CallbackReceiver[] = [];

beforeAll(async () => {
  service = await startTestService({ clock });
  // The operator role: resending callbacks is theirs (lib/routes.ts).
  token = await signIn(service, await seedOperator(service, 'olga', 'olga-long-password', 'operator'));
  api = adminApi(service, token);
});
afterAll(async () => {
  await service.close();
  await Promise.all(receivers.map((r) => r.close()));
});

/**
 * A merchant with its own receiver: the job delivers every due callback of every test, and a
 * receiver's scripted answers must go to this test's payments only.
 */
async function shopWithReceiver(name: string): Promise<{ shop: MerchantCredentials; receiver: CallbackReceiver }> {
  const receiver = await startCallbackReceiver();
  receivers.push(receiver);
  const shop = await service.createMerchant({ name, settings: { notificationUrl: receiver.url } });
  return { shop, receiver };
}

const deliver = () => runCallbackJob(service.deps);
const receivedFor = (receiver: CallbackReceiver, paymentId: string) => receiver.received.filter((c) => c.fields.id === paymentId);

async function callbacksOf(paymentId: string): Promise<CallbackView[]> {
  const res = await api.callbacks(paymentId);
  expect(res.status).toBe(200);
  return res.json.callbacks;
}

/** Runs the job, a day and an hour apart, until the payment's first callback has been given up on. */
async function untilDead(paymentId: string): Promise<CallbackView> {
  await deliver();
  for (let runs = 0; runs < 5; runs++) {
    const [callback] = await callbacksOf(paymentId);
    if (callback?.state === 'dead') return callback;
    clock.advance(25 * HOUR);
    await deliver();
  }
  throw new Error('the callback never became dead');
}

describe('the delivery log (GET /admin/api/payments/{paymentId}/callbacks)', () => {
  it('shows each attempt with its time, HTTP status and latency: a 500, then a 200 on the retry', async () => {
    const { shop, receiver } = await shopWithReceiver('Flaky Receiver Shop');
    receiver.script(500);
    const paid = await paidPayment(service, shop);
    const first = clock.now().toISOString();

    expect(await callbacksOf(paid.paymentId)).toEqual([
      {
        index: 0, number: 1, trans_id: expect.any(String), type: 'sale', status: 'success', amount: '25.00', currency: 'USD', order_status: 'settled', date: expect.any(String),
        state: 'not-sent', attempt_count: 0, attempts: [], resendable: false, not_resendable_reason: NOT_RESENDABLE.waiting,
      },
    ]);

    await deliver();
    expect(receivedFor(receiver, paid.paymentId).map((c) => c.answer)).toEqual([500]);
    const [retrying] = await callbacksOf(paid.paymentId);
    expect(retrying).toMatchObject({ state: 'pending', attempt_count: 1, last_error: 'HTTP 500', resendable: false });
    expect(retrying?.attempts).toEqual([{ at: first, url: receiver.url, httpStatus: 500, latencyMs: expect.any(Number), error: 'HTTP 500' }]);
    // The first retry comes after 15 to 30 seconds (30 s with equal jitter).
    const nextAttempt = Date.parse(retrying?.next_attempt_at ?? '');
    expect(nextAttempt - Date.parse(first)).toBeGreaterThanOrEqual(15_000);
    expect(nextAttempt - Date.parse(first)).toBeLessThanOrEqual(30_000);

    clock.advance(60_000);
    const second = clock.now().toISOString();
    await deliver();
    expect(receivedFor(receiver, paid.paymentId).map((c) => c.answer)).toEqual([500, 200]);
    const [delivered] = await callbacksOf(paid.paymentId);
    const transId = (await transactionsOf(service, paid.paymentId))[0]?.transId;
    expect(delivered).toEqual(saleCallbackDeliveredSecondTime({ transId, url: receiver.url, failedAt: first, deliveredAt: second }));
    for (const attempt of delivered?.attempts ?? []) {
      expect(Number.isInteger(attempt.latencyMs)).toBe(true);
      expect(attempt.latencyMs).toBeGreaterThanOrEqual(0);
      expect(attempt.latencyMs).toBeLessThan(10_000);
    }
  });

  it('answers 404 (208001) for an unknown payment', async () => {
    const res = await api.callbacks('no-such-payment');
    expect([res.status, res.json]).toEqual([404, refusal('PAYMENT_NOT_FOUND')]);
  });
});

describe('resending one callback (POST /admin/api/payments/{paymentId}/callbacks/{index}/resend)', () => {
  it('queues a delivered callback; the next run delivers it again, and the resend is audited', async () => {
    const { shop, receiver } = await shopWithReceiver('Resend Shop');
    const paid = await paidPayment(service, shop);
    await deliver();
    expect(receivedFor(receiver, paid.paymentId)).toHaveLength(1);

    clock.advance(60_000);
    const resentAt = clock.now().toISOString();
    const res = await api.resendCallback(paid.paymentId, 0);
    expect([res.status, res.json]).toEqual([200, { payment_id: paid.paymentId, index: 0, number: 1, outcome: 'queued' }]);
    expect(await callbacksOf(paid.paymentId)).toEqual([expect.objectContaining({ state: 'pending', attempt_count: 1, resendable: false })]);
    // Asked twice before the job ran: still one delivery.
    expect((await api.resendCallback(paid.paymentId, 0)).json).toEqual({ payment_id: paid.paymentId, index: 0, number: 1, outcome: 'already-queued' });

    await deliver();
    const [original, again] = receivedFor(receiver, paid.paymentId);
    expect(again?.fields).toEqual(original?.fields);
    expect(verifiesWith(again!, shop.password)).toBe(true);
    await deliver();
    expect(receivedFor(receiver, paid.paymentId)).toHaveLength(2);
    expect(await callbacksOf(paid.paymentId)).toEqual([expect.objectContaining({ state: 'delivered', attempt_count: 2, delivered_at: resentAt, resendable: true })]);

    const audit = (await api.payment(paid.paymentId)).json.audit.map(withoutChain);
    expect(audit).toEqual(
      expect.arrayContaining([
        {
          id: expect.any(String),
          at: resentAt,
          actor: 'olga',
          actorRole: 'operator',
          action: 'callback.resend no. 1',
          target: paid.paymentId,
          targetKind: 'payment',
          before: { callback: 'delivered' },
          after: { callback: 'pending', trans_id: expect.any(String), type: 'sale', status: 'success', amount: '25.00 USD', order_status: 'settled', payment_status: 'settled', contradicts: false },
          outcome: 'done',
        },
        expect.objectContaining({ actor: 'olga', action: 'callback.resend no. 1', before: { callback: 'pending' }, outcome: 'refused', detail: 'This callback is already waiting to be sent.' }),
      ]),
    );
    expect(audit).toHaveLength(2);
  });

  it.each([['x'], ['-1'], ['1.5'], ['1e3'], ['%20'], ['99999999999999999999']])('refuses the index %j with the 400 envelope, and audits nothing', async (index) => {
    const { shop } = await shopWithReceiver('Bad Index Shop');
    const paid = await paidPayment(service, shop);
    await deliver();
    const res = await api.resendCallback(paid.paymentId, index);
    expect([res.status, res.json]).toEqual([400, invalidRequest('index: This value is not valid.')]);
    expect((await api.payment(paid.paymentId)).json.audit).toEqual([]);
  });

  it('answers 404 (208001) for an index past the payment\'s history and for an unknown payment', async () => {
    const { shop } = await shopWithReceiver('Short History Shop');
    const paid = await paidPayment(service, shop);
    await deliver();
    for (const [paymentId, index] of [[paid.paymentId, 1], ['no-such-payment', 0]] as const) {
      const res = await api.resendCallback(paymentId, index);
      expect([paymentId, res.status, res.json]).toEqual([paymentId, 404, refusal('PAYMENT_NOT_FOUND')]);
    }
    expect((await api.payment(paid.paymentId)).json.audit).toEqual([]);
  });

  it('refuses a body that is not JSON, and a request from another origin, without queuing anything', async () => {
    const { shop } = await shopWithReceiver('Guarded Shop');
    const paid = await paidPayment(service, shop);
    await deliver();
    const path = `/admin/api/payments/${paid.paymentId}/callbacks/0/resend`;
    const notJson = await service.request({ method: 'POST', path, headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' }, body: '{}' });
    expect([notJson.status, notJson.json]).toEqual([400, invalidRequest('body: The request content type should be application/json.')]);
    const crossSite = await service.request({ method: 'POST', path, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin: 'https://evil.example' }, body: '{}' });
    expect([crossSite.status, crossSite.json]).toEqual([401, refusal('UNAUTHORIZED', 'Cross-origin requests are not accepted.')]);
    expect(await callbacksOf(paid.paymentId)).toEqual([expect.objectContaining({ state: 'delivered', resendable: true })]);
    expect((await api.payment(paid.paymentId)).json.audit).toEqual([]);
  });
});

describe('which callbacks may be resent: only those the merchant was due, and a contradiction only when confirmed', () => {
  const resendPath = (paymentId: string, index: number) => `/admin/api/payments/${encodeURIComponent(paymentId)}/callbacks/${index}/resend`;
  const resendWith = (paymentId: string, index: number, body: unknown) => adminRequest<unknown>(service, 'POST', resendPath(paymentId, index), token, body);
  const sent = (receiver: CallbackReceiver, paymentId: string) => receivedFor(receiver, paymentId).map((c) => `${c.fields.type}/${c.fields.status}/${c.fields.order_status}`);
  const auditOf = async (paymentId: string) => (await api.payment(paymentId)).json.audit.map(withoutChain);

  it('a decline the customer followed with a payment on the same link (02/38, then 01/38) is never offered, and a direct call is refused (409), audited', async () => {
    const { shop, receiver } = await shopWithReceiver('Second Try Shop');
    const session = await openSession(service, shop);
    expect((await submitPage(service, session, { card: '02/38' })).status).toBeLessThan(500);
    expect((await submitPage(service, session, { card: '01/38' })).status).toBeLessThan(500);
    await deliver();
    expect(sent(receiver, session.paymentId)).toEqual(['sale/success/settled']);

    const [declined, paid] = await callbacksOf(session.paymentId);
    expect(declined).toMatchObject({ number: 1, type: 'sale', status: 'fail', order_status: 'decline', state: 'skipped', resendable: false, not_resendable_reason: NOT_RESENDABLE.superseded });
    expect(paid).toMatchObject({ number: 2, type: 'sale', status: 'success', order_status: 'settled', state: 'delivered', resendable: true });
    expect(paid).not.toHaveProperty('contradiction');

    // Called directly, with or without a confirmation: refused, nothing queued.
    for (const body of [{}, { contradiction_confirmed: true }]) {
      const res = await resendWith(session.paymentId, 0, body);
      expect([res.status, res.json]).toEqual([409, refusal('CALLBACK_NOT_RESENDABLE', NOT_RESENDABLE.superseded)]);
    }
    await deliver();
    expect(sent(receiver, session.paymentId)).toEqual(['sale/success/settled']);
    expect((await callbacksOf(session.paymentId))[0]).toMatchObject({ state: 'skipped', attempt_count: 0 });

    const refused = {
      actor: 'olga',
      action: 'callback.resend no. 1',
      before: { callback: 'skipped' },
      after: { trans_id: declined?.trans_id, type: 'sale', status: 'fail', amount: '25.00 USD', order_status: 'decline', payment_status: 'settled', contradicts: true },
      outcome: 'refused',
      detail: NOT_RESENDABLE.superseded,
    };
    expect(await auditOf(session.paymentId)).toEqual([expect.objectContaining(refused), expect.objectContaining(refused)]);
  });

  it('a held decline is refused while the customer may still pay, and while its closure sends it; delivered, it may be resent and contradicts nothing', async () => {
    const { shop, receiver } = await shopWithReceiver('Held Decline Shop');
    const session = await openSession(service, shop);
    await submitPage(service, session, { card: '02/38' });
    await deliver();
    expect(sent(receiver, session.paymentId)).toEqual([]);
    expect((await callbacksOf(session.paymentId))[0]).toMatchObject({ state: 'skipped', resendable: false, not_resendable_reason: NOT_RESENDABLE.notFinal });
    // A minute between the resends: the audit log lists them newest first.
    clock.advance(60_000);
    const early = await api.resendCallback(session.paymentId, 0);
    expect([early.status, early.json]).toEqual([409, refusal('CALLBACK_NOT_RESENDABLE', NOT_RESENDABLE.notFinal)]);

    // The customer closes the page: the decline is final and its closure queues the callback.
    await closePage(service, session);
    clock.advance(60_000);
    expect((await callbacksOf(session.paymentId))[0]).toMatchObject({ state: 'skipped', resendable: false, not_resendable_reason: NOT_RESENDABLE.finalHeld });
    const queuedByClosure = await api.resendCallback(session.paymentId, 0);
    expect([queuedByClosure.status, queuedByClosure.json]).toEqual([409, refusal('CALLBACK_NOT_RESENDABLE', NOT_RESENDABLE.finalHeld)]);
    await deliver();
    expect(sent(receiver, session.paymentId)).toEqual(['sale/fail/decline']);

    const [delivered] = await callbacksOf(session.paymentId);
    expect(delivered).toMatchObject({ state: 'delivered', resendable: true, order_status: 'decline' });
    expect(delivered).not.toHaveProperty('contradiction');
    clock.advance(60_000);
    expect((await api.resendCallback(session.paymentId, 0)).json).toMatchObject({ outcome: 'queued' });
    await deliver();
    expect(sent(receiver, session.paymentId)).toEqual(['sale/fail/decline', 'sale/fail/decline']);
    expect((await auditOf(session.paymentId)).map((e) => [e.outcome, e.detail, (e.after as { contradicts?: boolean }).contradicts])).toEqual([
      ['done', undefined, false],
      ['refused', NOT_RESENDABLE.finalHeld, false],
      ['refused', NOT_RESENDABLE.notFinal, true],
    ]);
  });

  it('a callback skipped because the merchant had no notification URL is not offered, and refused when asked', async () => {
    const shop = await service.createMerchant({ name: 'No Url Shop' });
    const paid = await paidPayment(service, shop);
    await deliver();
    const [skipped] = await callbacksOf(paid.paymentId);
    expect(skipped).toMatchObject({ state: 'skipped', last_error: NO_URL_REASON, resendable: false, not_resendable_reason: NOT_RESENDABLE.skipped });
    const res = await api.resendCallback(paid.paymentId, 0);
    expect([res.status, res.json]).toEqual([409, refusal('CALLBACK_NOT_RESENDABLE', NOT_RESENDABLE.skipped)]);
  });

  it('a sale callback after a full refund contradicts the payment: refused unless confirmed, then sent; both audited as contradicting', async () => {
    const { shop, receiver } = await shopWithReceiver('Refunded Shop');
    const paid = await paidPayment(service, shop);
    expect((await refundOf(service, shop, paid.paymentId, '25.00')).status).toBe(200);
    await deliver();
    expect(sent(receiver, paid.paymentId)).toEqual(['sale/success/settled', 'refund/waiting/settled', 'refund/success/refund']);

    const [sale, , refund] = await callbacksOf(paid.paymentId);
    const warning = 'It tells the merchant the order is settled, but the payment is refund now: the merchant may take it as the latest state.';
    expect(sale).toMatchObject({ state: 'delivered', resendable: true, amount: '25.00', currency: 'USD', order_status: 'settled', contradiction: warning });
    expect(refund).toMatchObject({ state: 'delivered', resendable: true, order_status: 'refund' });
    expect(refund).not.toHaveProperty('contradiction');

    const unconfirmed = await api.resendCallback(paid.paymentId, 0);
    expect([unconfirmed.status, unconfirmed.json]).toEqual([409, refusal('CALLBACK_CONTRADICTS_PAYMENT', `${warning} Confirm the resend to send it anyway.`)]);
    const notBoolean = await resendWith(paid.paymentId, 0, { contradiction_confirmed: 'yes' });
    expect([notBoolean.status, notBoolean.json]).toEqual([400, invalidRequest('contradiction_confirmed: This value is not valid.')]);
    await deliver();
    expect(sent(receiver, paid.paymentId)).toHaveLength(3);

    clock.advance(60_000);
    const confirmed = await resendWith(paid.paymentId, 0, { contradiction_confirmed: true });
    expect([confirmed.status, confirmed.json]).toEqual([200, { payment_id: paid.paymentId, index: 0, number: 1, outcome: 'queued' }]);
    await deliver();
    expect(sent(receiver, paid.paymentId)).toEqual(['sale/success/settled', 'refund/waiting/settled', 'refund/success/refund', 'sale/success/settled']);

    const after = { trans_id: sale?.trans_id, type: 'sale', status: 'success', amount: '25.00 USD', order_status: 'settled', payment_status: 'refund', contradicts: true };
    expect(await auditOf(paid.paymentId)).toEqual([
      expect.objectContaining({ action: 'callback.resend no. 1', before: { callback: 'delivered' }, after: { callback: 'pending', ...after }, outcome: 'done', detail: `Sent although it contradicts the payment's state. ${warning}` }),
      expect.objectContaining({ action: 'callback.resend no. 1', before: { callback: 'delivered' }, after, outcome: 'refused', detail: `Not sent unconfirmed. ${warning}` }),
    ]);
  });
});

describe('dead callbacks (GET /admin/api/merchants/{merchantKey}/callbacks/dead, POST …/callbacks/resend-dead)', () => {
  it('lists a callback still failing after 24 hours for its merchant; resend-dead queues it and the next run delivers it', async () => {
    const { shop, receiver } = await shopWithReceiver('Broken Receiver Shop');
    const { shop: otherShop } = await shopWithReceiver('Healthy Receiver Shop');
    receiver.fallback = 500;
    const paid = await paidPayment(service, shop);
    const dead = await untilDead(paid.paymentId);
    expect(dead).toMatchObject({ state: 'dead', attempt_count: 2, last_error: 'HTTP 500', dead_at: clock.now().toISOString(), resendable: true });
    expect(dead.attempts.map((a) => a.httpStatus)).toEqual([500, 500]);

    const list = await api.deadCallbacks(shop.merchant_key);
    expect([list.status, list.json]).toEqual([
      200,
      {
        merchant_key: shop.merchant_key,
        callbacks: [{ payment_id: paid.paymentId, index: 0, number: 1, trans_id: dead.trans_id, type: 'sale', status: 'success', dead_at: dead.dead_at, attempt_count: 2, last_error: 'HTTP 500' }],
      },
    ]);
    expect((await api.deadCallbacks(otherShop.merchant_key)).json).toEqual({ merchant_key: otherShop.merchant_key, callbacks: [] });

    receiver.fallback = 200;
    clock.advance(60_000);
    const resentAt = clock.now().toISOString();
    const res = await api.resendDeadCallbacks(shop.merchant_key);
    expect([res.status, res.json]).toEqual([200, { merchant_key: shop.merchant_key, queued: 1, more: false }]);
    expect((await api.deadCallbacks(shop.merchant_key)).json.callbacks).toEqual([]);
    expect(await callbacksOf(paid.paymentId)).toEqual([expect.objectContaining({ state: 'pending', resendable: false })]);

    await deliver();
    expect(receivedFor(receiver, paid.paymentId).map((c) => c.answer)).toEqual([500, 500, 200]);
    expect(await callbacksOf(paid.paymentId)).toEqual([expect.objectContaining({ state: 'delivered', attempt_count: 3, delivered_at: resentAt })]);

    // A minute later, so the audit log's newest-first order is this one first.
    clock.advance(60_000);
    expect((await api.resendDeadCallbacks(shop.merchant_key)).json).toEqual({ merchant_key: shop.merchant_key, queued: 0, more: false });
    const entries = (await api.audit()).json.entries.filter((e) => e.action === 'callback.resend-dead' && e.target === `merchant:${shop.merchant_key}`).map(withoutChain);
    expect(entries).toEqual([
      expect.objectContaining({ actor: 'olga', targetKind: 'merchant', after: { queued: 0 }, outcome: 'done' }),
      { id: expect.any(String), at: resentAt, actor: 'olga', actorRole: 'operator', action: 'callback.resend-dead', target: `merchant:${shop.merchant_key}`, targetKind: 'merchant', after: { queued: 1 }, outcome: 'done' },
    ]);
  });

  it(`pages through more than ${ADMIN_LIMITS.pageSize} dead callbacks with the cursor, each once; resend-dead queues them all`, async () => {
    const { shop, receiver } = await shopWithReceiver('Many Dead Shop');
    receiver.fallback = 500;
    const made: string[] = [];
    for (let i = 0; i < ADMIN_LIMITS.pageSize + 2; i++) made.push((await paidPayment(service, shop)).paymentId);
    await deliver();
    clock.advance(25 * HOUR);
    await deliver();

    const pages: DeadCallback[][] = [];
    let cursor: string | undefined;
    do {
      const res = await api.deadCallbacks(shop.merchant_key, cursor);
      expect(res.status).toBe(200);
      pages.push(res.json.callbacks);
      cursor = res.json.cursor;
    } while (cursor && pages.length < 5);
    expect(pages.map((p) => p.length)).toEqual([ADMIN_LIMITS.pageSize, 2]);
    expect(pages.flat().map((c) => c.payment_id).sort()).toEqual([...made].sort());

    receiver.fallback = 200;
    expect((await api.resendDeadCallbacks(shop.merchant_key)).json).toEqual({ merchant_key: shop.merchant_key, queued: made.length, more: false });
    expect((await api.deadCallbacks(shop.merchant_key)).json.callbacks).toEqual([]);
    await deliver();
    for (const id of made) expect(receivedFor(receiver, id).map((c) => c.answer)).toEqual([500, 500, 200]);
  }, 90_000);

  it('answers 404 (208030) for an unknown merchant, on the list and on resend-dead (nothing audited)', async () => {
    for (const res of [await api.deadCallbacks('no-such-merchant'), await api.resendDeadCallbacks('no-such-merchant')]) {
      expect([res.status, res.json]).toEqual([404, refusal('MERCHANT_NOT_FOUND')]);
    }
    expect((await api.audit()).json.entries.filter((e) => e.target === 'no-such-merchant')).toEqual([]);
  });

  it('refuses a cursor it did not make (400, not an error page)', async () => {
    const { shop } = await shopWithReceiver('Cursor Shop');
    const forged = ['not-base64-json', Buffer.from('{"pk":1}').toString('base64url'), Buffer.from('[1,2]').toString('base64url'), Buffer.from('"x"').toString('base64url')];
    for (const cursor of forged) {
      const res = await api.deadCallbacks(shop.merchant_key, cursor);
      expect([cursor, res.status, res.json]).toEqual([cursor, 400, invalidRequest('cursor: This value is not valid.')]);
    }
  });
});

describe('without an operator token', () => {
  const routes: [string, 'GET' | 'POST', string][] = [
    ['the delivery log', 'GET', '/admin/api/payments/p/callbacks'],
    ['a resend', 'POST', '/admin/api/payments/p/callbacks/0/resend'],
    ['the dead list', 'GET', '/admin/api/merchants/m/callbacks/dead'],
    ['resend-dead', 'POST', '/admin/api/merchants/m/callbacks/resend-dead'],
  ];

  it.each(routes)('%s answers 401 and does nothing', async (_name, method, template) => {
    const { shop } = await shopWithReceiver('Unauthorized Shop');
    const paid = await paidPayment(service, shop);
    await deliver();
    const path = template.replace('/p/', `/${paid.paymentId}/`).replace('/m/', `/${shop.merchant_key}/`);
    const res = await adminRequest(service, method, path, undefined, method === 'POST' ? {} : undefined);
    expect([res.status, res.json]).toEqual([401, UNAUTHORIZED]);
    expect(await callbacksOf(paid.paymentId)).toEqual([expect.objectContaining({ state: 'delivered' })]);
    expect((await api.payment(paid.paymentId)).json.audit).toEqual([]);
  });
});
