import { randomBytes } from 'node:crypto';
import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { ERRORS, type ErrorName } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import type { AuditEntry } from '../../lambdas/ports/operators';
import fc from 'fast-check';
import { SESSION_EXPIRED_REASON } from '../../lambdas/domain/payment-view';
import { ADMIN_LIMITS } from '../../lambdas/use-cases/admin/deps';
import { exportAuditPart } from '../../lambdas/use-cases/admin/audit';
import type { ActionOutcome } from '../../lambdas/protocol/admin/actions';
import { EXPORT_COLUMNS } from '../../lambdas/protocol/admin/payments-csv';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { updateMerchantSettings, type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { ROUTES } from '../../lib/routes';
import { adminApi, adminRequest, operatorToken, seedOperator, signIn, signInRequest, type AdminApi, type AdminPayment } from '../support/admin';
import { closePage, invalidRequest, openSession, paidPayment, refundOf, statusOf, storedPayment, submitPage } from '../support/payments';
import { startTestService, type TestService } from '../support/service';
import { paidAs } from '../support/suites';

/** An audit entry without its chain fields (seq, prevHash, hash, and a day's link to the day before: see audit-chain.test.ts). */
const withoutChain = <T extends object>(e: T): Omit<T, 'seq' | 'prevHash' | 'hash' | 'prevDay' | 'prevSeq'> => {
  const { seq: _s, prevHash: _p, hash: _h, prevDay: _d, prevSeq: _q, ...rest } = e as T & { seq?: number; prevHash?: string; hash?: string; prevDay?: string; prevSeq?: number };
  return rest;
};


/**
 * The admin API behind the operators' portal (seed spec §1: manual capture "in an administration
 * portal"; protocol.md §4 DMS), over real HTTP with a local operator's token, checked the way API
 * Gateway's JWT authorizer checks Cognito's. Every operator action goes through the same use
 * cases and conditional writes as the merchant API and is written to the append-only audit log.
 */
const T0 = new Date('2030-05-06T08:00:00.000Z');
const TODAY = '2030-05-06';
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const UNAUTHORIZED = { message: 'Unauthorized' };
/** The `$default` route's answer to a path the admin API has, asked with another method. */
const notAllowed = (method: string, path: string, allowed: string) => ({ error_code: ERRORS.METHOD_NOT_ALLOWED.code, error_message: `Method ${method} is not allowed on ${path}; use ${allowed}.`, errors: [] });
const NO_ROUTE = ERRORS.ROUTE_NOT_FOUND.code;
/** The catalog envelope of a refusal, optionally with the message the use case gave it. */
const refusal = (name: ErrorName, message: string = ERRORS[name].message) => ({ error_code: ERRORS[name].code, error_message: message, errors: [] });

const clock = new ManualClock(T0);
let service: TestService;
let api: AdminApi;
let token: string;
/** Two-stage (DMS) with manual capture, and one-stage. */
let dmsShop: MerchantCredentials;
let smsShop: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService({ clock });
  const alice = await seedOperator(service, 'alice', 'alice-long-password');
  token = await signIn(service, alice);
  api = adminApi(service, token);
  [dmsShop, smsShop] = await Promise.all([service.createMerchant({ name: 'Two Step Shop' }), service.createMerchant({ name: 'One Step Shop' })]);
  await updateMerchantSettings(service.deps, dmsShop.merchant_key, { dms: true });
});
afterAll(() => service.close());
beforeEach(() => clock.set(T0));

/** A DMS page payment, authorized now: pending. */
const authorization = (card = '01/38', amount = '25.00') => paidAs(service, dmsShop, 'pending', { card, order: { amount } });

/** A one-stage page payment, settled now (voidable until 21:00 UTC+3 today). */
const sale = (amount = '25.00') => paidAs(service, smsShop, 'settled', { order: { amount } });

async function detail(paymentId: string) {
  const res = await api.payment(paymentId);
  expect(res.status).toBe(200);
  return res.json;
}

