import { accountProblems, type AcquirerAccount } from '../../lambdas/domain/acquirer-account';
import { googlePayTokenizationOf, walletsForPage, type AccountWallets } from '../../lambdas/domain/wallet-settings';
import { ApiError } from '../../lambdas/domain/errors';
import { cachedAccountReader } from '../../lambdas/adapters/dynamodb/acquirer-accounts';
import { accountInputOf, accountView } from '../../lambdas/protocol/admin/acquirer-accounts';
import { pageWalletsOf, walletConfig } from '../../lambdas/checkout-page/wallets';
import { linkWallets } from '../../lambdas/use-cases/link-wallets';
import type { LinkPayment } from '../../lambdas/domain/payment';
import type { Merchant } from '../../lambdas/ports/merchants';
import { ManualClock } from '../../lambdas/ports/clock';
import { parseAccountCommand } from '../../local/account-command';
import { parseCommand } from '../../local/merchant-command';
import { linkPayment } from '../support/payment-fixtures';

/**
 * Google Pay's tokenization parameters per acquirer account (docs/wallets.md): what an account may
 * hold, which parameters a merchant's page asks Google Pay for (its account's, or the stage's gateway
 * with its own id on the stage's account), and the reads that costs.
 */

const messages = (problems: readonly { path: string; message: string }[]) => problems.map((p) => `${p.path}: ${p.message}`);
const GATEWAY_PROBLEM = "google_pay_gateway: Give the gateway's id at Google Pay (1 to 60 lower-case letters, digits, _ and -).";
const MERCHANT_ID_PROBLEM = "google_pay_gateway_merchant_id: Give the account's id at its Google Pay gateway (1 to 100 letters, digits and . _ : -).";

