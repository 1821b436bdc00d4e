import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { LOCAL_APPLE_PAY_MERCHANT_ID, LOCAL_APPLE_PAY_SECRET_PREFIX } from '../../local/backend';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import { cards, payWith, seriousA11yViolations } from '../support/browser';
import { startCallbackReceiver, verifiesWith, type CallbackReceiver } from '../support/callback-receiver';
import { checkoutHarness } from '../support/checkout-harness';
import { startFakeAppleGateway, type FakeAppleGateway } from '../support/apple-pay-gateway';
import { blockWalletScripts, installWalletDoubles } from '../support/wallet-doubles';
import { measureWalletPage } from '../bench/wallet-page';
import { createAccount } from '../../lambdas/use-cases/admin/acquirer-accounts';

/**
 * Apple Pay and Google Pay on the hosted page (docs/wallets.md), on a phone (390 × 844), with the
 * wallets' JavaScript interfaces stood in for by test doubles and their script URLs answered here
 * (no network): a customer pays with each wallet and the merchant's server gets the callback; a
 * browser whose wallet cannot pay sees only the card form; with the wallets' scripts blocked or
 * never answering the card form is ready as soon as without wallets; the page stays axe-clean.
 * Apple's merchant validation goes through the service to a stand-in of Apple's host over mutual TLS.
 */
const env: Record<string, string> = {};
let gateway: FakeAppleGateway;
let receiver: CallbackReceiver;
beforeAll(async () => {
  [gateway, receiver] = await Promise.all([startFakeAppleGateway(), startCallbackReceiver()]);
  // Read by the service the harness starts next (its beforeAll runs after this one).
  Object.assign(env, { APPLE_PAY_GATEWAY_ADDRESS: gateway.address, APPLE_PAY_GATEWAY_CA: gateway.caFile });
});
afterAll(() => Promise.all([gateway?.close(), receiver?.close()]));

const WALLETS_ON = { wallets: ['applepay', 'googlepay'] as ('applepay' | 'googlepay')[], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' };
const h = checkoutHarness({ shop: { name: 'Wallet Shop', settings: WALLETS_ON }, service: { env } });
const PHONE = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true };

beforeAll(async () => {
  // The merchant identity certificate, as the platform team puts it in Secrets Manager.
  const identity = gateway.identity(LOCAL_APPLE_PAY_MERCHANT_ID);
  await h.service.deps.secretsClient.send(new CreateSecretCommand({ Name: `${LOCAL_APPLE_PAY_SECRET_PREFIX}${LOCAL_APPLE_PAY_MERCHANT_ID}`, SecretString: JSON.stringify(identity) }));
  await h.service.deps.merchants.save({ ...(await h.service.deps.merchants.find(h.shop.merchant_key))!, notificationUrl: receiver.url });
});

const token = (wallet: string, expiry = '01/38', authMethod?: 'PAN_ONLY' | 'CRYPTOGRAM_3DS') => sandboxWalletToken({ wallet, network: 'VISA', last4: '1111', expiry, ...(authMethod ? { authMethod } : {}) });

/** The payment's sale callback, as the merchant's server receives it (a 3-D Secure payment's challenge has its own before it). */
async function callbackOf(paymentId: string) {
  for (let round = 0; round < 50; round++) {
    await runCallbackJob(h.service.deps);
    const sale = receiver.received.find((c) => c.fields.id === paymentId && c.fields.type === 'sale');
    if (sale) return sale;
    await receiver.waitFor(receiver.received.length + 1, 200).catch(() => undefined);
  }
  return undefined;
}

