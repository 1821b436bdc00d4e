import vectors from '../fixtures/s2s-card-vectors.json';
import { decideAuthorization } from '../../lambdas/adapters/sandbox-acquirer/bank';
import { readSandboxWalletToken, sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import { authorizationFields } from '../../lambdas/adapters/s2s-card/transformers';
import { WALLETS_ON_PAGE, sessionMethodValues, walletsOffered } from '../../lambdas/domain/checkout-methods';
import { WALLET_RULES, readWalletInput, walletRefusal, type WalletInput } from '../../lambdas/domain/wallet';
import type { Payment } from '../../lambdas/domain/payment';
import { redact, redactText } from '../../lambdas/observability/redact';
import { validateCreateSession } from '../../lambdas/protocol/merchant/session';
import { toStatusResponse } from '../../lambdas/protocol/merchant/status';
import type { AuthorizeRequest } from '../../lambdas/ports/acquirer';
import { ApiError } from '../../lambdas/domain/errors';
import { walletSettingsProblems, walletsForPage } from '../../lambdas/domain/wallet-settings';
import { settingsFromForm, settingsFromOptions } from '../../lambdas/protocol/merchant-settings';
import { contentSecurityPolicy } from '../../lambdas/checkout-page/headers';
import { walletSources } from '../../lambdas/checkout-page/wallets';
import { walletPageLines } from '../bench/report';
import { appleDomainAssociationDefine, walletEnvironment } from '../../lib/stage-settings';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validSessionBody } from '../support/fixtures';
import { linkPayment } from '../support/payment-fixtures';

/** Wallet payments below the page (docs/wallets.md): what a submission is, who may pay with one, what the acquirers see. */

const input = (overrides: Partial<WalletInput> = {}): WalletInput => ({ wallet: 'googlepay', paymentToken: '{"x":1}', network: 'VISA', last4: '1111', authMethod: 'CRYPTOGRAM_3DS', ...overrides });

describe('a wallet submission', () => {
  test.each([
    ['Google Pay with a cryptogram is a device number', {}, { wallet: 'googlepay', panType: 'dpan', brand: 'visa', last4: '1111' }],
    ['Google Pay PAN_ONLY is the card\'s own number', { authMethod: 'PAN_ONLY' }, { panType: 'fpan' }],
    ['Apple Pay is always a device number, whatever auth method is said', { wallet: 'applepay', authMethod: 'PAN_ONLY', network: 'masterCard', last4: '4444' }, { wallet: 'applepay', panType: 'dpan', brand: 'mastercard' }],
    ['an unknown network is an unknown brand', { network: 'Elo' }, { brand: 'unknown' }],
  ] as const)('%s', (_name, overrides, expected) => {
    const read = readWalletInput(input(overrides));
    expect(read).toMatchObject({ ok: true, payment: expected });
  });

  test.each([
    ['an unknown wallet', { wallet: 'samsungpay' }, 'wallet'],
    ['no token', { paymentToken: ' ' }, 'token'],
    ['a token over 16 KB', { paymentToken: 'x'.repeat(16_385) }, 'token'],
    ['last four that are not four digits', { last4: '4111111111111111' }, 'card'],
    ['Google Pay without its auth method', { authMethod: undefined }, 'authMethod'],
    ['Google Pay with an auth method it does not have', { authMethod: 'FPAN' }, 'authMethod'],
  ] as const)('refused: %s', (_name, overrides, problem) => {
    expect(readWalletInput(input(overrides))).toEqual({ ok: false, problem });
  });

  test.each([
    [{ recurringInit: true, reqToken: false }, { dms: false }, WALLET_RULES.storesNoCard],
    [{ recurringInit: false, reqToken: true }, { dms: false }, WALLET_RULES.storesNoCard],
    [{ recurringInit: false, reqToken: false }, { dms: true }, WALLET_RULES.noDms],
    [{ recurringInit: false, reqToken: false }, { dms: false }, undefined],
  ])('virtual: session %j, merchant %j → %s', (session, merchant, refusal) => {
    expect(walletRefusal(session, merchant)).toBe(refusal);
  });
});

