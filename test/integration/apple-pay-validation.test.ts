import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { LOCAL_APPLE_PAY_MERCHANT_ID, LOCAL_APPLE_PAY_SECRET_PREFIX } from '../../local/backend';
import { ERRORS } from '../../lambdas/domain/errors';
import { APPLE_PAY_VALIDATION_HOSTS, appleValidationUrl } from '../../lambdas/domain/apple-pay';
import { createCheckout } from '../support/merchant-site';
import { startFakeAppleGateway, type AppleFault, type FakeAppleGateway } from '../support/apple-pay-gateway';
import { serviceForFile } from '../support/suites';

/**
 * Apple Pay merchant validation (docs/wallets.md): the page's Apple Pay sheet posts the validation
 * URL Apple gave it to the link (`applepay_validation_url`); the service calls it only on Apple's
 * documented hosts, over mutual TLS with the merchant identity certificate from Secrets Manager, and
 * answers Apple's merchant session. Here Apple's host is a stand-in on loopback (no network).
 */
/** The deadline of Apple's whole answer here (the stage's is APPLE_PAY_VALIDATION_DEADLINE_MS, 6 s): the bad-day cases wait it out. */
const DEADLINE_MS = 2_500;
const env: Record<string, string> = { APPLE_PAY_VALIDATION_DEADLINE_MS: String(DEADLINE_MS) };
let gateway: FakeAppleGateway;
beforeAll(async () => {
  gateway = await startFakeAppleGateway();
  Object.assign(env, { APPLE_PAY_GATEWAY_ADDRESS: gateway.address, APPLE_PAY_GATEWAY_CA: gateway.caFile });
});
afterAll(() => gateway?.close());

const WALLETS = { wallets: ['applepay', 'googlepay'] as ('applepay' | 'googlepay')[], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' };
const { service, merchants: [shop, ownIdShop, noWalletShop, strangerShop] } = serviceForFile({
  env,
  merchants: [
    { name: 'Validated Shop', settings: WALLETS },
    { name: 'Own Id Shop', settings: { ...WALLETS, applePayMerchantId: 'merchant.com.example.own' } },
    { name: 'Card Only Shop' },
    { name: 'Stranger Shop', settings: { ...WALLETS, applePayMerchantId: 'merchant.com.example.stranger' } },
  ],
});

const putIdentity = (merchantIdentifier: string, identity: object) =>
  service.deps.secretsClient.send(new CreateSecretCommand({ Name: `${LOCAL_APPLE_PAY_SECRET_PREFIX}${merchantIdentifier}`, SecretString: JSON.stringify(identity) }));

beforeAll(async () => {
  await putIdentity(LOCAL_APPLE_PAY_MERCHANT_ID, gateway.identity(LOCAL_APPLE_PAY_MERCHANT_ID));
  await putIdentity('merchant.com.example.own', gateway.identity('merchant.com.example.own'));
  // A certificate Apple (the stand-in) never issued: the TLS handshake refuses it.
  await putIdentity('merchant.com.example.stranger', gateway.strangerIdentity);
});

const APPLE_URL = 'https://apple-pay-gateway-cert.apple.com/paymentservices/startSession';

async function validate(merchant = shop, url: string = APPLE_URL, session: Record<string, unknown> = {}) {
  const link = await createCheckout(service, merchant, session);
  const path = new URL(link.url).pathname;
  return service.request<Record<string, unknown>>({ method: 'POST', path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `applepay_validation_url=${encodeURIComponent(url)}` });
}

describe('the validation URL', () => {
  test.each([
    ['http, not https', 'http://apple-pay-gateway.apple.com/paymentservices/startSession'],
    ['another host', 'https://evil.example/paymentservices/startSession'],
    ['a host that only starts like Apple\'s', 'https://apple-pay-gateway.apple.com.evil.example/x'],
    ['a host that only ends like Apple\'s', 'https://evil-apple-pay-gateway.apple.com/x'],
    ['another port', 'https://apple-pay-gateway.apple.com:8443/x'],
    ['credentials in it', 'https://user:pass@apple-pay-gateway.apple.com/x'],
    ['an address', 'https://17.32.139.128/x'],
    ['not a URL', 'apple-pay-gateway.apple.com'],
  ])('is refused: %s', (_what, url) => {
    expect(appleValidationUrl(url)).toBeUndefined();
  });

  test('is taken on each of Apple\'s documented hosts', () => {
    expect(APPLE_PAY_VALIDATION_HOSTS.filter((host) => !appleValidationUrl(`https://${host}/paymentservices/paymentSession`))).toEqual([]);
  });
});

describe('POST /auth/{token} with applepay_validation_url', () => {
  it('calls Apple\'s host with the stage\'s merchant identity certificate and answers Apple\'s merchant session', async () => {
    const before = gateway.seen.length;
    const answer = await validate();
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ merchantSessionIdentifier: expect.any(String), displayName: 'Validated Shop', domainName: '127.0.0.1' });
    expect(gateway.seen.slice(before)).toEqual([
      {
        path: '/paymentservices/startSession',
        host: 'apple-pay-gateway-cert.apple.com',
        clientCertificate: LOCAL_APPLE_PAY_MERCHANT_ID,
        body: { merchantIdentifier: LOCAL_APPLE_PAY_MERCHANT_ID, displayName: 'Validated Shop', initiative: 'web', initiativeContext: '127.0.0.1' },
      },
    ]);
  });

  it('a merchant with an Apple Pay merchant identifier of its own validates with its own certificate', async () => {
    const before = gateway.seen.length;
    expect((await validate(ownIdShop)).status).toBe(200);
    expect(gateway.seen.slice(before).map((s) => [s.clientCertificate, s.body.merchantIdentifier])).toEqual([['merchant.com.example.own', 'merchant.com.example.own']]);
  });

  it.each([
    ['a host that is not Apple\'s', () => validate(shop, 'https://evil.example/paymentservices/startSession')],
    ['a merchant whose wallets are off', () => validate(noWalletShop)],
    ['a session that does not offer Apple Pay', () => validate(shop, APPLE_URL, { methods: ['card', 'googlepay'] })],
    ['a session that keeps the card (recurring_init)', () => validate(shop, APPLE_URL, { recurring_init: true })],
  ])('is refused with 400 and nothing is sent anywhere: %s', async (_what, run) => {
    const before = gateway.seen.length;
    const answer = await run();
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error_code: ERRORS.APPLE_PAY_VALIDATION_REFUSED.code, error_message: ERRORS.APPLE_PAY_VALIDATION_REFUSED.message });
    expect(gateway.seen.length).toBe(before);
  });

  it('Apple refusing, or a certificate Apple does not know, answers 502: the card form stays', async () => {
    expect(await validate(strangerShop)).toMatchObject({ status: 502, json: { error_code: ERRORS.APPLE_PAY_VALIDATION_FAILED.code } });
    gateway.answerWith = 400;
    try {
      expect(await validate()).toMatchObject({ status: 502, json: { error_code: ERRORS.APPLE_PAY_VALIDATION_FAILED.code } });
    } finally {
      gateway.answerWith = 200;
    }
  });

  it('the certificate and key are in no answer and no table item', async () => {
    const identity = gateway.identity(LOCAL_APPLE_PAY_MERCHANT_ID);
    const answer = await validate();
    const key = identity.privateKey.split('\n')[1]!;
    expect(answer.text).not.toContain(key);
    expect(JSON.stringify(await service.tableItems())).not.toContain(key);
  });
});

