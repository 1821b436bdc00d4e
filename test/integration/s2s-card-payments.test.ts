import { ManualClock } from '../../lambdas/ports/clock';
import { ERRORS } from '../../lambdas/domain/errors';
import { insideVoidWindow } from '../support/void-window';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { INTERRUPTED_REASON, reconcileDue } from '../../lambdas/use-cases/reconcile';
import { LOOKUP_INTERVAL_MS, S2S_REASONS } from '../../lambdas/adapters/s2s-card/s2s-card-acquirer';
import { transactionHash } from '../../lambdas/adapters/s2s-card/hash';
import { openSession, refundOf, statusOf, submitPage } from '../support/payments';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { startTestService, type TestService } from '../support/service';
import { asFunction } from '../support/table-access';
import { signBody } from '../support/sign';
import { until } from '../support/until';
import { updateMerchantSettings } from '../../lambdas/use-cases/manage-merchants';
import { VOID_IN_PROGRESS_REASON, voidOwnPayment } from '../../lambdas/protocol/merchant/void';
import { refundPayment } from '../../lambdas/protocol/merchant/refund';

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
// Inside the void window (voids close at 21:00 UTC+3), so the void tests prove the same at any hour.
const clock = new ManualClock(insideVoidWindow());

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
      // Thirty page hits at once beside four other test workers on two cores: a function's own work
      // may take several times what it takes on Lambda (local/lambda-context.ts).
      FUNCTION_TIMEOUT_SCALE: '3',
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
/**
 * Reconcile runs, as the job makes them, until the payment has no refund in flight: the gateway
 * carries a refund out after accepting it and its callback comes over HTTP, so on a busy machine one
 * run may still find a refund waiting there (left in flight, rightly) that the next one finishes.
 */