describe("an account's Google Pay parameters", () => {
  const change = (input: Record<string, unknown>) => messages(accountProblems({ accountId: 'eu-1', ...input }, false, false));

  test.each([
    ['a gateway id and an id at it', { googlePayGateway: 'adyen', googlePayGatewayMerchantId: 'ACME.Shop_1:eu-2' }, []],
    ['the longest of each', { googlePayGateway: 'g'.repeat(60), googlePayGatewayMerchantId: 'm'.repeat(100) }, []],
    ['cleared with null', { googlePayGateway: null, googlePayGatewayMerchantId: null }, []],
    ['cleared with ""', { googlePayGateway: '', googlePayGatewayMerchantId: '' }, []],
    ['one without the other (no Google Pay until both are there)', { googlePayGateway: 'adyen' }, []],
    ['a gateway id in capitals', { googlePayGateway: 'Adyen' }, [GATEWAY_PROBLEM]],
    ['a gateway id too long', { googlePayGateway: 'g'.repeat(61) }, [GATEWAY_PROBLEM]],
    ['a gateway id with a dot', { googlePayGateway: 'gw.example' }, [GATEWAY_PROBLEM]],
    ['a merchant id with a space', { googlePayGatewayMerchantId: 'has space' }, [MERCHANT_ID_PROBLEM]],
    ['a merchant id too long', { googlePayGatewayMerchantId: 'm'.repeat(101) }, [MERCHANT_ID_PROBLEM]],
    ['both wrong', { googlePayGateway: 'x y', googlePayGatewayMerchantId: 'a/b' }, [GATEWAY_PROBLEM, MERCHANT_ID_PROBLEM]],
  ])('%s', (_name, input, expected) => {
    expect(change(input)).toEqual(expected);
  });

  test('a new account is checked the same way, beside its other fields', () => {
    const created = { accountId: 'eu-1', gatewayUrl: 'https://gw.example/post', clientKey: 'key', password: 'password-1', currencies: ['EUR'] };
    expect(messages(accountProblems({ ...created, googlePayGateway: 'adyen', googlePayGatewayMerchantId: 'ACME' }, true, false))).toEqual([]);
    expect(messages(accountProblems({ ...created, googlePayGateway: 'ADYEN' }, true, false))).toEqual([GATEWAY_PROBLEM]);
  });

  test('the admin API reads them by their snake_case names; null or "" clears one; anything but text is refused', () => {
    expect(accountInputOf({ google_pay_gateway: ' adyen ', google_pay_gateway_merchant_id: 'ACME' }, false)).toEqual({ googlePayGateway: 'adyen', googlePayGatewayMerchantId: 'ACME' });
    expect(accountInputOf({ google_pay_gateway: null, google_pay_gateway_merchant_id: '' }, false)).toEqual({ googlePayGateway: null, googlePayGatewayMerchantId: null });
    const refused = (() => {
      try {
        accountInputOf({ google_pay_gateway: 7, google_pay_gateway_merchant_id: ['x'] }, false);
      } catch (e) {
        return (e as ApiError).fieldErrors.map((f) => `${f.path}: ${f.message}`);
      }
      return [];
    })();
    expect(refused).toEqual(['google_pay_gateway: This value is not valid.', 'google_pay_gateway_merchant_id: This value is not valid.']);
  });

  test('the admin API shows them when set, and not otherwise', () => {
    const account: AcquirerAccount = { accountId: 'eu-1', acquirer: 's2s-card', gatewayUrl: 'https://gw.example/post', clientKey: 'k', currencies: ['EUR'], createdAt: 't', updatedAt: 't', passwordSetAt: 't' };
    expect(accountView({ ...account, googlePayGateway: 'adyen', googlePayGatewayMerchantId: 'ACME' })).toMatchObject({ google_pay_gateway: 'adyen', google_pay_gateway_merchant_id: 'ACME' });
    expect(accountView(account)).not.toHaveProperty('google_pay_gateway');
    expect(accountView(account)).not.toHaveProperty('google_pay_gateway_merchant_id');
  });

  test('the CLI sets and clears them (off); --google-pay-gateway-merchant-id is the merchant\'s with set and the account\'s with account-set', () => {
    expect(parseAccountCommand('account-set', ['eu-1'], { 'google-pay-gateway': 'adyen', 'google-pay-gateway-merchant-id': 'ACME' }, {}).fields).toEqual({ google_pay_gateway: 'adyen', google_pay_gateway_merchant_id: 'ACME' });
    expect(parseAccountCommand('account-set', ['eu-1'], { 'google-pay-gateway': 'off', 'google-pay-gateway-merchant-id': 'off' }, {}).fields).toEqual({ google_pay_gateway: null, google_pay_gateway_merchant_id: null });
    const asAccount = parseCommand(['account-set', 'eu-1', '--google-pay-gateway-merchant-id', 'ACME'], {});
    expect(asAccount).toMatchObject({ name: 'account-set', settings: {}, account: { fields: { google_pay_gateway_merchant_id: 'ACME' } } });
    const asMerchant = parseCommand(['set', 'shop-1', '--google-pay-gateway-merchant-id', 'ACME'], {});
    expect(asMerchant).toMatchObject({ name: 'set', settings: { googlePayGatewayMerchantId: 'ACME' } });
    expect(asMerchant).not.toHaveProperty('account');
    // The account's own options stay refused outside the account commands, and settings inside them.
    expect(() => parseCommand(['set', 'shop-1', '--google-pay-gateway', 'adyen'], {})).toThrow('--google-pay-gateway: only account-create and account-set take these');
    expect(() => parseCommand(['account-set', 'eu-1', '--dms', 'on'], {})).toThrow('account-set takes no settings (--dms)');
    expect(() => parseCommand(['accounts', '--google-pay-gateway-merchant-id', 'ACME'], {})).toThrow('accounts takes no arguments or options');
  });
});

