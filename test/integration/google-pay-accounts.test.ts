import { ManualClock } from '../../lambdas/ports/clock';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import type { AccountView } from '../../lambdas/protocol/admin/acquirer-accounts';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { executeAccountCommand, parseAccountCommand } from '../../local/account-command';
import { adminApi, adminRequest, seedOperator, signIn, type AdminApi } from '../support/admin';
import { openSession, statusOf, submitPage, type Session } from '../support/payments';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { startTestService, type TestService } from '../support/service';
import { insideVoidWindow } from '../support/void-window';

/**
 * Google Pay's tokenization parameters per acquirer account (docs/wallets.md, "Google Pay"), on an
 * S2S CARD stage with the fake gateway and the DynamoDB engine: admins set them on an account
 * (admin API and CLI, checked field by field, audited, cleared with null); the page of a merchant
 * linked to the account asks Google Pay for a token with the account's gateway and gateway merchant
 * id, a merchant on the stage's account with the stage's gateway and its own id; without complete
 * parameters there is no button and a Google Pay payment is refused before anything reaches the
 * gateway. The page reads the account through the cache the connector shares: no read per request.
 */
jest.setTimeout(60_000);

const TTL_SECONDS = 300;
const clock = new ManualClock(insideVoidWindow());
let gateway: FakeGateway;
let service: TestService;
let admin: AdminApi;
let token: string;
let account: { clientKey: string; password: string };

beforeAll(async () => {
  gateway = await startFakeGateway();
  account = gateway.addAccount();
  service = await startTestService({
    clock,
    env: {
      ACQUIRER: 's2s-card', S2S_CARD_URL: gateway.url, S2S_CARD_CLIENT_KEY: gateway.clientKey, S2S_CARD_PASSWORD: gateway.password, S2S_CARD_TIMEOUT_MS: '2000', S2S_CARD_FOLLOW_UP_WAIT_MS: '0',
      // The stage's own account at Google Pay; the accounts below have their own.
      GOOGLE_PAY_GATEWAY: 'stagegateway',
      SECRET_CACHE_TTL_SECONDS: String(TTL_SECONDS),
    },
  });
  gateway.notifyUrl = `${service.baseUrl}/acquirer/s2s-card/notify`;
  token = await signIn(service, await seedOperator(service));
  admin = adminApi(service, token);
});
afterAll(async () => {
  await gateway?.close();
  await service?.close();
});

type Answer = AccountView & { errors?: { path?: string; error_message: string }[] };
const createAccount = (body: Record<string, unknown>) => adminRequest<Answer>(service, 'POST', '/admin/api/acquirer-accounts', token, body);
const changeAccount = (id: string, body: Record<string, unknown>) => adminRequest<Answer>(service, 'PUT', `/admin/api/acquirer-accounts/${id}`, token, body);
const accountFields = (id: string, extra: Record<string, unknown> = {}) => ({ account_id: id, gateway_url: gateway.url, client_key: account.clientKey, password: account.password, currencies: 'USD', ...extra });
const WALLETS = { wallets: ['applepay', 'googlepay'] as ('applepay' | 'googlepay')[] };

/** GETs within a test: the account items read (GetItem of ACCOUNT#…), counted on the service's client. */
let accountReads = 0;
beforeAll(() => {
  type Step = { add(mw: (next: (args: { input: Record<string, unknown> }) => Promise<unknown>, ctx: { commandName?: string }) => (args: { input: Record<string, unknown> }) => Promise<unknown>, options: object): void };
  (service.deps.db.middlewareStack as unknown as Step).add(
    (next, context) => async (args) => {
      // The document client's command (plain key) or the client's own (marshalled), whichever this stack sees.
      const pk = (args.input.Key as { pk?: unknown } | undefined)?.pk;
      const key = typeof pk === 'string' ? pk : (pk as { S?: string } | undefined)?.S;
      if (/^Get(Item)?Command$/.test(String(context.commandName)) && key?.startsWith('ACCOUNT#')) accountReads++;
      return next(args);
    },
    { step: 'initialize', name: 'count-account-reads' },
  );
});