describe('which wallets a session offers', () => {
  const order = { currency: 'EUR', amountMinor: 1000 };
  test('the session\'s methods, else the first matching pre-routing rule, else every wallet once the page shows them', () => {
    expect(walletsOffered(['card', 'applepay'], [{ methods: ['googlepay'] }], order, true)).toEqual(['applepay']);
    expect(walletsOffered(undefined, [{ currency: 'USD', methods: ['applepay'] }, { methods: ['googlepay', 'card'] }], order, true)).toEqual(['googlepay']);
    expect(walletsOffered(undefined, undefined, order, true)).toEqual(['applepay', 'googlepay']);
    expect(walletsOffered(undefined, undefined, order, false)).toEqual([]);
  });

  test('methods may name the wallets only once the page shows their buttons', () => {
    expect(sessionMethodValues(false)).toEqual(['card']);
    expect(sessionMethodValues(true)).toEqual(['card', 'applepay', 'googlepay']);
  });
});

describe('a session naming wallets', () => {
  const body = (overrides: Record<string, unknown>) => validSessionBody('merchant-1', { hash: 'x', ...overrides });
  const messages = (f: () => unknown): string[] => {
    try {
      f();
    } catch (e) {
      return (e as ApiError).toEnvelope().errors.map((x) => x.error_message);
    }
    return [];
  };

  test('is refused as any unknown method where the page does not show them (the gate off)', () => {
    expect(messages(() => validateCreateSession(body({ methods: ['card', 'googlepay'] }), { walletsOnPage: false }))).toEqual(['methods: The value you selected is not a valid choice.']);
  });

  test('is accepted by default: the page shows the wallets\' buttons (WALLETS_ON_PAGE)', () => {
    expect(WALLETS_ON_PAGE).toBe(true);
    expect(validateCreateSession(body({ methods: ['card', 'googlepay'] })).methods).toEqual(['card', 'googlepay']);
  });

  test('is accepted once it does, except with recurring_init or req_token: a wallet stores no card', () => {
    expect(validateCreateSession(body({ methods: ['card', 'googlepay', 'applepay'] }), { walletsOnPage: true }).methods).toEqual(['card', 'googlepay', 'applepay']);
    for (const keep of [{ recurring_init: true }, { req_token: true }]) {
      expect(messages(() => validateCreateSession(body({ methods: ['applepay'], ...keep }), { walletsOnPage: true }))).toEqual([`methods: ${WALLET_RULES.storesNoCard}`]);
    }
    expect(validateCreateSession(body({ methods: ['card'], recurring_init: true }), { walletsOnPage: true }).recurring_init).toBe(true);
  });
});

describe('the sandbox\'s wallet tokens', () => {
  test.each([
    [{ wallet: 'googlepay', network: 'VISA', last4: '1111', expiry: '05/38', authMethod: 'PAN_ONLY' }, { mask: '411111****1111', expMonth: 5, expYear: 2038 }, 'fpan'],
    [{ wallet: 'applepay', network: 'masterCard', last4: '4444', expiry: '02/2038' }, { mask: '555555****4444', expMonth: 2, expYear: 2038 }, 'dpan'],
    [{ wallet: 'googlepay', network: 'AMEX', last4: '0005', expiry: '09/38' }, { mask: '378282****0005', expMonth: 9, expYear: 2038 }, 'dpan'],
    [{ wallet: 'googlepay', network: 'VISA', last4: '4242', expiry: '01/30' }, { mask: '******4242', expMonth: 1, expYear: 2030 }, 'dpan'],
  ] as const)('%j reads as a card the rules know', (token, facts, panType) => {
    expect(readSandboxWalletToken({ wallet: token.wallet, paymentToken: sandboxWalletToken(token) })).toEqual({ facts, panType });
  });

  test.each([
    ['not JSON', 'eyJhbGciOi'],
    ['another wallet\'s token', sandboxWalletToken({ wallet: 'applepay', network: 'VISA', last4: '1111', expiry: '01/38' })],
    ['no expiry', JSON.stringify({ sandbox: 'googlepay', network: 'VISA', last4: '1111' })],
    ['an auth method nobody has', JSON.stringify({ sandbox: 'googlepay', network: 'VISA', last4: '1111', expiry: '01/38', authMethod: 'FPAN' })],
  ])('unreadable: %s', (_name, paymentToken) => {
    expect(readSandboxWalletToken({ wallet: 'googlepay', paymentToken })).toBeUndefined();
  });

  test('the bank: a device number skips the 3-D Secure cards\' challenge; the card\'s own number is challenged', () => {
    const ask = { amountMinor: 1000, currency: 'EUR', recurringOnStored: false, attempt: 1 };
    const card = (month: number) => ({ mask: '411111****1111', expMonth: month, expYear: 2038 });
    expect(decideAuthorization({ ...ask, walletPan: 'dpan' }, card(5))).toEqual({ kind: 'approve' });
    expect(decideAuthorization({ ...ask, walletPan: 'dpan' }, card(6))).toEqual({ kind: 'decline', reason: 'Declined by processing.' });
    expect(decideAuthorization({ ...ask, walletPan: 'fpan' }, card(5))).toMatchObject({ kind: 'challenge', flow: '3ds' });
    expect(decideAuthorization({ ...ask, walletPan: 'dpan' }, card(12))).toMatchObject({ kind: 'challenge', flow: 'redirect' });
  });
});