/** Every page of a search, following the cursor. */
async function allPages(params: Record<string, string>) {
  const pages: AdminPayment[][] = [];
  let cursor: string | undefined;
  do {
    const res = await api.searchPayments({ ...params, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    pages.push(res.json.payments);
    cursor = res.json.cursor;
  } while (cursor && pages.length < 20);
  return pages;
}

describe('POST /admin/api/session (sign-in)', () => {
  it('signs an operator in: a bearer token for an hour, which the admin API accepts', async () => {
    const res = await signInRequest(service, { username: 'alice', password: 'alice-long-password' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/), expires_in: 3600, username: 'alice' });
    expect((await adminRequest(service, 'GET', '/admin/api/merchants', res.json.token)).status).toBe(200);
  });

  it.each([
    ['a wrong password', { username: 'alice', password: 'alice-wrong-password' }],
    ['an unknown operator', { username: 'mallory', password: 'alice-long-password' }],
    ['a user name the store would not accept', { username: 'a/b', password: 'alice-long-password' }],
  ])('refuses %s with the same 401 envelope', async (_case, body) => {
    const res = await signInRequest(service, body);
    expect([res.status, res.json]).toEqual([401, refusal('UNAUTHORIZED', 'Wrong user name or password.')]);
  });

  it.each([
    ['no fields', {}, ['username: This value should not be blank.', 'password: This value should not be blank.']],
    ['no password', { username: 'alice' }, ['password: This value should not be blank.']],
    ['a blank user name', { username: '   ', password: 'alice-long-password' }, ['username: This value should not be blank.']],
    ['fields of the wrong type', { username: 7, password: ['x'] }, ['username: This value should not be blank.', 'password: This value should not be blank.']],
  ])('answers %s with 400 and the fields missing', async (_case, body, errors) => {
    const res = await signInRequest(service, body);
    expect([res.status, res.json]).toEqual([400, invalidRequest(...errors)]);
  });

  it('answers a body that is not JSON with 400', async () => {
    const res = await service.request({ path: '/admin/api/session', headers: { 'content-type': 'application/json' }, body: 'username=alice' });
    expect([res.status, res.json]).toEqual([400, invalidRequest('body: The request body is not valid JSON.')]);
  });
});

describe('the admin API without a valid operator token', () => {
  const operatorRoutes = ROUTES.filter((r) => r.auth === 'operator').map((r) => [`${r.method} ${r.path}`, r.method, r.path.replace(/\{\w+\}/g, 'x')] as const);

  it('protects every /admin/api route but sign-in', () => {
    const adminApiRoutes = ROUTES.filter((r) => r.path.startsWith('/admin/api'));
    expect(adminApiRoutes.filter((r) => r.auth !== 'operator').map((r) => r.id)).toEqual(['AdminSignIn']);
    expect(operatorRoutes).toHaveLength(adminApiRoutes.length - 1);
  });

  const tokens: [string, () => Promise<string | undefined>][] = [
    ['no token', async () => undefined],
    ['a token signed with another key', () => operatorToken(randomBytes(32), { username: 'alice' })],
    ['an expired token', () => operatorToken(service.backend.operatorKey, { username: 'alice', issuedAt: new Date(Date.now() - 2 * HOUR), expiresAt: new Date(Date.now() - HOUR) })],
    ['a token of another issuer', () => operatorToken(service.backend.operatorKey, { username: 'alice', issuer: 'https://cognito-idp.example/other' })],
    ['a token for another audience', () => operatorToken(service.backend.operatorKey, { username: 'alice', audience: 'another-app' })],
    ['an unsigned token (alg none)', async () => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ username: 'alice', exp: 4e9 })).toString('base64url')}.`],
    ['a token that is not a JWT', async () => 'not-a-token'],
  ];

  describe.each(tokens)('with %s', (_case, makeToken) => {
    it.each(operatorRoutes)('%s answers 401 {"message":"Unauthorized"} and does nothing', async (_route, method, path) => {
      const bearer = await makeToken();
      const res = await adminRequest(service, method, path, bearer, method === 'GET' ? undefined : { action: 'capture', payment_ids: ['x'], dms: true });
      expect([res.status, res.json]).toEqual([401, UNAUTHORIZED]);
    });
  });

  it('does not act on a write sent from another origin, even with a valid token', async () => {
    const paid = await authorization();
    for (const origin of ['https://evil.example', 'null']) {
      const res = await service.request({
        method: 'POST',
        path: `/admin/api/payments/${paid.paymentId}/capture`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', origin },
        body: '{}',
      });
      expect([res.status, res.json]).toEqual([401, refusal('UNAUTHORIZED', 'Cross-origin requests are not accepted.')]);
    }
    expect((await storedPayment(service, paid.paymentId)).status).toBe('pending');
  });
});

describe('payments search (GET /admin/api/payments)', () => {
  it('finds a payment by order number, and by payment id', async () => {
    const paid = await sale();
    const byOrder = await api.searchPayments({ order: paid.order.number });
    expect(byOrder.status).toBe(200);
    expect(byOrder.json.payments.map((p) => p.payment_id)).toEqual([paid.paymentId]);
    expect(byOrder.json.payments[0]).toMatchObject({
      merchant_key: smsShop.merchant_key,
      order_number: paid.order.number,
      amount: '25.00',
      currency: 'USD',
      status: 'settled',
      created_at: T0.toISOString(),
      actions: ['void', 'refund'],
    });
    expect((await api.searchPayments({ payment_id: paid.paymentId })).json.payments.map((p) => p.order_number)).toEqual([paid.order.number]);
    expect((await api.searchPayments({ payment_id: paid.paymentId, merchant: dmsShop.merchant_key })).json.payments).toEqual([]);
    expect((await api.searchPayments({ payment_id: 'no-such-payment' })).json).toEqual({ payments: [] });
  });

  it('filters by status, as the merchant reads it, and by merchant', async () => {
    const shop = await service.createMerchant({ name: 'Status Shop' });
    const approved = await paidPayment(service, shop);
    // Closed after the decline, the decline is final; left open, the customer may still pay: prepare.
    const declined = await paidPayment(service, shop, { card: '02/38', close: true });
    const open = await paidPayment(service, shop, { card: '02/38' });
    expect([declined.status.status, open.status.status]).toEqual(['decline', 'prepare']);
    await paidPayment(service, smsShop, { card: '02/38', close: true });
    const declines = await api.searchPayments({ merchant: shop.merchant_key, status: 'decline' });
    expect(declines.json.payments.map((p) => [p.payment_id, p.status, p.reason])).toEqual([[declined.paymentId, 'decline', 'Declined by processing.']]);
    const prepares = await api.searchPayments({ merchant: shop.merchant_key, status: 'prepare' });
    expect(prepares.json.payments.map((p) => [p.payment_id, p.status, p.reason])).toEqual([[open.paymentId, 'prepare', undefined]]);
    const ofShop = await api.searchPayments({ merchant: shop.merchant_key });
    expect(ofShop.json.payments.map((p) => p.payment_id).sort()).toEqual([approved.paymentId, declined.paymentId, open.paymentId].sort());
    const res = await api.searchPayments({ status: 'paid' });
    expect([res.status, res.json]).toEqual([400, invalidRequest('status: The value you selected is not a valid choice.')]);
  });

  it('finds payments by part of the order number, the start of the payment id, e-mail, last four, amount and merchant name', async () => {
    clock.set('2030-05-20T10:00:00.000Z');
    const shop = await service.createMerchant({ name: 'Findable Books' });
    const a = await paidPayment(service, shop, { order: { number: 'INV-2030-0042', amount: '12.50' }, extra: { customer: { name: 'Ana Lima', email: 'ana.lima@example.com' } } });
    const b = await paidPayment(service, shop, { order: { number: 'INV-2030-0043', amount: '99.00' }, extra: { customer: { name: 'Bo Berg', email: 'bo@example.org' } } });
    clock.set(T0);
    const found = async (params: Record<string, string>) =>
      (await allPages({ from: '2030-05-20', to: '2030-05-20', ...params })).flat().map((p) => p.order_number).sort();
    expect(await found({ order: 'inv-2030-004' })).toEqual(['INV-2030-0042', 'INV-2030-0043']);
    expect(await found({ order: 'INV-2030-0043' })).toEqual(['INV-2030-0043']);
    expect(await found({ payment_id: a.paymentId.slice(0, 8), merchant: shop.merchant_key })).toEqual(['INV-2030-0042']);
    expect(await found({ email: 'ANA.LIMA@' })).toEqual(['INV-2030-0042']);
    expect(await found({ email: 'example.org', merchant: 'findable' })).toEqual(['INV-2030-0043']);
    expect(await found({ last4: '1111', merchant: 'Findable Books' })).toEqual(['INV-2030-0042', 'INV-2030-0043']);
    expect(await found({ amount: '12.5', merchant: 'findable' })).toEqual(['INV-2030-0042']);
    expect(await found({ amount: '99', merchant: 'findable' })).toEqual(['INV-2030-0043']);
    expect(await found({ merchant: 'no such shop' })).toEqual([]);
    const listed = (await api.searchPayments({ from: '2030-05-20', to: '2030-05-20', merchant: 'findable' })).json.payments;
    expect(listed.map((p) => (p as { merchant_name?: string }).merchant_name)).toEqual(['Findable Books', 'Findable Books']);
    expect(b.paymentId).not.toBe(a.paymentId);
  });

  it.each([
    ['last four that are not four digits', { last4: '11' }, 'last4: Enter the last four digits of the card.'],
    ['an amount that is not a number', { amount: 'ten' }, 'amount: Enter an amount such as 25 or 25.00.'],
    ['a payment id start shorter than 4', { payment_id: 'ab' }, 'payment_id: Enter a payment id or at least its first 4 characters.'],
  ])('refuses %s with 400', async (_case, params, error) => {
    const res = await api.searchPayments(params as Record<string, string>);
    expect([res.status, res.json]).toEqual([400, invalidRequest(error)]);
  });

  it('shows transaction amounts in decimals', async () => {
    const paid = await sale();
    expect((await detail(paid.paymentId)).transactions.map((t) => (t as { amount?: string }).amount)).toEqual(['25.00']);
  });

  it('searches a range of UTC days, newest first; by default the last 7 days', async () => {
    const shop = await service.createMerchant({ name: 'Calendar Shop' });
    const days = ['2030-04-20', '2030-04-21', '2030-04-22', '2030-04-28'];
    const made: Record<string, string> = {};
    for (const day of days) {
      clock.set(`${day}T12:00:00.000Z`);
      made[day] = (await openSession(service, shop)).paymentId;
    }
    clock.set('2030-04-28T13:00:00.000Z');
    const ids = async (params: Record<string, string>) => (await allPages({ merchant: shop.merchant_key, ...params })).flat().map((p) => p.payment_id);
    expect(await ids({ from: '2030-04-21', to: '2030-04-21' })).toEqual([made['2030-04-21']]);
    expect(await ids({ from: '2030-04-20', to: '2030-04-22' })).toEqual([made['2030-04-22'], made['2030-04-21'], made['2030-04-20']]);
    expect(await ids({})).toEqual([made['2030-04-28'], made['2030-04-22']]);

    const tooLong = await api.searchPayments({ from: '2030-01-01', to: '2030-04-28' });
    expect([tooLong.status, tooLong.json]).toEqual([400, invalidRequest('from: The date range should cover 1 to 31 days.')]);
    const backwards = await api.searchPayments({ from: '2030-04-28', to: '2030-04-20' });
    expect(backwards.status).toBe(400);
  });

  it(`pages through more than ${ADMIN_LIMITS.pageSize} payments with the cursor: each once, newest first`, async () => {
    const day = '2030-05-16';
    const shop = await service.createMerchant({ name: 'Busy Shop' });
    const made: string[] = [];
    for (let i = 0; i < 32; i++) {
      clock.set(new Date(Date.parse(`${day}T09:00:00.000Z`) + i * 1000));
      made.push((await openSession(service, shop)).paymentId);
    }
    clock.set(`${day}T18:00:00.000Z`);
    for (const params of [{ from: day, to: day }, { merchant: shop.merchant_key }] as Record<string, string>[]) {
      const pages = await allPages(params);
      expect(pages.map((p) => p.length)).toEqual([25, 7]);
      expect(pages.flat().map((p) => p.payment_id)).toEqual([...made].reverse());
    }
  });

  it('refuses a cursor it did not make (400, not an error page)', async () => {
    const forged = [
      'not-base64-json',
      Buffer.from('{"day":"x"}').toString('base64url'),
      Buffer.from(JSON.stringify({ day: 0, page: 'garbage' })).toString('base64url'),
      Buffer.from(JSON.stringify({ day: 0, page: Buffer.from('{"pk":1}').toString('base64url') })).toString('base64url'),
    ];
    for (const cursor of forged) {
      const res = await api.searchPayments({ cursor });
      expect([res.status, res.json]).toEqual([400, invalidRequest('cursor: This value is not valid.')]);
    }
    const audit = await api.audit('not-base64-json');
    expect([audit.status, audit.json]).toEqual([400, invalidRequest('cursor: This value is not valid.')]);
  });
});

describe('payment detail (GET /admin/api/payments/{id})', () => {
  it('shows the payment, its transactions and the operator actions on it', async () => {
    const paid = await authorization();
    clock.set(new Date(T0.getTime() + HOUR));
    await api.act(paid.paymentId, 'capture', { amount: '20.00' });
    const d = await detail(paid.paymentId);
    expect(d.payment).toMatchObject({ payment_id: paid.paymentId, status: 'settled', captured_amount: '20.00', authorization_expires_at: new Date(T0.getTime() + 7 * DAY).toISOString() });
    expect(d.transactions.map((t) => [t.type, t.status, t.amountMinor, t.at, t.actor])).toEqual([
      ['sale', 'success', 2500, T0.toISOString(), undefined],
      ['capture', 'success', 2000, new Date(T0.getTime() + HOUR).toISOString(), 'operator:alice'],
    ]);
    expect(d.audit).toEqual([
      expect.objectContaining({ actor: 'alice', action: 'payment.capture 20.00', target: paid.paymentId, outcome: 'done', at: new Date(T0.getTime() + HOUR).toISOString() }),
    ]);
  });

  it('answers 404 (208001) for an unknown payment', async () => {
    const res = await api.payment('no-such-payment');
    expect([res.status, res.json]).toEqual([404, refusal('PAYMENT_NOT_FOUND')]);
  });
});

describe('operator actions (POST /admin/api/payments/{id}/{action})', () => {
  it('offers capture and release on an authorization, void and refund on a settled payment', async () => {
    const [auth, settled] = [await authorization(), await sale()];
    expect((await detail(auth.paymentId)).payment.actions).toEqual(['capture', 'release']);
    expect((await detail(settled.paymentId)).payment.actions).toEqual(['void', 'refund']);
  });

  it('captures the whole authorization: settled, as the merchant status endpoint says', async () => {
    const paid = await authorization();
    const res = await api.act(paid.paymentId, 'capture');
    expect([res.status, res.json]).toEqual([200, { payment_id: paid.paymentId, action: 'capture', outcome: 'done', status: 'settled' }]);
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'settled' });
    expect((await storedPayment(service, paid.paymentId)).capturedMinor).toBe(2500);
  });

  it('captures part of the authorization once; a refund then defaults to what was captured', async () => {
    const paid = await authorization();
    expect((await api.act(paid.paymentId, 'capture', { amount: '10.00' })).json).toMatchObject({ outcome: 'done', status: 'settled' });
    expect((await detail(paid.paymentId)).payment).toMatchObject({ captured_amount: '10.00', actions: ['void', 'refund'] });
    expect((await api.act(paid.paymentId, 'capture', { amount: '5.00' })).json).toMatchObject({ outcome: 'refused', status: 'settled', message: ERRORS.CAPTURE_NOT_PENDING.message });

    expect((await api.act(paid.paymentId, 'refund')).json).toMatchObject({ outcome: 'done', status: 'refund' });
    expect((await detail(paid.paymentId)).payment).toMatchObject({ refunded_amount: '10.00', actions: [] });
  });

  it('refuses a capture over the authorized amount (208004), leaves the payment pending, and audits the refusal', async () => {
    const paid = await authorization();
    const res = await api.act(paid.paymentId, 'capture', { amount: '25.01' });
    const tooBig = 'Capture amount 25.01 is bigger than the authorized amount (25.00 USD).';
    expect([res.status, res.json]).toEqual([200, { payment_id: paid.paymentId, action: 'capture', outcome: 'refused', status: 'pending', message: tooBig }]);
    expect(ERRORS.CAPTURE_AMOUNT_TOO_BIG.code).toBe(208004);
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'pending' });
    expect((await detail(paid.paymentId)).audit).toEqual([
      expect.objectContaining({
        actor: 'alice',
        action: 'payment.capture 25.01',
        outcome: 'refused',
        detail: tooBig,
        before: { status: 'pending' },
        after: { status: 'pending' },
      }),
    ]);
    const bad = await api.act(paid.paymentId, 'capture', { amount: 'ten' });
    expect(bad.json).toMatchObject({ outcome: 'refused', message: 'amount: Write the amount in USD with up to 2 decimals, e.g. 12.50.' });
  });

  it('reports a capture the acquirer declines (03/38) as failed; the payment stays pending', async () => {
    const paid = await authorization('03/38');
    const res = await api.act(paid.paymentId, 'capture');
    expect(res.json).toEqual({ payment_id: paid.paymentId, action: 'capture', outcome: 'failed', status: 'pending', message: SANDBOX_REASONS.captureDeclined });
    expect((await detail(paid.paymentId)).payment.actions).toEqual(['capture', 'release']);
  });

  it('releases an authorization: reversal, as the merchant status endpoint says', async () => {
    const paid = await authorization();
    expect((await api.act(paid.paymentId, 'release')).json).toEqual({ payment_id: paid.paymentId, action: 'release', outcome: 'done', status: 'reversal' });
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'reversal', reason: 'Authorization released.' });
    expect((await storedPayment(service, paid.paymentId)).transactions.map((t) => [t.type, t.actor])).toEqual([
      ['sale', undefined],
      ['reversal', 'operator:alice'],
    ]);
    expect((await api.act(paid.paymentId, 'capture')).json).toMatchObject({ outcome: 'refused', message: ERRORS.CAPTURE_NOT_PENDING.message });
  });

  it('voids a settled payment inside its window, and refuses to void an authorization', async () => {
    const settled = await sale();
    clock.set(new Date(T0.getTime() + 2 * HOUR));
    expect((await api.act(settled.paymentId, 'void')).json).toEqual({ payment_id: settled.paymentId, action: 'void', outcome: 'done', status: 'void' });
    await expect(statusOf(service, smsShop, settled.paymentId)).resolves.toMatchObject({ status: 'void' });
    expect((await detail(settled.paymentId)).audit).toEqual([
      expect.objectContaining({ actor: 'alice', action: 'payment.void', at: new Date(T0.getTime() + 2 * HOUR).toISOString(), outcome: 'done', before: { status: 'settled' }, after: { status: 'void' } }),
    ]);

    const auth = await authorization();
    expect((await api.act(auth.paymentId, 'void')).json).toMatchObject({ outcome: 'refused', status: 'pending', message: ERRORS.VOID_NOT_SETTLED.message });
  });

  it('reports a void after the window as failed (settled stays settled)', async () => {
    const settled = await sale();
    clock.set('2030-05-06T18:00:00.000Z'); // 21:00 at UTC+3
    expect((await api.act(settled.paymentId, 'void')).json).toMatchObject({ outcome: 'failed', status: 'settled' });
    expect((await detail(settled.paymentId)).payment.actions).toEqual(['refund']);
  });

  it('refunds part and then the rest of a settled payment', async () => {
    const settled = await sale();
    expect((await api.act(settled.paymentId, 'refund', { amount: '5.00' })).json).toMatchObject({ outcome: 'done', status: 'settled' });
    // A payment with refunds can no longer be voided.
    expect((await detail(settled.paymentId)).payment).toMatchObject({ refunded_amount: '5.00', actions: ['refund'] });
    clock.advance(60_000);
    expect((await api.act(settled.paymentId, 'refund', { amount: '20.01' })).json).toMatchObject({ outcome: 'refused', message: 'Refund amount 20.01 is bigger than what is left to refund (20.00 USD).' });
    clock.advance(60_000);
    expect((await api.act(settled.paymentId, 'refund')).json).toMatchObject({ outcome: 'done', status: 'refund' });
    await expect(statusOf(service, smsShop, settled.paymentId)).resolves.toMatchObject({ status: 'refund', refunded_amount: '25.00' });
    expect((await detail(settled.paymentId)).audit.map((a) => [a.action, a.outcome, a.before, a.after])).toEqual([
      ['payment.refund', 'done', { status: 'settled', refunded_amount: '5.00' }, { status: 'refund', refunded_amount: '25.00' }],
      ['payment.refund 20.01', 'refused', { status: 'settled', refunded_amount: '5.00' }, { status: 'settled', refunded_amount: '5.00' }],
      ['payment.refund 5.00', 'done', { status: 'settled' }, { status: 'settled', refunded_amount: '5.00' }],
    ]);
  });

  it('reads amounts as operators type them, and says what is left when a refund is too big', async () => {
    const settled = await sale();
    expect((await detail(settled.paymentId)).payment.left_to_refund).toBe('25.00');
    expect((await api.act(settled.paymentId, 'refund', { amount: '100' })).json).toMatchObject({ outcome: 'refused', status: 'settled', message: 'Refund amount 100.00 is bigger than what is left to refund (25.00 USD).' });
    expect((await api.act(settled.paymentId, 'refund', { amount: '12,5' })).json).toMatchObject({ outcome: 'done', status: 'settled' });
    expect((await detail(settled.paymentId)).payment).toMatchObject({ refunded_amount: '12.50', left_to_refund: '12.50' });
    expect((await api.act(settled.paymentId, 'refund', { amount: '15.00' })).json).toMatchObject({ outcome: 'refused', message: 'Refund amount 15.00 is bigger than what is left to refund (12.50 USD).' });
    expect((await api.act(settled.paymentId, 'refund', { amount: '0' })).json).toMatchObject({ outcome: 'refused', message: 'amount: The amount must be more than zero.' });
    expect((await api.act(settled.paymentId, 'refund', { amount: '1.234' })).json).toMatchObject({ outcome: 'refused', message: 'amount: Write the amount in USD with up to 2 decimals, e.g. 12.50.' });
    // Each audited with the amount as read (the entries share a timestamp, so compared as a set).
    expect((await detail(settled.paymentId)).audit.map((a) => a.action).sort()).toEqual(['payment.refund 0', 'payment.refund 1.234', 'payment.refund 100.00', 'payment.refund 12.50', 'payment.refund 15.00']);
    await expect(statusOf(service, smsShop, settled.paymentId)).resolves.toMatchObject({ status: 'settled', refunded_amount: '12.50' });
  });

  it('answers an unknown action with 400 and an unknown payment with 404', async () => {
    const paid = await authorization();
    const res = await api.act(paid.paymentId, 'settle');
    expect([res.status, res.json]).toEqual([400, invalidRequest('action: The value you selected is not a valid choice.')]);
    const missing = await api.act('no-such-payment', 'capture');
    expect([missing.status, missing.json]).toEqual([404, refusal('PAYMENT_NOT_FOUND')]);
  });
});

describe('capture queue (GET /admin/api/capture-queue, POST /admin/api/capture-queue/bulk)', () => {
  it('lists pending authorizations, the soonest to expire first', async () => {
    const made: string[] = [];
    for (const offset of [2 * HOUR, 0, HOUR]) {
      clock.set(new Date(T0.getTime() - 3 * HOUR + offset));
      made.push((await authorization()).paymentId);
    }
    clock.set(T0);
    const res = await api.captureQueue();
    expect(res.status).toBe(200);
    const expiries = res.json.payments.map((p) => p.authorization_expires_at ?? '');
    expect(expiries).toEqual([...expiries].sort());
    expect(res.json.payments.every((p) => p.status === 'pending')).toBe(true);
    const ours = res.json.payments.filter((p) => made.includes(p.payment_id)).map((p) => p.payment_id);
    expect(ours).toEqual([made[1], made[2], made[0]]);
  });

  it('captures several at once, each audited; they leave the queue', async () => {
    const paid = [await authorization(), await authorization(), await authorization()];
    const settled = await sale();
    const ids = [...paid.map((p) => p.paymentId), settled.paymentId];
    const res = await api.bulk('capture', ids);
    expect(res.status).toBe(200);
    expect(res.json.results.map((r) => [r.payment_id, r.outcome, r.status])).toEqual([
      ...paid.map((p) => [p.paymentId, 'done', 'settled']),
      [settled.paymentId, 'refused', 'settled'],
    ]);
    const queued = (await api.captureQueue()).json.payments.map((p) => p.payment_id);
    expect(ids.filter((id) => queued.includes(id))).toEqual([]);
    for (const p of paid) await expect(statusOf(service, dmsShop, p.paymentId)).resolves.toMatchObject({ status: 'settled' });
    for (const id of ids) expect((await detail(id)).audit).toEqual([expect.objectContaining({ actor: 'alice', action: 'payment.capture' })]);
  });

  it('captures each payment\'s own amount from `amounts`; one without an amount in full', async () => {
    const [part, whole] = [await authorization(), await authorization()];
    const res = await adminRequest<{ results: ActionOutcome[] }>(service, 'POST', '/admin/api/capture-queue/bulk', token, { action: 'capture', payment_ids: [part.paymentId, whole.paymentId], amounts: { [part.paymentId]: '1' } });
    expect(res.json.results.map((r) => [r.payment_id, r.outcome, r.status])).toEqual([[part.paymentId, 'done', 'settled'], [whole.paymentId, 'done', 'settled']]);
    expect((await storedPayment(service, part.paymentId)).capturedMinor).toBe(100);
    expect((await storedPayment(service, whole.paymentId)).capturedMinor).toBe(2500);
    expect((await detail(part.paymentId)).audit).toEqual([expect.objectContaining({ action: 'payment.capture 1.00', outcome: 'done' })]);
  });

  it('names why each payment of a bulk capture was not done', async () => {
    const [tooMuch, declined] = [await authorization(), await authorization('03/38')];
    const res = await adminRequest<{ results: ActionOutcome[] }>(service, 'POST', '/admin/api/capture-queue/bulk', token, { action: 'capture', payment_ids: [tooMuch.paymentId, declined.paymentId], amounts: { [tooMuch.paymentId]: '25.01' } });
    expect(res.json.results).toEqual([
      { payment_id: tooMuch.paymentId, action: 'capture', outcome: 'refused', status: 'pending', message: 'Capture amount 25.01 is bigger than the authorized amount (25.00 USD).' },
      { payment_id: declined.paymentId, action: 'capture', outcome: 'failed', status: 'pending', message: SANDBOX_REASONS.captureDeclined },
    ]);
  });

  it.each([
    ['an amount for a payment not selected', 'capture', { other: '1.00' }, 'amounts: Amounts for payments that are not selected: other.'],
    ['an amount with a release', 'release', { SELF: '1.00' }, 'amounts: A release has no amount: it releases the whole authorization.'],
    ['amounts that are not an object', 'capture', ['1.00'], 'amounts: Give an object of payment id to amount, e.g. {"<payment id>": "1.00"}.'],
    ['an amount that is not a string', 'capture', { SELF: 1 }, 'amounts: Give an object of payment id to amount, e.g. {"<payment id>": "1.00"}.'],
  ])('refuses %s with 400 and moves nothing', async (_case, action, amounts, error) => {
    const paid = await authorization();
    const withSelf = Array.isArray(amounts) ? amounts : Object.fromEntries(Object.entries(amounts).map(([k, v]) => [k === 'SELF' ? paid.paymentId : k, v]));
    const res = await adminRequest(service, 'POST', '/admin/api/capture-queue/bulk', token, { action, payment_ids: [paid.paymentId], amounts: withSelf });
    expect([res.status, res.json]).toEqual([400, invalidRequest(error)]);
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'pending' });
  });

  it('releases several at once', async () => {
    const paid = [await authorization(), await authorization()];
    const res = await api.bulk('release', paid.map((p) => p.paymentId));
    expect(res.json.results.map((r) => [r.outcome, r.status])).toEqual([['done', 'reversal'], ['done', 'reversal']]);
  });

  it.each([
    ['an unknown action', 'void', ['x'], 'action: The value you selected is not a valid choice.'],
    ['no payments', 'capture', [], `payment_ids: Select 1 to ${ADMIN_LIMITS.bulkSize} payments.`],
    ['too many payments', 'capture', Array.from({ length: ADMIN_LIMITS.bulkSize + 1 }, (_, i) => `p${i}`), `payment_ids: Select 1 to ${ADMIN_LIMITS.bulkSize} payments.`],
    ['payment ids that are not a list', 'capture', 'p1,p2', `payment_ids: Select 1 to ${ADMIN_LIMITS.bulkSize} payments.`],
  ])('refuses %s with 400', async (_case, action, ids, error) => {
    const res = await api.bulk(action, ids);
    expect([res.status, res.json]).toEqual([400, invalidRequest(error)]);
  });
});

describe('merchant settings (GET and PUT /admin/api/merchants/{key})', () => {
  it('lists merchants with their settings', async () => {
    const res = await api.merchants();
    expect(res.status).toBe(200);
    expect(res.json.merchants).toEqual(expect.arrayContaining([expect.objectContaining({ merchant_key: dmsShop.merchant_key, name: 'Two Step Shop', dms: true })]));
  });

  it('changes every setting the portal offers, audited with before and after; the checkout uses them', async () => {
    const shop = await service.createMerchant({ name: 'Settings Shop' });
    const change = {
      dms: true,
      auto_capture_delay_minutes: 45,
      return_params: true,
      notification_url: 'https://shop.example/notify',
      methods: ['card'],
      branding: { primary_color: '#123456', logo_url: 'https://shop.example/logo.png' },
      frame_ancestors: ['https://shop.example', 'https://*.shop.example'],
      pre_routing: [{ currency: 'EUR', min_amount_minor: 100, max_amount_minor: 100000, methods: ['card'] }],
      max_declines: 5,
      name: 'Settings Shop Ltd',
    };
    const res = await api.changeMerchant(shop.merchant_key, change);
    const settings = {
      name: 'Settings Shop Ltd',
      dms: true,
      autoCaptureDelayMinutes: 45,
      returnParams: true,
      notificationUrl: 'https://shop.example/notify',
      methods: ['card'],
      maxDeclines: 5,
      branding: { primaryColor: '#123456', logoUrl: 'https://shop.example/logo.png' },
      frameAncestors: ['https://shop.example', 'https://*.shop.example'],
      preRouting: [{ currency: 'EUR', minAmountMinor: 100, maxAmountMinor: 100000, methods: ['card'] }],
    };
    expect([res.status, res.json]).toEqual([200, { merchant_key: shop.merchant_key, settings }]);
    const read = await api.merchant(shop.merchant_key);
    expect(read.json.settings).toEqual(settings);
    expect(read.json.audit).toEqual([
      expect.objectContaining({
        actor: 'alice',
        action: 'merchant.settings',
        target: `merchant:${shop.merchant_key}`,
        at: T0.toISOString(),
        outcome: 'done',
        before: { name: 'Settings Shop', dms: false, returnParams: false, maxDeclines: 3 },
        after: settings,
      }),
    ]);

    // The checkout follows the new settings: a page payment is now an authorization.
    const paid = await paidPayment(service, shop);
    expect(paid.status.status).toBe('pending');
    expect((await storedPayment(service, paid.paymentId)).authorizationExpiresAt).toBe(new Date(T0.getTime() + 7 * DAY).toISOString());
  });

  it('clears an optional setting with null (automatic capture off: manual capture only)', async () => {
    const shop = await service.createMerchant({ name: 'Clearing Shop', settings: { dms: true, autoCaptureDelayMinutes: 10, notificationUrl: 'https://shop.example/n' } });
    const res = await api.changeMerchant(shop.merchant_key, { auto_capture_delay_minutes: null, notification_url: null });
    expect(res.json.settings).toEqual({ name: 'Clearing Shop', dms: true, returnParams: false, maxDeclines: 3 });
  });

  const DELAY = 'settings: auto capture delay must be a whole number of minutes from 0 to 10080';
  const NOT_VALID = (path: string) => `${path}: This value is not valid.`;
  it.each([
    ['a negative delay', { auto_capture_delay_minutes: -1 }, DELAY],
    ['a fractional delay', { auto_capture_delay_minutes: 1.5 }, DELAY],
    ['a delay over 7 days', { auto_capture_delay_minutes: 10081 }, DELAY],
    ['a delay as text', { auto_capture_delay_minutes: '10' }, NOT_VALID('auto_capture_delay_minutes')],
    ['dms as text', { dms: 'yes' }, NOT_VALID('dms')],
    ['return params as a number', { return_params: 1 }, NOT_VALID('return_params')],
    ['a notification URL that is not http(s)', { notification_url: 'ftp://shop.example/n' }, 'settings: notification URL must be an http(s) URL of at most 1024 characters'],
    ['an unknown method', { methods: ['bitcoin'] }, 'settings: methods must be a list without repeats of: card (unknown: bitcoin)'],
    ['no methods', { methods: [] }, 'settings: methods must be a list without repeats of: card'],
    ['a brand colour that is not #RRGGBB', { branding: { primary_color: 'red' } }, 'settings: brand color must be #RRGGBB'],
    ['a brand colour too light for the white button text', { branding: { primary_color: '#ffcc00' } }, 'settings: brand color #ffcc00 is too light: white text on it has a contrast of 1.51:1, and the page needs at least 4.5:1 (try a darker shade)'],
    ['an http logo', { branding: { logo_url: 'http://shop.example/logo.png' } }, 'settings: logo URL must be an https URL of at most 1024 characters'],
    ['branding that is not an object', { branding: 'blue' }, NOT_VALID('branding')],
    ['a framing origin that is not an origin', { frame_ancestors: ['*'] }, 'settings: frame ancestors must be 1-10 origins like https://shop.example or https://*.shop.example (not an origin: *)'],
    ['a pre-routing rule without methods', { pre_routing: [{ methods: [] }] }, NOT_VALID('pre_routing')],
    ['a pre-routing rule with an unknown method', { pre_routing: [{ methods: ['bitcoin'] }] }, NOT_VALID('pre_routing')],
    ['a pre-routing rule with min above max', { pre_routing: [{ methods: ['card'], min_amount_minor: 500, max_amount_minor: 100 }] }, NOT_VALID('pre_routing')],
    ['a pre-routing rule with a bad currency', { pre_routing: [{ methods: ['card'], currency: 'euro' }] }, NOT_VALID('pre_routing')],
    ['pre-routing that is not a list', { pre_routing: { methods: ['card'] } }, NOT_VALID('pre_routing')],
    ['a blank name', { name: '  ' }, 'settings: name must be 1-64 characters, without control characters'],
    ['max declines out of range', { max_declines: 0 }, 'settings: max declines must be a whole number from 1 to 10'],
  ])('refuses %s with 400 and changes nothing', async (_case, body, error) => {
    const before = (await api.merchant(dmsShop.merchant_key)).json;
    const res = await api.changeMerchant(dmsShop.merchant_key, body);
    expect([res.status, res.json]).toEqual([400, invalidRequest(error)]);
    expect((await api.merchant(dmsShop.merchant_key)).json).toEqual(before);
  });

  it('answers 404 (208030) for an unknown merchant, on read and on change', async () => {
    expect((await api.merchant('no-such-merchant')).json).toEqual(refusal('MERCHANT_NOT_FOUND'));
    const res = await api.changeMerchant('no-such-merchant', { dms: true });
    expect([res.status, res.json]).toEqual([404, refusal('MERCHANT_NOT_FOUND')]);
  });
});

describe('the audit log (GET /admin/api/audit)', () => {
  it('records who did what, when, to what, with the state before and after, newest first', async () => {
    const bob = await seedOperator(service, 'bob', 'bob-long-password-1');
    const bobApi = adminApi(service, await signIn(service, bob));
    clock.set('2030-05-07T09:00:00.000Z');
    const [toCapture, toRelease] = [await authorization(), await authorization()];
    clock.set('2030-05-07T09:01:00.000Z');
    await bobApi.act(toCapture.paymentId, 'capture', { amount: '12.50' });
    clock.set('2030-05-07T09:02:00.000Z');
    await bobApi.bulk('release', [toRelease.paymentId]);
    clock.set('2030-05-07T09:03:00.000Z');
    await bobApi.changeMerchant(smsShop.merchant_key, { return_params: true });

    const res = await bobApi.audit();
    expect(res.status).toBe(200);
    const byBob = res.json.entries.filter((e) => e.actor === 'bob').map(withoutChain);
    expect(byBob).toEqual([
      {
        id: expect.any(String),
        at: '2030-05-07T09:03:00.000Z',
        actor: 'bob',
        actorRole: 'admin',
        action: 'merchant.settings',
        target: `merchant:${smsShop.merchant_key}`,
        targetKind: 'merchant',
        before: expect.objectContaining({ returnParams: false }),
        after: expect.objectContaining({ returnParams: true }),
        outcome: 'done',
      },
      {
        id: expect.any(String),
        at: '2030-05-07T09:02:00.000Z',
        actor: 'bob',
        actorRole: 'admin',
        action: 'payment.release',
        target: toRelease.paymentId,
        targetKind: 'payment',
        before: { status: 'pending' },
        after: { status: 'reversal', reason: 'Authorization released.' },
        outcome: 'done',
      },
      {
        id: expect.any(String),
        at: '2030-05-07T09:01:00.000Z',
        actor: 'bob',
        actorRole: 'admin',
        action: 'payment.capture 12.50',
        target: toCapture.paymentId,
        targetKind: 'payment',
        before: { status: 'pending' },
        after: { status: 'settled', captured_amount: '12.50' },
        outcome: 'done',
      },
      // The sign-in that got bob's token (use-cases/operator-sign-in.ts).
      { id: expect.any(String), at: T0.toISOString(), actor: 'bob', actorRole: 'admin', action: 'operator.sign-in', target: 'operator:bob', targetKind: 'operator', outcome: 'done', detail: 'signed in from 127.0.0.1' },
    ]);
    const times = res.json.entries.map((e) => e.at);
    expect(times).toEqual([...times].sort().reverse());
  });

  it('pages back through older entries with the cursor, each entry once, newest first', async () => {
    const seeded: AuditEntry[] = Array.from({ length: 40 }, (_, i) => ({
      id: `paging-${i}`,
      at: new Date(Date.parse('2030-05-09T00:00:00.000Z') + i * 90 * 60_000).toISOString(),
      actor: 'carol',
      action: 'payment.release',
      target: `paging-target-${i}`,
      targetKind: 'payment' as const,
      outcome: 'done' as const,
    }));
    for (const entry of seeded) await service.deps.audit.append(entry);
    clock.set('2030-05-12T00:00:00.000Z');
    const seen: AuditEntry[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await api.audit(cursor);
      expect(res.status).toBe(200);
      expect(res.json.entries.length).toBeLessThanOrEqual(ADMIN_LIMITS.pageSize);
      seen.push(...res.json.entries);
      cursor = res.json.cursor;
      pages++;
    } while (cursor && pages < 20);
    expect(pages).toBeGreaterThan(1);
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    expect(seen.filter((e) => e.actor === 'carol').map((e) => e.id)).toEqual(seeded.map((e) => e.id).reverse());
  });

  it('offers no way to change or remove an entry: no route, and an entry id cannot be written twice', async () => {
    expect([...new Set(ROUTES.filter((r) => r.path.startsWith('/admin/api/audit')).map((r) => r.method))]).toEqual(['GET']);
    const paid = await authorization();
    await api.act(paid.paymentId, 'release');
    const [entry] = (await detail(paid.paymentId)).audit;
    if (!entry) throw new Error('no audit entry');
    for (const method of ['PUT', 'POST', 'DELETE'] as const) {
      const res = await service.request({ method, path: '/admin/api/audit', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
      expect([method, res.status, res.json, res.headers.allow]).toEqual([method, 405, notAllowed(method, '/admin/api/audit', 'GET'), 'GET']);
    }
    for (const method of ['DELETE', 'PUT'] as const) {
      const res = await service.request({ method, path: `/admin/api/audit/${entry.id}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
      expect([method, res.status, (res.json as { error_code: number }).error_code]).toEqual([method, 404, NO_ROUTE]);
    }

    const forged = { ...entry, actor: 'mallory', outcome: 'refused' as const };
    await expect(service.deps.audit.append(forged)).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    const suffix = randomBytes(4).toString('hex');
    const copy: AuditEntry = { id: `entry-${suffix}`, at: T0.toISOString(), actor: 'alice', action: 'payment.capture', target: `payment-${suffix}`, targetKind: 'payment', outcome: 'done' };
    await service.deps.audit.append(copy);
    await expect(service.deps.audit.append({ ...copy, actor: 'mallory' })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect((await service.deps.audit.forTarget(copy.target, 10)).map(withoutChain)).toEqual([copy]);
    expect((await service.tableItems()).filter((i) => i.id === entry.id)).toEqual([expect.objectContaining({ actor: entry.actor, outcome: entry.outcome })]);
  });
});