/** The page's Google Pay configuration (the JSON the server put in the page), or undefined when the page offers no Google Pay. */
async function pageGooglePay(session: Session): Promise<{ environment: string; tokenization: unknown } | undefined> {
  const page = await service.request({ method: 'GET', path: session.path });
  expect(page.status).toBe(200);
  const json = /<script type="application\/json" id="wallet-config">([^<]*)<\/script>/.exec(page.text)?.[1];
  const config = json ? (JSON.parse(json) as { googlepay?: { environment: string; request: { allowedPaymentMethods: { tokenizationSpecification: { parameters: unknown } }[] } } }) : {};
  if (!config.googlepay) {
    expect(page.text).not.toContain('id="googlepay-button"');
    return undefined;
  }
  expect(page.text).toContain('id="googlepay-button"');
  return { environment: config.googlepay.environment, tokenization: config.googlepay.request.allowedPaymentMethods[0]!.tokenizationSpecification.parameters };
}

/** The page's Google Pay submission (the wallet form's fields), with the sandbox's test token the fake gateway reads. */
const payWithGooglePay = (session: Session) => {
  const shown = { wallet: 'googlepay', network: 'VISA', last4: '1111' };
  const paymentToken = sandboxWalletToken({ ...shown, expiry: '01/38', authMethod: 'CRYPTOGRAM_3DS' });
  return service.request({
    path: session.path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...shown, payment_token: paymentToken, auth_method: 'CRYPTOGRAM_3DS' }).toString(),
  });
};

const sentToGateway = (paymentId: string) => gateway.requests.filter((r) => r.fields.order_id?.startsWith(`${paymentId}.`));

describe('an account\'s Google Pay parameters, as admins set them', () => {
  it('are created, shown, changed and cleared with null; every change is audited with the values before and after', async () => {
    const made = await createAccount(accountFields('gp-admin', { google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'ACME.eu-1' }));
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'ACME.eu-1' });
    const listed = await adminRequest<{ accounts: AccountView[] }>(service, 'GET', '/admin/api/acquirer-accounts', token);
    expect(listed.json.accounts.find((a) => a.account_id === 'gp-admin')).toMatchObject({ google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'ACME.eu-1' });

    const changed = await changeAccount('gp-admin', { google_pay_gateway_merchant_id: 'ACME.eu-2' });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'ACME.eu-2' });
    const cleared = await changeAccount('gp-admin', { google_pay_gateway: null, google_pay_gateway_merchant_id: '' });
    expect(cleared.status).toBe(200);
    expect(cleared.json).not.toHaveProperty('google_pay_gateway');
    expect(cleared.json).not.toHaveProperty('google_pay_gateway_merchant_id');
    const stored = (await service.deps.accounts.find('gp-admin'))!;
    expect(stored).not.toHaveProperty('googlePayGateway');
    expect(stored).not.toHaveProperty('googlePayGatewayMerchantId');

    const audit = (await admin.audit()).json.entries.filter((e) => e.target === 'account:gp-admin');
    expect(audit.map((e) => [e.action, e.before, e.after])).toEqual([
      ['account.update', expect.objectContaining({ google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'ACME.eu-2' }), expect.not.objectContaining({ google_pay_gateway: expect.anything() })],
      ['account.update', expect.objectContaining({ google_pay_gateway_merchant_id: 'ACME.eu-1' }), expect.objectContaining({ google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'ACME.eu-2' })],
      ['account.create', undefined, expect.objectContaining({ google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'ACME.eu-1', password: 'set' })],
    ]);
  });

  it('a wrong value is refused with the error envelope naming its field, and nothing changes', async () => {
    const bad = await createAccount(accountFields('gp-bad', { google_pay_gateway: 'Not A Gateway', google_pay_gateway_merchant_id: 'has space' }));
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error_code: 0, error_message: 'Request data is invalid.' });
    expect(bad.json.errors).toEqual([
      { error_code: 100000, error_message: "google_pay_gateway: Give the gateway's id at Google Pay (1 to 60 lower-case letters, digits, _ and -)." },
      { error_code: 100000, error_message: "google_pay_gateway_merchant_id: Give the account's id at its Google Pay gateway (1 to 100 letters, digits and . _ : -)." },
    ]);
    expect(await service.deps.accounts.find('gp-bad')).toBeUndefined();

    expect((await createAccount(accountFields('gp-kept', { google_pay_gateway: 'accountgateway' }))).status).toBe(201);
    const refused = await changeAccount('gp-kept', { google_pay_gateway: 'gw/1', google_pay_gateway_merchant_id: 42 });
    expect(refused.status).toBe(400);
    expect(refused.json.errors?.map((e) => e.error_message)).toEqual(['google_pay_gateway_merchant_id: This value is not valid.']);
    const again = await changeAccount('gp-kept', { google_pay_gateway: 'gw/1' });
    expect(again.json.errors?.map((e) => e.error_message)).toEqual(["google_pay_gateway: Give the gateway's id at Google Pay (1 to 60 lower-case letters, digits, _ and -)."]);
    expect((await service.deps.accounts.find('gp-kept'))?.googlePayGateway).toBe('accountgateway');
  });

  it('the CLI sets and clears them through the same use case, audited as cli:<login>', async () => {
    const create = parseAccountCommand('account-create', ['gp-cli'], { 'gateway-url': gateway.url, 'client-key': 'cli-key', currencies: 'USD', 'google-pay-gateway': 'accountgateway', 'google-pay-gateway-merchant-id': 'CLI-1' }, { ACQUIRER_ACCOUNT_PASSWORD: 'cli-password-123' });
    expect(JSON.parse(await executeAccountCommand(create, service.deps, 'cli:tester'))).toMatchObject({ google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'CLI-1' });
    const off = parseAccountCommand('account-set', ['gp-cli'], { 'google-pay-gateway-merchant-id': 'off' }, {});
    const changed = JSON.parse(await executeAccountCommand(off, service.deps, 'cli:tester')) as AccountView;
    expect(changed).toMatchObject({ google_pay_gateway: 'accountgateway' });
    expect(changed).not.toHaveProperty('google_pay_gateway_merchant_id');
    const refused = parseAccountCommand('account-set', ['gp-cli'], { 'google-pay-gateway': 'NO' }, {});
    await expect(executeAccountCommand(refused, service.deps, 'cli:tester')).rejects.toThrow("google_pay_gateway: Give the gateway's id at Google Pay");
    const audit = (await admin.audit()).json.entries.filter((e) => e.target === 'account:gp-cli');
    expect(audit.map((e) => [e.actor, e.action, e.after?.google_pay_gateway_merchant_id])).toEqual([['cli:tester', 'account.update', undefined], ['cli:tester', 'account.create', 'CLI-1']]);
  });
});