async function reconcileUntilNoRefundInFlight(paymentId: string, runs = 20): Promise<void> {
  for (let run = 0; run < runs; run++) {
    later();
    await reconcile();
    if (!Object.keys((await service.deps.store.findPayment(paymentId))?.refunds ?? {}).length) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

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
    await until(() => gateway.callbacks.length > callbacksBefore);
    expect(gateway.callbacks.at(-1)).toMatchObject({ answer: 'OK', fields: { action: 'SALE', result: 'SUCCESS' } });

    clock.advance(21 * 60_000);
    await reconcile();
    expect((await statusOf(service, shop, s.paymentId)).status).toBe('settled');
  });

  it('3-D Secure: a confirmed callback makes the payment due at once: the next reconcile run records it, not twenty minutes later', async () => {
    const s = await session();
    await submitPage(service, s, { card: '05/38' });
    const t = gateway.byOrder(`${s.paymentId}.1`)!;
    const callbacksBefore = gateway.callbacks.length;
    await gateway.answerChallenge(t.transId, true);
    await until(() => gateway.callbacks.length > callbacksBefore);
    clock.advance(60_000);
    await reconcile();
    expect((await statusOf(service, shop, s.paymentId)).status).toBe('settled');
  });

  it('a refund whose callback is confirmed is recorded by the next reconcile run, before the reconcile delay', async () => {
    const s = await session();
    await submitPage(service, s, { card: '01/38' });
    const t = gateway.byOrder(`${s.paymentId}.1`)!;
    // The request gives up waiting (its answer lost), then the gateway's callback arrives.
    gateway.sendCallbacks = false;
    gateway.delayNext('CREDITVOID', 1_000);
    try {
      expect((await refundOf(service, shop, s.paymentId, '2.00')).status).toBe(200);
    } finally {
      gateway.sendCallbacks = true;
    }
    const stored = await service.deps.store.findPayment(s.paymentId);
    expect(Object.keys(stored?.refunds ?? {})).toHaveLength(1);
    {
      const res = await service.request({ path: '/acquirer/s2s-card/notify', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ action: 'CREDITVOID', result: 'SUCCESS', status: 'SETTLED', order_id: t.orderId, trans_id: t.transId, amount: '2.00', hash: transactionHash(gateway.password, t.party, t.transId) }).toString() });
      expect(res).toMatchObject({ status: 200, text: 'OK' });
      clock.advance(60_000);
      await reconcile();
    }
    expect(await statusOf(service, shop, s.paymentId)).toMatchObject({ refunded_amount: '2.00' });
    expect(t.refundedMinor).toBe(200);
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

  describe('money agrees with the gateway\'s ledger', () => {
    const form = (fields: Record<string, string>) => ({ path: '/acquirer/s2s-card/notify', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    const refundWithKey = (paymentId: string, amount: string, key: string) =>
      service.request({
        path: '/api/v1/payment/refund',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify(signBody('/api/v1/payment/refund', { merchant_key: shop.merchant_key, payment_id: paymentId, amount }, shop.password)),
      });

    it('twenty concurrent partial refunds, some replayed under their Idempotency-Key: refunded_amount equals what the gateway refunded', async () => {
      const s = await session();
      await submitPage(service, s, { card: '01/38' });
      const t = gateway.byOrder(`${s.paymentId}.1`)!;
      const keys = Array.from({ length: 20 }, (_, i) => `refund-${s.paymentId}-${i}`);
      // One of them through a slow gateway (its answer after our timeout), five sent twice at once.
      gateway.delayNext('CREDITVOID', 1_000);
      const sent = [...keys, ...keys.slice(0, 5)];
      const answers = await Promise.all(sent.map((key) => refundWithKey(s.paymentId, '0.10', key)));
      // A 5xx is only the retryable "unavailable" (the local engine failing a read or the intent's
      // write under this load, before anything moved), and the merchant's replay under the same key
      // finishes it: the gateway's count below proves no refund was made twice.
      const failed = answers.flatMap((a, i) => (a.status >= 500 ? [i] : []));
      for (const i of failed) {
        expect([answers[i]!.status, answers[i]!.json]).toEqual([503, { error_code: ERRORS.UNAVAILABLE.code, error_message: ERRORS.UNAVAILABLE.message, errors: [] }]);
        answers[i] = await refundWithKey(s.paymentId, '0.10', sent[i]!);
      }
      expect(answers.slice(0, 20).map((a) => a.status)).toEqual(keys.map(() => 200));
      // A replay sent while its first is running is told so (409), or answered as the first was.
      for (const a of answers.slice(20)) expect([200, 409]).toContain(a.status);
      await reconcileUntilNoRefundInFlight(s.paymentId);
      expect(gateway.requests.filter((r) => r.action === 'CREDITVOID' && r.fields.trans_id === t.transId)).toHaveLength(20);
      expect(t.refundedMinor).toBe(200);
      const status = await statusOf(service, shop, s.paymentId);
      expect(status).toMatchObject({ status: 'settled', refunded_amount: '2.00' });
      const stored = await service.deps.store.findPayment(s.paymentId);
      expect(Object.keys(stored?.refunds ?? {})).toEqual([]);
      expect(stored?.transactions.filter((x) => x.type === 'refund' && x.status === 'success')).toHaveLength(20);
    });

    it('refunds whose answers and callbacks are lost are finished by the reconciler from the gateway\'s history', async () => {
      const s = await session();
      await submitPage(service, s, { card: '01/38' });
      const t = gateway.byOrder(`${s.paymentId}.1`)!;
      gateway.sendCallbacks = false;
      try {
        gateway.delayNext('CREDITVOID', 1_000);
        expect((await refundOf(service, shop, s.paymentId, '1.50')).status).toBe(200);
        gateway.dropNext('CREDITVOID');
        expect((await refundOf(service, shop, s.paymentId, '1.50')).status).toBe(200);
      } finally {
        gateway.sendCallbacks = true;
      }
      later();
      await reconcile();
      // One 1.50 reached the gateway, the other never did: our records say the same.
      expect(t.refundedMinor).toBe(150);
      expect(await statusOf(service, shop, s.paymentId)).toMatchObject({ status: 'settled', refunded_amount: '1.50' });
      const stored = await service.deps.store.findPayment(s.paymentId);
      expect(Object.keys(stored?.refunds ?? {})).toEqual([]);
      expect(stored?.transactions.filter((x) => x.type === 'refund').map((x) => x.status).sort()).toEqual(['fail', 'success', 'waiting', 'waiting']);
    });

    it('a void or refund whose gateway answers after the request\'s deadline is answered "in progress", never 5xx; the outcome follows', async () => {
      const s = await session();
      await submitPage(service, s, { card: '01/38' });
      const t = gateway.byOrder(`${s.paymentId}.1`)!;
      gateway.delayNext('VOID', 500);
      const voided = await voidOwnPayment(service.deps, shop.merchant_key, { payment_id: s.paymentId }, { answerBy: new Date(Date.now() + 100) });
      expect(voided).toMatchObject({ status: 'FAIL', reason: VOID_IN_PROGRESS_REASON });
      // The work goes on, and the void the gateway made is recorded. On a loaded machine the gateway's
      // late answer can also outrun the connector's timeout: then the reconciler finishes it.
      await until(async () => t.status === 'VOID');
      expect(t.status).toBe('VOID');
      if (!(await until(async () => (await statusOf(service, shop, s.paymentId)).status === 'void', { withinMs: 3_000, everyMs: 50 }))) {
        later();
        await reconcile();
      }
      expect((await statusOf(service, shop, s.paymentId)).status).toBe('void');

      const r = await session();
      await submitPage(service, r, { card: '01/38' });
      // The gateway answers 2 s late: the answer comes at its deadline, not after the gateway (with a
      // loaded machine's margin between them).
      gateway.delayNext('CREDITVOID', 2_000);
      const started = Date.now();
      await expect(refundPayment(service.deps, shop.merchant_key, { payment_id: r.paymentId, amount: '1.00' }, { answerBy: new Date(Date.now() + 100) })).resolves.toMatchObject({ result: 'accepted' });
      expect(Date.now() - started).toBeLessThan(1_500);
    });

    it('a SALE whose answer was lost keeps the capture mode it was sent with when the merchant switches to DMS meanwhile', async () => {
      const swapper = await service.createMerchant({ name: 'Switching Shop' });
      const s = await openSession(service, swapper, {
        order: { currency: 'EUR' },
        extra: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' }, billing_address: { country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115' } },
      });
      gateway.delayNext('SALE', 1_500);
      await submitPage(service, s, { card: '01/38' });
      await updateMerchantSettings(service.deps, swapper.merchant_key, { dms: true });
      later();
      await reconcile();
      expect(gateway.byOrder(`${s.paymentId}.1`)?.status).toBe('SETTLED');
      expect((await statusOf(service, swapper, s.paymentId)).status).toBe('settled');
      // Nothing for the capture job to capture or release.
      expect((await service.deps.store.findPayment(s.paymentId))?.authorizationExpiresAt).toBeUndefined();
    });

    describe('a genuine callback rewritten or replayed changes nothing', () => {
      async function challenged() {
        const s = await session();
        await submitPage(service, s, { card: '05/38' });
        const t = gateway.byOrder(`${s.paymentId}.1`)!;
        return { s, t, genuine: { action: 'SALE', result: 'REDIRECT', status: '3DS', order_id: t.orderId, trans_id: t.transId, hash: transactionHash(gateway.password, t.party, t.transId) } };
      }

      it.each([
        ['to SUCCESS / SETTLED', { result: 'SUCCESS', status: 'SETTLED' }],
        ['to DECLINED / DECLINED', { result: 'DECLINED', status: 'DECLINED', decline_reason: 'Do not honour' }],
        ['with another amount', { result: 'SUCCESS', status: 'SETTLED', amount: '0.01' }],
      ])('a 3-D Secure callback rewritten %s: the payment stays 3ds, the link stays as it was', async (_name, rewrite) => {
        const { s, genuine } = await challenged();
        const res = await service.request(form({ ...genuine, ...rewrite }));
        expect(res.status).toBeLessThan(500);
        later();
        await reconcile();
        expect((await statusOf(service, shop, s.paymentId)).status).toBe('3ds');
      });

      it('payment A\'s callback posted under payment C\'s order is refused and C is unchanged', async () => {
        const a = await challenged();
        const c = await challenged();
        await gateway.answerChallenge(a.t.transId, true);
        const res = await service.request(form({ ...a.genuine, result: 'SUCCESS', status: 'SETTLED', order_id: c.t.orderId }));
        expect(res).toMatchObject({ status: 400, text: 'ERROR' });
        expect((await statusOf(service, shop, c.s.paymentId)).status).toBe('3ds');
      });

      it('a forged CREDITVOID SUCCESS refunds nothing', async () => {
        const s = await session();
        await submitPage(service, s, { card: '01/38' });
        const t = gateway.byOrder(`${s.paymentId}.1`)!;
        const res = await service.request(form({ action: 'CREDITVOID', result: 'SUCCESS', status: 'SETTLED', order_id: t.orderId, trans_id: t.transId, amount: '4.00', hash: transactionHash(gateway.password, t.party, t.transId) }));
        expect(res.status).toBe(200);
        later();
        await reconcile();
        expect(await statusOf(service, shop, s.paymentId)).toMatchObject({ status: 'settled' });
        expect((await statusOf(service, shop, s.paymentId)).refunded_amount ?? '0.00').toMatch(/^0(\.00)?$/);
      });
    });

    it('thirty returns of the customer to an open 3-D Secure attempt ask the gateway at most once per interval', async () => {
      const s = await session();
      await submitPage(service, s, { card: '05/38' });
      const order = `${s.paymentId}.1`;
      // The gateway's REDIRECT callback (itself read again by order) has been answered first.
      await until(() => gateway.callbacks.some((c) => c.fields.order_id === order));
      const asked = () => gateway.requests.filter((r) => r.action === 'GET_TRANS_STATUS_BY_ORDER' && r.fields.order_id === order).length;
      const before = asked();
      const started = Date.now();
      const hits = await Promise.all(Array.from({ length: 30 }, () => service.request({ method: 'GET', path: `${s.path}/complete` })));
      const elapsed = Date.now() - started;
      expect(hits.filter((h) => h.status >= 500)).toEqual([]);
      // One in flight at a time and at most one per interval, however many hits.
      expect(asked() - before).toBeGreaterThanOrEqual(1);
      expect(asked() - before).toBeLessThanOrEqual(1 + Math.floor(elapsed / LOOKUP_INTERVAL_MS));
    });
  });
});