describe('a wallet token is card data', () => {
  const token = sandboxWalletToken({ wallet: 'googlepay', network: 'VISA', last4: '1111', expiry: '01/38' });
  test('the logger drops it by key, in objects and in form-encoded text', () => {
    const logged = JSON.stringify(redact({ instrument: { kind: 'wallet', wallet: { wallet: 'googlepay', paymentToken: token } }, payment_token: token, paymentData: { data: 'abc' }, tokenizationData: { token } }));
    expect(logged).not.toContain('sandbox');
    expect(logged).not.toContain('abc');
    expect(redactText(`action=SALE&digital_wallet=googlepay&payment_token=${encodeURIComponent(token)}&hash=1`)).toBe('action=SALE&digital_wallet=googlepay&payment_token=[redacted]&hash=1');
  });
});

describe('the S2S CARD wallet SALE', () => {
  const vector = vectors.vectors.find((v) => v.id === 'sale-digital-wallet')!;
  const request: AuthorizeRequest = {
    idempotencyKey: 'pay_1.1',
    paymentId: 'pay_1',
    amountMinor: 1000,
    currency: 'USD',
    capture: true,
    instrument: { kind: 'wallet', wallet: { wallet: 'googlepay', panType: 'dpan', brand: 'visa', last4: '1111', paymentToken: '{"signature":"MEUCIQ"}' } },
    browser: { ip: '203.0.113.7' },
    returnUrl: 'https://pay.example/auth/t/complete',
    storeCredential: true,
    attempt: 1,
    payer: { email: vector.inputs.payer_email, country: 'US' },
  };

  test('digital_wallet and payment_token, no card field and no stored credential asked, hashed with Formula 8 (the vector)', () => {
    const built = authorizationFields(request, undefined, { email: vector.inputs.payer_email!, digits: '' }, { clientKey: 'ck', password: vector.inputs.password! });
    if (!('fields' in built)) throw new Error(built.refused);
    expect(built.fields).toMatchObject({ action: 'SALE', digital_wallet: 'googlepay', payment_token: '{"signature":"MEUCIQ"}', order_amount: '10.00', order_currency: 'USD', hash: vector.hash });
    expect(vector.hash).toBe('71a0cd956f581b4913d60dd3e345c614');
    for (const field of ['card_number', 'card_exp_month', 'card_exp_year', 'card_cvv2', 'card_token', 'req_token', 'recurring_init']) expect(built.fields).not.toHaveProperty(field);
  });

  test('with auth=Y when asked for an authorization only (the use case never asks it of a wallet)', () => {
    const built = authorizationFields({ ...request, capture: false }, undefined, { email: 'a@b.c', digits: '' }, { clientKey: 'ck', password: 'p' });
    expect('fields' in built && built.fields.auth).toBe('Y');
  });
});

describe('the merchant\'s status of a wallet payment', () => {
  test('carries digital_wallet; a card payment\'s does not', () => {
    const card: Payment = { ...linkPayment(new Date('2026-01-01T00:00:00Z')), status: 'settled' };
    const wallet: Payment = { ...card, card: undefined, wallet: { wallet: 'applepay', panType: 'dpan', brand: 'visa', last4: '1111' } };
    expect(toStatusResponse(wallet, new Date())).toMatchObject({ digital_wallet: 'applepay' });
    expect(toStatusResponse(wallet, new Date())).not.toHaveProperty('pan_type');
    expect(toStatusResponse(card, new Date())).not.toHaveProperty('digital_wallet');
  });
});