describe('the audit log by days, and its CSV export (GET /admin/api/audit?from=&to=, …/audit/export)', () => {
  const entryOn = (id: string, at: string, actor = 'dana'): AuditEntry => ({ id, at, actor, action: 'merchant.settings', target: `merchant:days-${id}`, targetKind: 'merchant', outcome: 'done' });
  beforeAll(async () => {
    for (const e of [entryOn('days-1', '2030-05-20T23:59:59.000Z'), entryOn('days-2', '2030-05-21T00:00:00.000Z'), entryOn('days-3', '2030-05-22T10:00:00.000Z')]) await service.deps.audit.append(e);
  });
  beforeEach(() => clock.set('2030-05-23T12:00:00.000Z'));
  const ids = (entries: readonly AuditEntry[]) => entries.filter((e) => e.actor === 'dana').map((e) => e.id);

  it('keeps the entries of the UTC days from and to (either may be left out), newest first', async () => {
    expect(ids((await api.searchAudit({ actor: 'dana' })).json.entries)).toEqual(['days-3', 'days-2', 'days-1']);
    expect(ids((await api.searchAudit({ actor: 'dana', from: '2030-05-21', to: '2030-05-21' })).json.entries)).toEqual(['days-2']);
    expect(ids((await api.searchAudit({ actor: 'dana', from: '2030-05-21' })).json.entries)).toEqual(['days-3', 'days-2']);
    expect(ids((await api.searchAudit({ actor: 'dana', to: '2030-05-20' })).json.entries)).toEqual(['days-1']);
    // By target (the lookup index), the days filter too.
    expect(ids((await api.searchAudit({ target: 'merchant:days-days-2', from: '2030-05-22' })).json.entries)).toEqual([]);
    expect(ids((await api.searchAudit({ target: 'merchant:days-days-2', from: '2030-05-21' })).json.entries)).toEqual(['days-2']);
  });

  it.each([
    ['a day not written as YYYY-MM-DD', { from: '2030-5-21' }, 'from: Enter a day as YYYY-MM-DD.'],
    ['a day that does not exist', { to: '2030-02-30' }, 'to: Enter a day as YYYY-MM-DD.'],
    ['a start after the end', { from: '2030-05-22', to: '2030-05-21' }, 'from: The first day should not be after the last.'],
    ['a range over 92 days', { from: '2030-01-01', to: '2030-05-21' }, 'from: The date range should cover at most 92 days.'],
  ])('refuses %s with 400 naming the field, in the list and in the export', async (_case, params, message) => {
    for (const res of [await api.searchAudit(params), await api.exportAudit(params)]) expect([res.status, res.json]).toEqual([400, invalidRequest(message)]);
  });

  it('exports in bounded parts, each naming the next: the parts joined hold every entry once, newest first', async () => {
    const tiny = { entries: 1, pages: 40, pageSize: 1 };
    const seen: string[] = [];
    let cursor: string | undefined;
    let parts = 0;
    do {
      const part = await exportAuditPart(service.deps, { actor: 'dana', from: '2030-05-20', to: '2030-05-22', ...(cursor ? { cursor } : {}) }, tiny);
      expect(part.entries.length).toBeLessThanOrEqual(tiny.entries);
      seen.push(...ids(part.entries));
      cursor = part.cursor;
    } while (cursor && ++parts < 20);
    expect(seen).toEqual(['days-3', 'days-2', 'days-1']);
  });

  it('exports the filtered entries as one CSV file with their chain fields; a formula an actor or target could carry is defused', async () => {
    await service.deps.audit.append({ ...entryOn('days-4', '2030-05-22T11:00:00.000Z', '=HYPERLINK("http://x","y")'), target: '@SUM(1+1)', detail: 'a, "quoted" detail' });
    const res = await api.exportAudit({ from: '2030-05-22', to: '2030-05-22', action: 'merchant.settings' });
    expect([res.status, res.headers['content-type'], res.headers['x-next-cursor']]).toEqual([200, 'text/csv; charset=utf-8', undefined]);
    const lines = res.text.replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('at,actor,actor_role,action,target_kind,target,outcome,detail,before,after,id,seq,prev_hash,hash');
    const stored = await service.deps.audit.day('2030-05-22');
    const third = stored.find((e) => e.id === 'days-3')!;
    expect(lines.slice(1)).toEqual([
      `2030-05-22T11:00:00.000Z,"'=HYPERLINK(""http://x"",""y"")",,merchant.settings,merchant,'@SUM(1+1),done,"a, ""quoted"" detail",,,days-4,${stored.find((e) => e.id === 'days-4')!.seq},${stored.find((e) => e.id === 'days-4')!.prevHash},${stored.find((e) => e.id === 'days-4')!.hash}`,
      `2030-05-22T10:00:00.000Z,dana,,merchant.settings,merchant,merchant:days-days-3,done,,,,days-3,${third.seq},${third.prevHash},${third.hash}`,
    ]);
  });
});