describe('which Google Pay parameters a merchant\'s page asks for', () => {
  const stage = { googlePayGateway: 'stagegateway' };
  const complete: AccountWallets = { googlePayGateway: 'accountgateway', googlePayGatewayMerchantId: 'account-merchant-1' };
  const own = { googlePayGatewayMerchantId: 'own-id' };

  test.each<[string, { acquirerAccount?: string; googlePayGatewayMerchantId?: string }, AccountWallets | undefined, { googlePayGateway?: string }, object | undefined]>([
    ['on the stage\'s account: the stage\'s gateway and the merchant\'s own id', own, undefined, stage, { gateway: 'stagegateway', gatewayMerchantId: 'own-id' }],
    ['... an account read by mistake is not used', own, complete, stage, { gateway: 'stagegateway', gatewayMerchantId: 'own-id' }],
    ['... "stage" names the stage\'s account', { ...own, acquirerAccount: 'stage' }, complete, stage, { gateway: 'stagegateway', gatewayMerchantId: 'own-id' }],
    ['... without an id of its own: none', {}, undefined, stage, undefined],
    ['... on a stage without a gateway: none', own, undefined, {}, undefined],
    ['linked to an account: the account\'s, over the stage\'s gateway and the merchant\'s own id', { ...own, acquirerAccount: 'eu-1' }, complete, stage, { gateway: 'accountgateway', gatewayMerchantId: 'account-merchant-1' }],
    ['... on a stage without a gateway of its own', { acquirerAccount: 'eu-1' }, complete, {}, { gateway: 'accountgateway', gatewayMerchantId: 'account-merchant-1' }],
    ['... an account without a gateway: none (not the stage\'s)', { ...own, acquirerAccount: 'eu-1' }, { googlePayGatewayMerchantId: 'account-merchant-1' }, stage, undefined],
    ['... an account without an id: none (not the merchant\'s own)', { ...own, acquirerAccount: 'eu-1' }, { googlePayGateway: 'accountgateway' }, stage, undefined],
    ['... an account that could not be read: none', { ...own, acquirerAccount: 'eu-1' }, undefined, stage, undefined],
  ])('%s', (_name, merchant, account, st, expected) => {
    expect(googlePayTokenizationOf(merchant, account, st)).toEqual(expected);
  });

  test('the buttons follow the same rule: no complete parameters, no Google Pay button (Apple Pay stays)', () => {
    const session = { recurringInit: false, reqToken: false };
    const order = { currency: 'EUR', amountMinor: 1000 };
    const st = { applePay: true, applePayMerchantId: 'merchant.local.checkout', ...stage };
    const linked = { dms: false, wallets: ['applepay', 'googlepay'] as const, acquirerAccount: 'eu-1', ...own };
    expect(walletsForPage(session, linked, order, st, complete)).toEqual(['applepay', 'googlepay']);
    expect(walletsForPage(session, linked, order, st, { googlePayGateway: 'accountgateway' })).toEqual(['applepay']);
    expect(walletsForPage(session, linked, order, st)).toEqual(['applepay']);
  });
});