describe('a customer on a phone pays with a wallet, and the merchant gets the callback', () => {
  it('Google Pay: the button shows once isReadyToPay says yes; the token is paid in the sandbox', async () => {
    const page = await h.open(PHONE);
    const calls = await installWalletDoubles(page, { googlePay: { ready: true, token: token('googlepay', '01/38', 'CRYPTOGRAM_3DS'), cardHolderAuthenticated: true } });
    const link = await h.checkout({ methods: ['card', 'googlepay', 'applepay'] });
    const answer = await page.goto(link.url);
    const csp = answer!.headers()['content-security-policy']!;
    // The wallets' origins beside the nonce (scripts still need it: the page adds them with it).
    expect(csp).toMatch(/script-src 'nonce-[^']+' https:\/\/pay\.google\.com https:\/\/applepay\.cdn-apple\.com;/);
    expect(csp).toContain('frame-src https://pay.google.com');
    expect(answer!.headers()['permissions-policy']).toContain('payment=(self)');
    expect(await page.locator('#applepay-button').isHidden()).toBe(true);
    await page.locator('#googlepay-button').click();
    await h.landOn(page, '/success');
    expect(calls.googlePay.environment).toBe('TEST');
    expect(calls.googlePay.request).toMatchObject({
      allowedPaymentMethods: [{ type: 'CARD', tokenizationSpecification: { type: 'PAYMENT_GATEWAY', parameters: { gateway: 'example', gatewayMerchantId: 'exampleGatewayMerchantId' } } }],
      merchantInfo: { merchantName: 'Wallet Shop' },
      transactionInfo: { totalPriceStatus: 'FINAL', totalPrice: '25.00', currencyCode: 'USD' },
    });
    const callback = await callbackOf(link.paymentId);
    expect(callback!.fields).toMatchObject({ type: 'sale', status: 'success', digital_wallet: 'googlepay', pan_type: 'dpan' });
    expect(callback!.fields.card).toBeUndefined();
    expect(verifiesWith(callback!, h.shop.password)).toBe(true);
  });

  it('Google Pay for a merchant linked to an acquirer account: the request carries the account\'s gateway and gateway merchant id, not the stage\'s or the merchant\'s own', async () => {
    await createAccount(h.service.deps, 'cli:test', {
      accountId: 'wallet-account', gatewayUrl: 'http://127.0.0.1:9/post', clientKey: 'wallet-key', password: 'wallet-account-password', currencies: ['USD'],
      googlePayGateway: 'accountgateway', googlePayGatewayMerchantId: 'account-merchant-1',
    });
    const linked = await h.service.createMerchant({ name: 'Account Wallet Shop', settings: { ...WALLETS_ON, acquirerAccount: 'wallet-account' } });
    const page = await h.open(PHONE);
    const calls = await installWalletDoubles(page, { googlePay: { ready: true, token: token('googlepay', '01/38', 'CRYPTOGRAM_3DS'), cardHolderAuthenticated: true } });
    const link = await h.checkout({ methods: ['card', 'googlepay'] }, linked);
    await page.goto(link.url);
    await page.locator('#googlepay-button').click();
    await h.landOn(page, '/success');
    expect(calls.googlePay.environment).toBe('TEST');
    expect(calls.googlePay.request).toMatchObject({
      allowedPaymentMethods: [{ type: 'CARD', tokenizationSpecification: { type: 'PAYMENT_GATEWAY', parameters: { gateway: 'accountgateway', gatewayMerchantId: 'account-merchant-1' } } }],
      merchantInfo: { merchantName: 'Account Wallet Shop' },
    });
    expect(await h.service.deps.store.findPayment(link.paymentId)).toMatchObject({ acquirerAccount: 'wallet-account', wallet: { wallet: 'googlepay' }, status: 'settled' });
  });

  it('Apple Pay: canMakePayments says yes; merchant validation goes to Apple\'s host with the merchant identity certificate; the token is paid', async () => {
    const page = await h.open(PHONE);
    const calls = await installWalletDoubles(page, { applePay: { canMakePayments: true, token: token('applepay') }, googlePay: { ready: false } });
    const link = await h.checkout();
    await page.goto(link.url);
    expect(await page.locator('#googlepay-button').isHidden()).toBe(true);
    const before = gateway.seen.length;
    await page.locator('#applepay-button').click();
    await h.landOn(page, '/success');
    const seen = gateway.seen.slice(before);
    expect(seen).toEqual([
      {
        path: '/paymentservices/startSession',
        host: 'apple-pay-gateway-cert.apple.com',
        clientCertificate: LOCAL_APPLE_PAY_MERCHANT_ID,
        body: { merchantIdentifier: LOCAL_APPLE_PAY_MERCHANT_ID, displayName: 'Wallet Shop', initiative: 'web', initiativeContext: '127.0.0.1' },
      },
    ]);
    // The sheet got Apple's merchant session as Apple gave it, and was completed.
    expect(calls.applePay).toMatchObject({ version: 3, request: { currencyCode: 'USD', total: { label: 'Wallet Shop', amount: '25.00' } }, merchantSession: { merchantSessionIdentifier: expect.any(String) }, completed: 0 });
    const callback = await callbackOf(link.paymentId);
    expect(callback!.fields).toMatchObject({ type: 'sale', status: 'success', digital_wallet: 'applepay', pan_type: 'dpan' });
  });

  it('Google Pay with the card\'s own number (PAN_ONLY) on a 3-D Secure card: the challenge, then success; the callback says fpan', async () => {
    const page = await h.open(PHONE);
    await installWalletDoubles(page, { googlePay: { ready: true, token: token('googlepay', '05/38', 'PAN_ONLY'), cardHolderAuthenticated: false } });
    const link = await h.checkout();
    await page.goto(link.url);
    await page.locator('#googlepay-button').click();
    await page.waitForURL('**/sandbox/challenge/**');
    await page.locator('#code').fill('123456');
    await page.locator('#confirm').click();
    await h.landOn(page, '/success');
    const callback = await callbackOf(link.paymentId);
    expect(callback!.fields).toMatchObject({ type: 'sale', status: 'success', digital_wallet: 'googlepay', pan_type: 'fpan' });
  });
});