describe('a merchant\'s wallet settings and the page\'s buttons', () => {
  const order = { currency: 'EUR', amountMinor: 1000 };
  const session = { recurringInit: false, reqToken: false };
  const stage = { applePay: true, applePayMerchantId: 'merchant.local.checkout', googlePayGateway: 'example' };
  const on = { dms: false, wallets: ['applepay', 'googlepay'] as const, googlePayGatewayMerchantId: 'gw-1' };

  test.each([
    ['both on, the stage runs both', session, on, stage, ['applepay', 'googlepay']],
    ['the merchant has them off (no setting)', session, { dms: false }, stage, []],
    ['the merchant has Google Pay only', session, { ...on, wallets: ['googlepay'] as const }, stage, ['googlepay']],
    ['the session names Apple Pay only', { ...session, methods: ['card', 'applepay'] }, on, stage, ['applepay']],
    ['no Google Pay gateway merchant id', session, { ...on, googlePayGatewayMerchantId: undefined }, stage, ['applepay']],
    ['a stage without Apple Pay', session, on, { ...stage, applePay: false }, ['googlepay']],
    ['a stage without a Google Pay gateway (the merchant on the stage\'s account)', session, on, { ...stage, googlePayGateway: undefined }, ['applepay']],
    ['a stage without an Apple Pay merchant id of its own, and the merchant has none', session, on, { ...stage, applePayMerchantId: undefined }, ['googlepay']],
    ['... but the merchant has one', session, { ...on, applePayMerchantId: 'merchant.com.shop' }, { ...stage, applePayMerchantId: undefined }, ['applepay', 'googlepay']],
    ['a DMS merchant (walletRefusal)', session, { ...on, dms: true }, stage, []],
    ['a session that keeps the card (walletRefusal)', { ...session, reqToken: true }, on, stage, []],
  ])('%s', (_name, s, merchant, st, expected) => {
    expect(walletsForPage(s, merchant, order, st)).toEqual(expected);
  });

  test.each([
    [{ wallets: ['applepay', 'samsungpay'] }, 'wallets must be a list without repeats of: applepay, googlepay (unknown: samsungpay)'],
    [{ wallets: ['applepay', 'applepay'] }, 'wallets must be a list without repeats of: applepay, googlepay'],
    [{ applePayMerchantId: 'com.example' }, 'Apple Pay merchant id must be the identifier registered with Apple, such as merchant.com.example.shop'],
    [{ googlePayGatewayMerchantId: 'has space' }, 'Google Pay gateway merchant id must be 1-100 letters, digits and . _ : -'],
  ])('settings %j are refused', (patch, problem) => {
    expect(walletSettingsProblems(patch as never)).toEqual([problem]);
  });

  test('the CLI and the portal read the same settings', () => {
    expect(settingsFromOptions({ wallets: 'applepay,googlepay', 'apple-pay-merchant-id': 'merchant.com.shop', 'google-pay-gateway-merchant-id': 'gw-1' })).toEqual({
      settings: { wallets: ['applepay', 'googlepay'], applePayMerchantId: 'merchant.com.shop', googlePayGatewayMerchantId: 'gw-1' },
    });
    expect(settingsFromOptions({ wallets: 'off' })).toEqual({ settings: { wallets: undefined } });
    expect(settingsFromForm({ wallets: ['googlepay'], google_pay_merchant_id: 'BCR2DN4T123' })).toEqual({ settings: { wallets: ['googlepay'], googlePayMerchantId: 'BCR2DN4T123' } });
    expect(settingsFromOptions({ wallets: 'paypal' })).toEqual({ problem: 'wallets must be a list without repeats of: applepay, googlepay (unknown: paypal)' });
  });
});

describe('the page\'s Content-Security-Policy with wallets', () => {
  test('without a wallet it is as before: nothing of Apple\'s or Google\'s, no fetches, no frames', () => {
    const csp = contentSecurityPolicy('N');
    expect(csp).toBe("default-src 'none'; script-src 'nonce-N'; style-src 'nonce-N'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'none'");
  });

  test('with Google Pay only: Google\'s origins only; with Apple Pay: Apple\'s script origin and our own validation', () => {
    expect(contentSecurityPolicy('N', undefined, undefined, { wallets: walletSources(['googlepay']) })).toBe(
      "default-src 'none'; script-src 'nonce-N' https://pay.google.com; style-src 'nonce-N'; img-src 'self' data: https://www.gstatic.com; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src https://pay.google.com https://google.com/pay; frame-src https://pay.google.com",
    );
    expect(contentSecurityPolicy('N', undefined, undefined, { wallets: walletSources(['applepay']) })).toBe(
      "default-src 'none'; script-src 'nonce-N' https://applepay.cdn-apple.com; style-src 'nonce-N'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src https://applepay.cdn-apple.com 'self'",
    );
  });
});

