import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { INTERRUPTED_REASON, reconcileDue } from '../../lambdas/use-cases/reconcile';
import { S2S_REASONS } from '../../lambdas/adapters/s2s-card/s2s-card-acquirer';
import { transactionHash } from '../../lambdas/adapters/s2s-card/hash';
import { openSession, refundOf, statusOf, submitPage } from '../support/payments';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { startTestService, type TestService } from '../support/service';
import { asFunction } from '../support/table-access';

/**
 * The service on the S2S CARD connector (ACQUIRER=s2s-card) against the fake gateway: what the
 * reconciler finishes when the gateway's answer is lost or a request never arrived, a customer who
 * leaves 3-D Secure while the gateway's callback still brings the answer, a refund answered only
 * by its callback, and callbacks that are malformed. Every DynamoDB call of the routes and of the
 * reconcile job (run as its Lambda) is checked against that function's IAM grant.
 */
jest.setTimeout(60_000);

const RECONCILE_AFTER_MS = 120_000;

let gateway: FakeGateway;
let service: TestService;
let shop: MerchantCredentials;
const clock = new ManualClock();

beforeAll(async () => {
  gateway = await startFakeGateway();
  service = await startTestService({
    clock,
    env: {
      ACQUIRER: 's2s-card',
      S2S_CARD_URL: gateway.url,
      S2S_CARD_CLIENT_KEY: gateway.clientKey,
      S2S_CARD_PASSWORD: gateway.password,
      S2S_CARD_TIMEOUT_MS: '700',
      S2S_CARD_FOLLOW_UP_WAIT_MS: '1500',
    },
  });
  gateway.notifyUrl = `${service.baseUrl}/acquirer/s2s-card/notify`;
  shop = await service.createMerchant({ name: 'Gateway Shop' });
});
afterAll(async () => {
  await gateway?.close();
  await service?.close();
});

const session = () =>
  openSession(service, shop, {
    order: { currency: 'EUR' },
    extra: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' }, billing_address: { country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115' } },
  });
const reconcile = () => asFunction('ReconcileAttempts', () => reconcileDue(service.deps));
const later = () => clock.advance(RECONCILE_AFTER_MS + 1_000);