describe('the page\'s Google Pay request, and who may pay with Google Pay', () => {
  let linked: MerchantCredentials;
  let incomplete: MerchantCredentials;
  let onStage: MerchantCredentials;
  let onStageWithoutId: MerchantCredentials;

  beforeAll(async () => {
    expect((await createAccount(accountFields('gp-complete', { google_pay_gateway: 'accountgateway', google_pay_gateway_merchant_id: 'account-merchant-1' }))).status).toBe(201);
    expect((await createAccount(accountFields('gp-incomplete', { google_pay_gateway: 'accountgateway' }))).status).toBe(201);
    // Every merchant has an id of its own: on an account of its own it is not used.
    linked = await service.createMerchant({ name: 'Linked Shop', settings: { ...WALLETS, acquirerAccount: 'gp-complete', googlePayGatewayMerchantId: 'own-id' } });
    incomplete = await service.createMerchant({ name: 'Incomplete Shop', settings: { ...WALLETS, acquirerAccount: 'gp-incomplete', googlePayGatewayMerchantId: 'own-id' } });
    onStage = await service.createMerchant({ name: 'Stage Shop', settings: { ...WALLETS, googlePayGatewayMerchantId: 'own-id' } });
    onStageWithoutId = await service.createMerchant({ name: 'Stage Shop Without Id', settings: WALLETS });
  });

  it('a merchant linked to an account: the account\'s gateway and gateway merchant id, TEST off prod; the token is paid through the account', async () => {
    const session = await openSession(service, linked);
    expect(await pageGooglePay(session)).toEqual({ environment: 'TEST', tokenization: { gateway: 'accountgateway', gatewayMerchantId: 'account-merchant-1' } });
    const paid = await payWithGooglePay(session);
    expect(paid.status).toBe(303);
    expect((await statusOf(service, linked, session.paymentId)).status).toBe('settled');
    expect(gateway.accountOf(`${session.paymentId}.1`)).toBe(account.clientKey);
    expect(sentToGateway(session.paymentId)[0]?.fields).toMatchObject({ client_key: account.clientKey, digital_wallet: 'googlepay' });
  });

  it('a merchant on the stage\'s account: the stage\'s gateway and its own gateway merchant id', async () => {
    const session = await openSession(service, onStage);
    expect(await pageGooglePay(session)).toEqual({ environment: 'TEST', tokenization: { gateway: 'stagegateway', gatewayMerchantId: 'own-id' } });
    expect((await payWithGooglePay(session)).status).toBe(303);
    expect(gateway.accountOf(`${session.paymentId}.1`)).toBe(gateway.clientKey);
  });

  it.each([
    ['linked to an account without a gateway merchant id', () => incomplete],
    ['on the stage\'s account without an id of its own', () => onStageWithoutId],
  ])('a merchant %s: no Google Pay button (Apple Pay and the card form stay), and a Google Pay payment is refused before the gateway', async (_name, merchant) => {
    const session = await openSession(service, merchant());
    expect(await pageGooglePay(session)).toBeUndefined();
    const page = await service.request({ method: 'GET', path: session.path });
    expect(page.text).toContain('id="applepay-button"');
    expect(page.text).toContain('id="pay-form"');
    const refused = await payWithGooglePay(session);
    expect(refused.status).toBe(400);
    expect(sentToGateway(session.paymentId)).toEqual([]);
    expect((await service.deps.store.findPayment(session.paymentId))?.attempt).toBeUndefined();
    // The card form still pays.
    expect((await submitPage(service, session, { card: '01/38' })).status).toBe(303);
    expect((await statusOf(service, merchant(), session.paymentId)).status).toBe('settled');
  });

  it('the account is read once per instance and cache period, by the page and the connector together; a change is seen after the period', async () => {
    const merchant = await service.createMerchant({ name: 'Cached Shop', settings: { ...WALLETS, acquirerAccount: 'gp-complete' } });
    // Past the period of the reads before: the next page view reads the account again.
    clock.advance((TTL_SECONDS + 1) * 1000);
    accountReads = 0;
    const sessions = [await openSession(service, merchant), await openSession(service, merchant), await openSession(service, merchant)];
    for (const s of sessions) expect(await pageGooglePay(s)).toMatchObject({ tokenization: { gatewayMerchantId: 'account-merchant-1' } });
    // A card and a Google Pay payment: the connector finds the account the page read.
    expect((await submitPage(service, sessions[0]!, { card: '01/38' })).status).toBe(303);
    expect((await payWithGooglePay(sessions[1]!)).status).toBe(303);
    expect(gateway.accountOf(`${sessions[0]!.paymentId}.1`)).toBe(account.clientKey);
    expect(accountReads).toBe(1);

    // An admin's change (an uncached read and a guarded write of the admin route), then the page within and past the period.
    expect((await changeAccount('gp-complete', { google_pay_gateway_merchant_id: 'account-merchant-2' })).status).toBe(200);
    expect(await pageGooglePay(sessions[2]!)).toMatchObject({ tokenization: { gatewayMerchantId: 'account-merchant-1' } });
    clock.advance((TTL_SECONDS + 1) * 1000);
    const later = await openSession(service, merchant);
    expect(await pageGooglePay(later)).toMatchObject({ tokenization: { gateway: 'accountgateway', gatewayMerchantId: 'account-merchant-2' } });
  });

  it('a merchant whose page offers no Google Pay costs no account read', async () => {
    const merchant = await service.createMerchant({ name: 'Apple Only Shop', settings: { wallets: ['applepay'], acquirerAccount: 'gp-incomplete' } });
    clock.advance((TTL_SECONDS + 1) * 1000);
    accountReads = 0;
    const session = await openSession(service, merchant);
    expect(await pageGooglePay(session)).toBeUndefined();
    expect(accountReads).toBe(0);
  });
});