describe('Apple on a bad day: every failure is the page\'s 502 inside the deadline, and the next customer is served', () => {
  test.each<[string, AppleFault]>([
    ['never answers', { kind: 'hang' }],
    ['closes the connection without an answer', { kind: 'drop' }],
    ['resets the connection half-way through its answer', { kind: 'reset-midway' }],
    ['trickles its answer a byte every 100 ms (never idle long, far too late in all)', { kind: 'drip', everyMs: 100 }],
    ['answers 200 with an HTML error page', { kind: 'not-json' }],
    ['answers 200 with 200 KB', { kind: 'oversize' }],
  ])('%s', async (_what, fault) => {
    gateway.fault = fault;
    const started = performance.now();
    let answer: Awaited<ReturnType<typeof validate>>;
    try {
      answer = await validate();
    } finally {
      gateway.fault = undefined;
    }
    const took = performance.now() - started;
    expect(answer).toMatchObject({ status: 502, json: { error_code: ERRORS.APPLE_PAY_VALIDATION_FAILED.code, error_message: ERRORS.APPLE_PAY_VALIDATION_FAILED.message } });
    // The deadline bounds the whole exchange (a second of margin for a busy machine), far inside the pay route's function time.
    expect(took).toBeLessThan(DEADLINE_MS + 1_000);
    expect(await validate()).toMatchObject({ status: 200, json: { merchantSessionIdentifier: expect.any(String) } });
  });

  it('a slow answer inside the deadline is still taken', async () => {
    gateway.fault = { kind: 'slow', ms: 600 };
    try {
      expect(await validate()).toMatchObject({ status: 200, json: { merchantSessionIdentifier: expect.any(String) } });
    } finally {
      gateway.fault = undefined;
    }
  });
});
