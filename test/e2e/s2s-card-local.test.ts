import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { cards, launchBrowser, newPage, payWith, screenshot } from '../support/browser';
import { postJson } from '../support/http';
import { startCallbackReceiver, verifiesWith } from '../support/callback-receiver';
import { paymentIdOf } from '../support/links';
import { startMerchantSite, type MerchantSite } from '../support/merchant-site';
import { freePort, runTs, startTs, type Service } from '../support/processes';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { signBody } from '../support/sign';
import { insideVoidWindow } from '../support/void-window';

/**
 * `npm start` with ACQUIRER=s2s-card against the fake S2S CARD gateway over HTTP: the runner pays
 * through the connector, in Chromium (a page payment, 3-D Secure through the gateway's ACS page),
 * and the merchant API's refund, void and capture move money at the gateway, whose own ledger is
 * the check. The gateway's callbacks arrive at the runner's /acquirer/s2s-card/notify.
 */
jest.setTimeout(120_000);

const DEMO = { DEMO_MERCHANT_KEY: 's2s-demo-shop', DEMO_MERCHANT_PASSWORD: 's2s-demo-password-0123456789' };
const merchant: MerchantCredentials = { merchant_key: DEMO.DEMO_MERCHANT_KEY, password: DEMO.DEMO_MERCHANT_PASSWORD } as MerchantCredentials;

let browser: Browser;
let site: MerchantSite;
let gateway: FakeGateway;
let runner: Service;
let base: string;
let dataDir: string;

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  dataDir = mkdtempSync(join(tmpdir(), 'checkout-s2s-'));
  [browser, site, gateway] = await Promise.all([launchBrowser(), startMerchantSite(), startFakeGateway({ notifyUrl: `${base}/acquirer/s2s-card/notify` })]);
  runner = startTs('local/main.ts', {
    DATA_DIR: dataDir,
    PORT: String(port),
    ...DEMO,
    // Voids are accepted until 21:00 UTC+3: the runner's clock is inside the window.
    CLOCK_START: insideVoidWindow(),
    ACQUIRER: 's2s-card',
    S2S_CARD_URL: gateway.url,
    S2S_CARD_CLIENT_KEY: gateway.clientKey,
    S2S_CARD_PASSWORD: gateway.password,
  });
  await runner.waitForLine(/^curl /, 60_000);
});