describe('the page\'s wallets (link-wallets.ts)', () => {
  const at = new Date('2030-01-01T10:00:00Z');
  const payment = linkPayment(at) as LinkPayment;
  const merchant = (settings: Partial<Merchant> = {}): Merchant => ({ merchantKey: 'shop', name: 'Shop', dms: false, returnParams: false, maxDeclines: 3, createdAt: 't', updatedAt: 't', wallets: ['applepay', 'googlepay'], ...settings });
  const account: AcquirerAccount = {
    accountId: 'eu-1', acquirer: 's2s-card', gatewayUrl: 'https://gw.example/post', clientKey: 'k', currencies: ['USD'], createdAt: 't', updatedAt: 't', passwordSetAt: 't',
    googlePayGateway: 'accountgateway', googlePayGatewayMerchantId: 'account-merchant-1',
  };
  /** A reader finding `found` (null: no such account), and the ids it was asked for. */
  const reader = (found: AcquirerAccount | Error | null = account) => {
    const reads: string[] = [];
    return { reads, accountReader: { find: async (id: string) => (reads.push(id), found instanceof Error ? Promise.reject(found) : (found ?? undefined)) } };
  };
  const config = { APPLE_PAY_SECRET_PREFIX: 'checkout/x/apple-pay/', APPLE_PAY_MERCHANT_ID: 'merchant.x', ACQUIRER: 's2s-card', GOOGLE_PAY_GATEWAY: 'stagegateway', STAGE: 'dev', WALLET_COUNTRY: 'DE' } as const;
  const stage = pageWalletsOf(config);

  test('a linked merchant: its account is read once and its parameters go into Google Pay\'s request', async () => {
    const deps = reader();
    const m = merchant({ acquirerAccount: 'eu-1', googlePayGatewayMerchantId: 'own-id' });
    const wallets = await linkWallets(deps, stage, payment, m);
    expect(deps.reads).toEqual(['eu-1']);
    expect(wallets).toEqual({ offered: ['applepay', 'googlepay'], googlePay: { gateway: 'accountgateway', gatewayMerchantId: 'account-merchant-1' } });
    const view = { kind: 'form', payment, merchant: m, methods: ['card'], ask: [], attemptsLeft: 3 } as const;
    const config = walletConfig(view, wallets, stage, '/auth/t') as { googlepay: { environment: string; request: { allowedPaymentMethods: { tokenizationSpecification: unknown }[] } } };
    expect(config.googlepay.environment).toBe('TEST');
    expect(config.googlepay.request.allowedPaymentMethods[0]!.tokenizationSpecification).toEqual({ type: 'PAYMENT_GATEWAY', parameters: { gateway: 'accountgateway', gatewayMerchantId: 'account-merchant-1' } });
  });

  test('PRODUCTION on prod only, whoever\'s parameters', () => {
    expect(pageWalletsOf({ ...config, STAGE: 'prod' }).googlePayEnvironment).toBe('PRODUCTION');
    expect(pageWalletsOf({ ...config, STAGE: 'staging' }).googlePayEnvironment).toBe('TEST');
  });

  test.each([
    ['a merchant on the stage\'s account', merchant({ googlePayGatewayMerchantId: 'own-id' }), ['applepay', 'googlepay']],
    ['a linked merchant with Google Pay off', merchant({ acquirerAccount: 'eu-1', wallets: ['applepay'] }), ['applepay']],
    ['a linked merchant that captures later (no wallet at all)', merchant({ acquirerAccount: 'eu-1', dms: true }), []],
  ])('no account is read for %s', async (_name, m, offered) => {
    const deps = reader();
    expect((await linkWallets(deps, stage, payment, m)).offered).toEqual(offered);
    expect(deps.reads).toEqual([]);
  });

  test('a session that offers no Google Pay reads no account', async () => {
    const deps = reader();
    const cardAndApple = { ...payment, checkout: { ...payment.checkout, methods: ['card', 'applepay'] } } as LinkPayment;
    expect((await linkWallets(deps, stage, cardAndApple, merchant({ acquirerAccount: 'eu-1' }))).offered).toEqual(['applepay']);
    expect(deps.reads).toEqual([]);
  });

  test('an account that cannot be read costs the Google Pay button only', async () => {
    expect(await linkWallets(reader(new Error('throttled')), stage, payment, merchant({ acquirerAccount: 'eu-1' }))).toEqual({ offered: ['applepay'] });
    expect(await linkWallets(reader(null), stage, payment, merchant({ acquirerAccount: 'gone' }))).toEqual({ offered: ['applepay'] });
  });
});

describe('the accounts\' read cache the connector and the page share', () => {
  const account = { accountId: 'eu-1' } as AcquirerAccount;

  test('one read per account per period; fresh reads past it; a failed read is not kept; reads at once share one', async () => {
    const clock = new ManualClock('2030-01-01T00:00:00Z');
    let fail = false;
    const reads: string[] = [];
    const reader = cachedAccountReader({ find: async (id) => (reads.push(id), fail ? Promise.reject(new Error('down')) : id === 'eu-1' ? account : undefined) }, clock, 300_000);
    expect(await Promise.all([reader.find('eu-1'), reader.find('eu-1'), reader.find('eu-1')])).toEqual([account, account, account]);
    expect(reads).toEqual(['eu-1']);
    expect(await reader.find('gone')).toBeUndefined();
    expect(await reader.find('gone')).toBeUndefined();
    expect(reads).toEqual(['eu-1', 'gone']);
    clock.advance(299_999);
    await reader.find('eu-1');
    expect(reads).toHaveLength(2);
    await reader.find('eu-1', true);
    expect(reads).toHaveLength(3);
    clock.advance(300_000);
    fail = true;
    await expect(reader.find('eu-1')).rejects.toThrow('down');
    fail = false;
    expect(await reader.find('eu-1')).toBe(account);
    expect(reads).toHaveLength(5);
  });
});