describe('the service on the S2S CARD connector', () => {
  it('a SALE whose answer is lost: the page shows no decline, the reconciler asks by our order id and records the approval; one SALE only', async () => {
    const s = await session();
    gateway.delayNext('SALE', 1_500);
    const page = await submitPage(service, s, { card: '01/38' });
    expect(page.status).toBeLessThan(500);
    expect((await statusOf(service, shop, s.paymentId)).status).toBe('prepare');
    later();
    expect(await reconcile()).toMatchObject({ settled: 1 });
    expect((await statusOf(service, shop, s.paymentId)).status).toBe('settled');
    expect(gateway.requests.filter((r) => r.action === 'SALE' && r.fields.order_id === `${s.paymentId}.1`)).toHaveLength(1);
    expect(gateway.byOrder(`${s.paymentId}.1`)?.status).toBe('SETTLED');
  });

  it('a SALE the gateway never received: the reconciler bars it and records the decline; nothing is resent', async () => {
    const s = await session();
    gateway.dropNext('SALE');
    await submitPage(service, s, { card: '01/38' });
    later();
    await reconcile();
    // Declined (the customer may still try again on the open link, so the status API holds it).
    const stored = await service.deps.store.findPayment(s.paymentId);
    expect(stored).toMatchObject({ status: 'decline', reason: INTERRUPTED_REASON });
    expect(stored?.inFlight).toBeUndefined();
    // Barred at the connector: the same attempt key can never be sent any more.
    await expect(service.deps.acquirer.lookup({ paymentId: s.paymentId, idempotencyKey: `${s.paymentId}.1` })).resolves.toMatchObject({ kind: 'declined', reason: S2S_REASONS.neverSent });
    expect(gateway.byOrder(`${s.paymentId}.1`)).toBeUndefined();
    expect(gateway.requests.filter((r) => r.action === 'SALE' && r.fields.order_id === `${s.paymentId}.1`)).toHaveLength(1);
  });

  it('3-D Secure: the customer never comes back, the gateway\'s callback brings the approval, the reconciler records it', async () => {
    const s = await session();
    const page = await submitPage(service, s, { card: '05/38' });
    expect(page.status).toBe(303);
    expect(new URL(String(page.headers.location)).pathname).toBe('/acquirer/s2s-card/redirect');
    // The redirect page posts the ACS parameters to the gateway, and nowhere else.
    const redirect = await service.request({ method: 'GET', path: new URL(String(page.headers.location)).pathname + new URL(String(page.headers.location)).search });
    expect(redirect.status).toBe(200);
    expect(redirect.text).toContain(`action="${gateway.origin}/acs/`);
    expect(String(redirect.headers['content-security-policy'])).toContain(`form-action ${gateway.origin}`);
    expect((await statusOf(service, shop, s.paymentId)).status).toBe('3ds');

    const t = gateway.byOrder(`${s.paymentId}.1`)!;
    const callbacksBefore = gateway.callbacks.length;
    await gateway.answerChallenge(t.transId, true);
    for (let i = 0; i < 100 && gateway.callbacks.length === callbacksBefore; i++) await new Promise((r) => setTimeout(r, 20));
    expect(gateway.callbacks.at(-1)).toMatchObject({ answer: 'OK', fields: { action: 'SALE', result: 'SUCCESS' } });

    clock.advance(21 * 60_000);
    await reconcile();
    expect((await statusOf(service, shop, s.paymentId)).status).toBe('settled');
  });

  it('a tampered redirect link is refused with 400, not followed', async () => {
    const s = await session();
    const page = await submitPage(service, s, { card: '05/38' });
    const url = new URL(String(page.headers.location));
    url.searchParams.set('s', 'A'.repeat(43));
    expect((await service.request({ method: 'GET', path: url.pathname + url.search })).status).toBe(400);
  });

  it('a refund is answered by its CREDITVOID callback; the status counts it once', async () => {
    const s = await session();
    await submitPage(service, s, { card: '01/38' });
    const res = await refundOf(service, shop, s.paymentId, '5.00');
    expect(res.status).toBe(200);
    const t = gateway.byOrder(`${s.paymentId}.1`)!;
    expect(t.refundedMinor).toBe(500);
    expect(await statusOf(service, shop, s.paymentId)).toMatchObject({ refunded_amount: '5.00' });
  });

  it.each([
    ['no body', undefined, 'application/x-www-form-urlencoded'],
    ['JSON instead of a form', '{"order_id":"x"}', 'application/json'],
    ['no trans_id', 'action=SALE&result=SUCCESS&order_id=pay_x.1', 'application/x-www-form-urlencoded'],
    ['an order we never sent', 'action=SALE&result=SUCCESS&order_id=pay_nothing.1&trans_id=t&hash=00', 'application/x-www-form-urlencoded'],
  ])('a callback with %s gets 400 ERROR and changes nothing', async (_name, body, type) => {
    const res = await service.request({ path: '/acquirer/s2s-card/notify', headers: { 'content-type': type }, ...(body !== undefined ? { body } : {}) });
    expect(res.status).toBe(400);
    expect(res.text).toBe('ERROR');
  });

  it('a repeated or late callback changes nothing once the answer is recorded', async () => {
    const s = await session();
    await submitPage(service, s, { card: '01/38' });
    const t = gateway.byOrder(`${s.paymentId}.1`)!;
    const declined = new URLSearchParams({ action: 'SALE', result: 'DECLINED', status: 'DECLINED', order_id: t.orderId, trans_id: t.transId, hash: transactionHash(gateway.password, t.party, t.transId) });
    const res = await service.request({ path: '/acquirer/s2s-card/notify', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: declined.toString() });
    expect(res).toMatchObject({ status: 200, text: 'OK' });
    later();
    await reconcile();
    expect((await statusOf(service, shop, s.paymentId)).status).toBe('settled');
  });
});