afterAll(async () => {
  await runner?.stop('SIGINT').catch(() => runner.kill());
  await Promise.all([browser?.close(), site?.close(), gateway?.close()]);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const signedPost = <T = Record<string, unknown>>(path: string, body: Record<string, unknown>, who: MerchantCredentials = merchant) =>
  postJson<T>(base, path, signBody(path, { merchant_key: who.merchant_key, ...body }, who.password));

async function newSession(who: MerchantCredentials = merchant): Promise<{ paymentId: string; url: string }> {
  const order = { number: `s2s-${Date.now()}-${Math.round(Math.random() * 1e6)}`, amount: '25.00', currency: 'EUR', description: 'Gift box' };
  const res = await signedPost<{ redirect_url: string }>('/api/v1/session', {
    operation: 'purchase',
    ...site.urls(),
    order,
    customer: { name: 'John Doe', email: 'john@example.com' },
    billing_address: { country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115', phone: '+49301234567' },
  }, who);
  expect(res.status).toBe(200);
  return { paymentId: paymentIdOf(res.json.redirect_url), url: res.json.redirect_url };
}

const statusOf = async (paymentId: string, who: MerchantCredentials = merchant) => (await signedPost<{ status: string }>('/api/v1/payment/status', { payment_id: paymentId }, who)).json.status;

async function payInBrowser(url: string, card: (typeof cards)[keyof typeof cards], confirmAtBank = false): Promise<string> {
  const { context, page } = await newPage(browser);
  page.setDefaultTimeout(20_000);
  try {
    await page.goto(url);
    // The gateway moves real money: no "Test mode" notice where the sandbox is not the acquirer.
    expect(await page.locator('.sandbox').count()).toBe(0);
    await payWith(page, card);
    if (confirmAtBank) {
      await page.locator('#challenge').waitFor();
      expect(new URL(page.url()).origin).toBe(gateway.origin);
      await screenshot(page, 's2s-card-acs');
      await page.locator('#confirm').click();
    }
    await page.waitForURL((u) => u.origin === site.origin && u.pathname === '/success');
    return page.url();
  } finally {
    await context.close();
  }
}

describe('the local runner paying through the S2S CARD connector', () => {
  let paid: string;

  it('pays on the hosted page: a SALE at the gateway under our attempt key, settled, the card only ever sent to the gateway', async () => {
    const { paymentId, url } = await newSession();
    await payInBrowser(url, cards.approved);
    paid = paymentId;
    expect(await statusOf(paymentId)).toBe('settled');
    const t = gateway.byOrder(`${paymentId}.1`);
    expect(t).toMatchObject({ action: 'SALE', status: 'SETTLED', amountMinor: 2500, currency: 'EUR', auth: false });
    const sale = gateway.requests.find((r) => r.action === 'SALE' && r.fields.order_id === `${paymentId}.1`)!;
    expect(sale.fields).toMatchObject({ payer_email: 'john@example.com', payer_country: 'DE', payer_ip: '127.0.0.1', term_url_3ds: expect.stringMatching(new RegExp(`^${base}/auth/.+/complete$`)) });
    expect(runner.output()).not.toContain('4111111111111111');
  });

  it('pays with 3-D Secure: our redirect page posts to the ACS, the customer confirms, and the return settles it', async () => {
    const { paymentId, url } = await newSession();
    await payInBrowser(url, cards.threeDsPasses, true);
    expect(await statusOf(paymentId)).toBe('settled');
    expect(gateway.byOrder(`${paymentId}.1`)?.status).toBe('SETTLED');
  });

  it('refunds part of a payment: CREDITVOID answered ACCEPTED, its callback at our notify URL answers it', async () => {
    const res = await signedPost('/api/v1/payment/refund', { payment_id: paid, amount: '10.00' });
    expect(res.status).toBe(200);
    const t = gateway.byOrder(`${paid}.1`)!;
    expect(t.refundedMinor).toBe(1000);
    expect(t.operations).toEqual([expect.objectContaining({ action: 'REFUND', result: 'SUCCESS', amountMinor: 1000 })]);
    // The gateway posts its callback after it answered the request; on a busy machine it may land after our answer.
    const answers = () => gateway.callbacks.filter((c) => c.fields.action === 'CREDITVOID' && c.fields.trans_id === t.transId).map((c) => c.answer);
    for (const started = Date.now(); answers().length === 0 && Date.now() - started < 15_000; ) await new Promise((r) => setTimeout(r, 100));
    expect(answers()).toEqual(['OK']);
  });

  it('voids a payment the same day', async () => {
    const { paymentId, url } = await newSession();
    await payInBrowser(url, cards.approved);
    const res = await signedPost('/api/v1/payment/void', { payment_id: paymentId });
    expect(res.status).toBe(200);
    expect(gateway.byOrder(`${paymentId}.1`)?.status).toBe('VOID');
    expect(await statusOf(paymentId)).toBe('void');
  });

  it('captures an authorization of a DMS merchant: auth=Y, PENDING, then CAPTURE', async () => {
    const created = await runTs('local/merchant-cli.ts', ['create', '--name', 'DMS Shop', '--dms', 'on', '--json'], { DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    const dms = JSON.parse(created.stdout.slice(created.stdout.indexOf('{'))) as MerchantCredentials;
    const { paymentId, url } = await newSession(dms);
    await payInBrowser(url, cards.approved);
    expect(gateway.byOrder(`${paymentId}.1`)).toMatchObject({ auth: true, status: 'PENDING' });
    const res = await signedPost('/api/v1/payment/capture', { payment_id: paymentId, amount: '25.00' }, dms);
    expect(res.status).toBe(200);
    expect(gateway.byOrder(`${paymentId}.1`)).toMatchObject({ status: 'SETTLED', capturedMinor: 2500 });
    expect(await statusOf(paymentId, dms)).toBe('settled');
  });

  it('a chargeback raised at the gateway reaches the merchant as a signed chargeback callback within a minute', async () => {
    const receiver = await startCallbackReceiver();
    try {
      const created = await runTs('local/merchant-cli.ts', ['create', '--name', 'Dispute Shop', '--notification-url', receiver.url, '--json'], { DATA_DIR: dataDir });
      expect(created.code).toBe(0);
      const shop = JSON.parse(created.stdout.slice(created.stdout.indexOf('{'))) as MerchantCredentials;
      const { paymentId, url } = await newSession(shop);
      await payInBrowser(url, cards.approved);
      const t = gateway.byOrder(`${paymentId}.1`)!;
      // The gateway's CHARGEBACK callback reaches the runner's notify URL; the runner's own jobs do the rest.
      const raisedAt = Date.now();
      expect(gateway.chargeback(t.transId, 1000, '4837')).toMatchObject({ ok: true });
      let cb: (typeof receiver.received)[number] | undefined;
      while (!cb && Date.now() - raisedAt < 60_000) {
        await new Promise((r) => setTimeout(r, 250));
        cb = receiver.received.find((c) => c.fields.id === paymentId && c.fields.type === 'chargeback');
      }
      expect(cb?.fields).toMatchObject({ type: 'chargeback', status: 'success', order_status: 'chargeback', amount: '10.00', reason: '4837' });
      expect(verifiesWith(cb!, shop.password)).toBe(true);
      console.log(`chargeback callback reached the merchant ${Date.now() - raisedAt} ms after the gateway raised it`);
      expect(await statusOf(paymentId, shop)).toBe('chargeback');
    } finally {
      await receiver.close();
    }
  });

  it('serves no sandbox pages, and refuses a forged gateway callback', async () => {
    expect((await fetch(`${base}/sandbox/challenge/x`)).status).toBe(404);
    const forged = await fetch(`${base}/acquirer/s2s-card/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'SALE', result: 'SUCCESS', status: 'SETTLED', order_id: `${paid}.1`, trans_id: 'x', hash: '0'.repeat(32) }).toString(),
    });
    expect(forged.status).toBe(400);
    expect(await forged.text()).toBe('ERROR');
  });
});
