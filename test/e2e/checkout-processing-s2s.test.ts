import type { Page } from 'playwright-core';
import { ManualClock } from '../../lambdas/ports/clock';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { ACTION_TIMEOUT_MS } from '../../lambdas/use-cases/record-outcome';
import { RECONCILE_AFTER_MS } from '../../lambdas/use-cases/work-queue';
import { cards, payWith } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';
import { statusOf } from '../support/merchant-site';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { asFunction } from '../support/table-access';
import { until } from '../support/until';

/**
 * The processing page on the S2S CARD connector (ACQUIRER=s2s-card) against the fake gateway: a
 * SALE the gateway answers too late, and a return from 3-D Secure whose outcome the gateway does
 * not give in time, both keep the customer on our page until the outcome is recorded; the page's
 * looks never reach the gateway.
 */
jest.setTimeout(60_000);

let gateway: FakeGateway;
beforeAll(async () => {
  gateway = await startFakeGateway({ adversity: { callbacks: { lose: 0, repeat: 0, beforeAnswer: 0, jitterMs: 0, hold: true } } });
});
afterAll(async () => {
  await gateway?.close();
});

const clock = new ManualClock(new Date());
const h = checkoutHarness({
  shop: { name: 'Gateway Shop', settings: { returnParams: true } },
  service: {
    clock,
    // Read when the service starts, after the gateway has.
    get env() {
      return { ACQUIRER: 's2s-card', S2S_CARD_URL: gateway.url, S2S_CARD_CLIENT_KEY: gateway.clientKey, S2S_CARD_PASSWORD: gateway.password, S2S_CARD_TIMEOUT_MS: '700' };
    },
  },
  session: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' }, billing_address: { country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115' } },
});
const { open, landOn } = h;
beforeAll(() => {
  gateway.notifyUrl = `${h.service.baseUrl}/acquirer/s2s-card/notify`;
});
const checkout = () => h.checkout({ order: { number: `s2s-${Math.random().toString(36).slice(2, 10)}`, amount: '25.00', currency: 'EUR', description: 'Gift box' } });

const onProcessingPage = (page: Page) => page.locator('h1#title[data-state="processing"]').waitFor();
const gatewayStatusAsks = () => gateway.requests.filter((r) => r.action.startsWith('GET_TRANS_STATUS')).length;
const looksAt = (page: Page): string[] => {
  const seen: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.endsWith('/status')) seen.push(r.url());
  });
  return seen;
};
const waitUntil = async (done: () => boolean) => {
  await until(done, { everyMs: 50 });
  expect(done()).toBe(true);
};
const reconcile = (advanceMs: number) => {
  clock.advance(advanceMs);
  return asFunction('ReconcileAttempts', () => reconcileDue(h.service.deps));
};

describe('the processing page on the S2S CARD connector', () => {
  it('keeps the customer on our page when the gateway answers the SALE too late, until the reconciler records the approval', async () => {
    const page = await open();
    const looks = looksAt(page);
    const link = await checkout();
    const start = h.site.visits.length;
    await page.goto(link.url);
    gateway.delayNext('SALE', 1_500);
    await payWith(page, cards.approved);
    await onProcessingPage(page);
    const asks = gatewayStatusAsks();
    await waitUntil(() => looks.length >= 2);
    expect(gatewayStatusAsks()).toBe(asks);
    expect(h.site.visits.slice(start)).toEqual([]);

    expect(await reconcile(RECONCILE_AFTER_MS + 1_000)).toMatchObject({ settled: 1 });
    await landOn(page, '/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('keeps the customer on our page after a 3-D Secure return whose outcome the gateway does not give in time', async () => {
    const page = await open();
    page.setDefaultTimeout(20_000);
    const looks = looksAt(page);
    const link = await checkout();
    const start = h.site.visits.length;
    await page.goto(link.url);
    await payWith(page, cards.threeDsPasses);
    await page.locator('#challenge').waitFor();
    // The customer confirms; the gateway sends them back to us, but its status answer comes too late.
    gateway.delayNext('GET_TRANS_STATUS_BY_ORDER', 1_500);
    await page.locator('#confirm').click();
    await onProcessingPage(page);
    expect(new URL(page.url()).pathname).toBe(`${new URL(link.url).pathname}/complete`);
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: '3ds' });

    // The gateway's callback arrives; the page's looks read our record only, so nothing moves yet.
    await gateway.deliverCallbacks();
    const asks = gatewayStatusAsks();
    const seen = looks.length;
    await waitUntil(() => looks.length >= seen + 2);
    expect(gatewayStatusAsks()).toBe(asks);
    expect(await page.locator('h1#title').getAttribute('data-state')).toBe('processing');
    expect(h.site.visits.slice(start)).toEqual([]);

    // The reconciler takes up a challenge after its timeout and records the callback's approval.
    expect(await reconcile(ACTION_TIMEOUT_MS + 1_000)).toMatchObject({ settled: 1 });
    await landOn(page, '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('lets the customer\'s "Check again" after a 3-D Secure return ask once more, and go on with the answer', async () => {
    const page = await open({ javaScriptEnabled: false });
    page.setDefaultTimeout(20_000);
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.threeDsPasses);
    // Our redirect page's form, sent by its button when scripts are off.
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#challenge').waitFor();
    gateway.delayNext('GET_TRANS_STATUS_BY_ORDER', 1_500);
    await page.locator('#confirm').click();
    await onProcessingPage(page);
    // Without scripts the page does not reload a check that may ask the gateway: the customer does.
    expect(await page.content()).not.toContain('http-equiv="refresh"');

    await gateway.deliverCallbacks();
    await page.getByRole('link', { name: 'Check again' }).click();
    await landOn(page, '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });
});