describe('the Apple Pay domain-association file', () => {
  const event = (path: string, method = 'GET') => ({ rawPath: path, requestContext: { http: { method, path } } }) as never;
  afterEach(() => delete process.env.APPLE_PAY_DOMAIN_ASSOCIATION);

  test('is served by the fallback function at Apple\'s path when the stage has one; 404 otherwise', async () => {
    const { handler, APPLE_DOMAIN_ASSOCIATION_PATH } = await import('../../lambdas/handlers/not-found');
    const call = (e: unknown) => (handler as unknown as (e: unknown, c: unknown) => Promise<{ statusCode: number; body?: string; headers?: Record<string, string> }>)(e, {});
    expect((await call(event(APPLE_DOMAIN_ASSOCIATION_PATH))).statusCode).toBe(404);
    process.env.APPLE_PAY_DOMAIN_ASSOCIATION = '7B2270737049...';
    expect(await call(event(APPLE_DOMAIN_ASSOCIATION_PATH))).toMatchObject({ statusCode: 200, body: '7B2270737049...', headers: { 'content-type': 'text/plain; charset=utf-8' } });
    expect((await call(event(`${APPLE_DOMAIN_ASSOCIATION_PATH}x`))).statusCode).toBe(404);
    expect((await call(event(APPLE_DOMAIN_ASSOCIATION_PATH, 'POST'))).statusCode).toBe(404);
  });
});

describe('the bench\'s wallet page row', () => {
  const t = (medianMs: number) => ({ samples: 30, medianMs, p99Ms: medianMs + 5, minMs: medianMs - 5, maxMs: medianMs + 9 });
  test('renders the three kinds beside each other, and nothing when the run could not measure them', () => {
    const lines = walletPageLines({ walletPage: { withoutWallets: t(40), walletScriptsBlocked: t(41), walletScriptsHanging: t(42) }, walletPagePlan: { samples: 30, warmup: 3 } });
    expect(lines.filter((l) => l.startsWith('| ') && !l.startsWith('| Page'))).toEqual([
      '| no wallets | 30 | 40.0 | 45.0 | 35.0 | 49.0 |',
      '| wallets on, scripts blocked | 30 | 41.0 | 46.0 | 36.0 | 50.0 |',
      '| wallets on, scripts never answering | 30 | 42.0 | 47.0 | 37.0 | 51.0 |',
    ]);
    expect(walletPageLines({})).toEqual([]);
  });
});

describe('a stage\'s wallet settings (lib/stage-settings.ts)', () => {
  test('give the page functions their environment, and nothing without them', () => {
    expect(walletEnvironment(undefined, 'checkout/prod/apple-pay/')).toEqual({});
    expect(walletEnvironment({ applePay: { merchantId: 'merchant.com.example.pay' }, googlePay: { gateway: 'acquirer-gw' }, country: 'DE' }, 'checkout/prod/apple-pay/')).toEqual({
      APPLE_PAY_SECRET_PREFIX: 'checkout/prod/apple-pay/',
      APPLE_PAY_MERCHANT_ID: 'merchant.com.example.pay',
      GOOGLE_PAY_GATEWAY: 'acquirer-gw',
      WALLET_COUNTRY: 'DE',
    });
    expect(() => walletEnvironment({ applePay: { merchantId: 'com.example' } }, 'p/')).toThrow(/merchant identifier/);
    expect(() => walletEnvironment({ country: 'Germany' }, 'p/')).toThrow(/alpha-2/);
  });

  test('compile the domain-association file into the $default function, checked', () => {
    const dir = mkdtempSync(join(tmpdir(), 'apple-domain-'));
    const file = join(dir, 'association');
    writeFileSync(file, '7B227073704964223A2239\n');
    expect(appleDomainAssociationDefine({ applePay: { domainAssociationFile: file } })).toEqual({ 'process.env.APPLE_PAY_DOMAIN_ASSOCIATION': JSON.stringify('7B227073704964223A2239') });
    expect(appleDomainAssociationDefine({ applePay: {} })).toEqual({});
    writeFileSync(file, '');
    expect(() => appleDomainAssociationDefine({ applePay: { domainAssociationFile: file } })).toThrow(/Apple's file/);
    rmSync(dir, { recursive: true });
  });
});