describe('one status everywhere: the status route, the payment detail, the search, its count and the CSV export agree', () => {
  /** The cells of an RFC 4180 export, by column name (quoted cells and the byte-order mark allowed). */
  function csvRows(text: string): Record<string, string>[] {
    const lines = text.replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
    const cells = (line: string) => [...line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)].slice(0, -1).map((m) => (m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!));
    const [head, ...rows] = lines.map(cells);
    expect(head).toEqual([...EXPORT_COLUMNS]);
    return rows.map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i] ?? ''])));
  }

  /**
   * Every reading of one payment, made now: what the merchant's status route says, the detail, the
   * search by id and by merchant, the status filters (the status read must find it, the others
   * not), the filtered count and the export row.
   */
  async function readings(shop: MerchantCredentials, paymentId: string) {
    const day = clock.now().toISOString().slice(0, 10);
    const range = { merchant: shop.merchant_key, from: day, to: day };
    const merchant = await statusOf(service, shop, paymentId);
    const said = { status: merchant.status, reason: merchant.reason };
    const detail = (await api.payment(paymentId)).json.payment;
    const byId = (await api.searchPayments({ payment_id: paymentId })).json.payments;
    const listed = (await api.searchPayments(range)).json.payments.filter((p) => p.payment_id === paymentId);
    // The status it reads as, and the two a payment may read as instead of its stored one (each search reads every shard of the day).
    const candidates = [...new Set([said.status, 'prepare', 'decline', (await storedPayment(service, paymentId)).status])];
    const underEach = await Promise.all(candidates.map(async (status) => [status, (await api.searchPayments({ ...range, status })).json.payments.some((p) => p.payment_id === paymentId)] as const));
    const counted = (await api.countPayments({ ...range, status: said.status })).json;
    const exported = await api.exportPayments(range);
    expect(exported.status).toBe(200);
    const rows = csvRows(exported.text).filter((r) => r.payment_id === paymentId);
    return {
      said,
      detail: { status: detail.status, reason: detail.reason },
      byId: byId.map((p) => ({ status: p.status, reason: p.reason })),
      listed: listed.map((p) => ({ status: p.status, reason: p.reason })),
      foundUnder: underEach.filter(([, found]) => found).map(([status]) => status),
      counted: counted.total,
      exported: rows.map((r) => ({ status: r.status, reason: r.reason || undefined })),
    };
  }

  /** The readings all say what the merchant's status route says; only its own status filter finds it. */
  function expectAgreement(r: Awaited<ReturnType<typeof readings>>) {
    expect(r).toEqual({ said: r.said, detail: r.said, byId: [r.said], listed: [r.said], foundUnder: [r.said.status], counted: 1, exported: [r.said] });
  }

  it('an unpaid link reads prepare until its expiry, then decline with its reason, everywhere; a decline filter finds it', async () => {
    const shop = await service.createMerchant({ name: 'Expiring Link Shop' });
    const session = await openSession(service, shop, { extra: { session_expiry: 5 } });
    clock.advance(5 * 60_000 - 1);
    const before = await readings(shop, session.paymentId);
    expect(before.said).toEqual({ status: 'prepare', reason: undefined });
    expectAgreement(before);

    clock.advance(1);
    const after = await readings(shop, session.paymentId);
    expect(after.said).toEqual({ status: 'decline', reason: SESSION_EXPIRED_REASON });
    expectAgreement(after);
    // Nothing was written: the stored status is still prepare; the reading is the same everywhere.
    expect((await storedPayment(service, session.paymentId)).status).toBe('prepare');
  });

  it('over random histories of one link (payments, declines, Close, waiting, expiry, the reconciler, a refund), every reading agrees', async () => {
    type Step = 'approve' | 'decline' | 'close' | 'wait' | 'expire' | 'reconcile' | 'refund';
    const steps = fc.array(fc.constantFrom<Step>('approve', 'decline', 'close', 'wait', 'expire', 'reconcile', 'refund'), { maxLength: 5 });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.boolean(), steps, async (dms, history) => {
        const shop = await service.createMerchant({ name: `History Shop ${++run}`, settings: { dms } });
        const session = await openSession(service, shop, { extra: { session_expiry: 5 } });
        for (const step of history) {
          if (step === 'approve' || step === 'decline') await submitPage(service, session, { card: step === 'approve' ? '01/38' : '02/38' });
          if (step === 'close') await closePage(service, session);
          if (step === 'wait') clock.advance(60_000);
          if (step === 'expire') clock.advance(6 * 60_000);
          if (step === 'reconcile') await reconcileDue(service.deps);
          if (step === 'refund') await refundOf(service, shop, session.paymentId, '25.00');
        }
        expectAgreement(await readings(shop, session.paymentId));
      }),
      { numRuns: 8, seed: 2105 },
    );
  }, 180_000);
});