describe('without a wallet', () => {
  it('where neither wallet can pay, only the card form shows', async () => {
    const page = await h.open(PHONE);
    await installWalletDoubles(page, { applePay: { canMakePayments: false }, googlePay: { ready: false } });
    await page.goto((await h.checkout()).url);
    await page.waitForFunction(() => (window as unknown as { __walletCalls: { googlePay: { readyRequest?: unknown } } }).__walletCalls.googlePay.readyRequest !== undefined);
    expect(await page.locator('#applepay-button').isHidden()).toBe(true);
    expect(await page.locator('#wallets').isHidden()).toBe(true);
    expect(await page.locator('#pay-form').isVisible()).toBe(true);
  });

  it('a session offering Google Pay only has no card form: the page says so until the wallet can pay, then pays with it', async () => {
    const none = await h.open(PHONE);
    await installWalletDoubles(none, { googlePay: { ready: false } });
    await none.goto((await h.checkout({ methods: ['googlepay'] })).url);
    expect(await none.locator('#pay-form').count()).toBe(0);
    expect(await none.locator('#wallets-none').isVisible()).toBe(true);
    const ready = await h.open(PHONE);
    await installWalletDoubles(ready, { googlePay: { ready: true, token: token('googlepay') } });
    const link = await h.checkout({ methods: ['googlepay'] });
    await ready.goto(link.url);
    await ready.locator('#googlepay-button').click();
    await h.landOn(ready, '/success');
    expect(await none.locator('#wallets-none').textContent()).toBe(PAGE_LANGUAGES.en!.wallets.none);
  });

  it('without JavaScript the page is the card form, and it pays', async () => {
    const page = await h.open({ ...PHONE, javaScriptEnabled: false });
    await page.goto((await h.checkout()).url);
    expect(await page.locator('#wallets').isHidden()).toBe(true);
    await payWith(page, cards.approved);
    await h.landOn(page, '/success');
  });

  it('a session that names no wallet has no wallet script, buttons or CSP origins at all', async () => {
    const page = await h.open(PHONE);
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    const answer = await page.goto((await h.checkout({ methods: ['card'] })).url);
    expect(answer!.headers()['content-security-policy']).not.toMatch(/google|apple/);
    expect(answer!.headers()['permissions-policy']).toContain('payment=()');
    expect(await page.locator('#wallets').count()).toBe(0);
    expect(requested.filter((u) => /google|apple/.test(u))).toEqual([]);
  });

  it('with the wallets\' scripts blocked or never answering the card form still takes a card (how soon is the bench\'s row, not a test\'s)', async () => {
    const links = { plain: async () => (await h.checkout({ methods: ['card'] })).url, wallets: async () => (await h.checkout()).url };
    // Each sample is the time until the card number takes typing and the page's script formats it: a
    // page whose form never became usable would not finish its sample.
    const t = await measureWalletPage(h.browser, links, { samples: 1, warmup: 0 });
    for (const row of [t.withoutWallets, t.walletScriptsBlocked, t.walletScriptsHanging]) expect(row).toMatchObject({ samples: 1, medianMs: expect.any(Number) });
  });

  it('with the wallets\' scripts blocked no button shows', async () => {
    const page = await h.open(PHONE);
    await blockWalletScripts(page, 'abort');
    await page.goto((await h.checkout()).url);
    await page.locator('#card_number').fill('4111111111111111');
    expect(await page.locator('#wallets').isHidden()).toBe(true);
  });
});

it('the page with both wallet buttons is axe-clean on a phone', async () => {
  const page = await h.audited(PHONE);
  await installWalletDoubles(page, { applePay: { canMakePayments: true }, googlePay: { ready: true } });
  await page.goto((await h.checkout()).url);
  await page.locator('#googlepay-button').waitFor();
  await page.locator('#applepay-button').waitFor();
  expect(await seriousA11yViolations(page)).toEqual([]);
});
