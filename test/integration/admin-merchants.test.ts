import { randomUUID } from 'node:crypto';
import { ERRORS } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import { adminApi, adminRequest, seedOperator, signIn, type AdminApi } from '../support/admin';
import { invalidRequest, paidPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Merchants created, and their signing password and webhook secret rotated, by an admin through
 * the admin API (the portal's buttons), over real HTTP: the credentials are in the answer only,
 * work at once, and every change is in the audit log without them.
 */
const T0 = new Date('2030-10-01T10:00:00.000Z');
const clock = new ManualClock(T0);
let service: TestService;
let admin: AdminApi;
let adminToken: string;


beforeAll(async () => {
  service = await startTestService({ clock });
  adminToken = await signIn(service, await seedOperator(service, 'ada', 'ada-long-password', 'admin'));
  admin = adminApi(service, adminToken);
});
afterAll(() => service.close());
beforeEach(() => clock.set(T0));

describe('POST /admin/api/merchants', () => {
  it('creates a merchant with its settings: 201 with key, password and webhook secret, no-store; they work at once', async () => {
    const res = await admin.createMerchant({ name: '  Fresh Shop ', dms: true, auto_capture_delay_minutes: 30 });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const { merchant_key: key, password, webhook_secret: secret } = res.json;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(password).toMatch(/^[0-9a-f]{32}$/);
    expect(secret).toEqual(expect.any(String));
    expect(await service.deps.merchants.find(key)).toMatchObject({ name: 'Fresh Shop', dms: true, autoCaptureDelayMinutes: 30 });
    expect((await paidPayment(service, { merchant_key: key, password })).status.status).toBe('pending');
    expect(await service.deps.secrets.webhookSecretsOf(key, clock.now())).toEqual([secret]);
  });

  it('takes a merchant key of its own, and refuses it when taken, without touching the merchant that has it', async () => {
    const first = await admin.createMerchant({ name: 'Keyed Shop', merchant_key: 'keyed-shop-1' });
    expect([first.status, first.json.merchant_key]).toEqual([201, 'keyed-shop-1']);
    const again = await admin.createMerchant({ name: 'Impostor', merchant_key: 'keyed-shop-1' });
    expect([again.status, again.json]).toEqual([400, invalidRequest('merchant_key: merchant keyed-shop-1 already exists')]);
    expect((await service.deps.merchants.find('keyed-shop-1'))?.name).toBe('Keyed Shop');
    expect(await service.deps.secrets.passwordOf('keyed-shop-1')).toBe(first.json.password);
  });

  it('twenty admins creating the same key at once: one merchant, one password, the others refused', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => admin.createMerchant({ name: `Racer ${i}`, merchant_key: 'raced-key' })));
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    expect(answers.filter((a) => a.status === 400).map((a) => a.json)).toEqual(Array(19).fill(invalidRequest('merchant_key: merchant raced-key already exists')));
    expect(await service.deps.secrets.passwordOf('raced-key')).toBe(created[0]!.json.password);
    expect((await admin.merchant('raced-key')).json.audit.filter((e) => e.action === 'merchant.create')).toHaveLength(1);
  });

  it.each([
    ['no name', { dms: true }, 'name: This value should not be blank.'],
    ['a blank name', { name: '   ' }, 'name: This value should not be blank.'],
    ['a key with a slash', { name: 'x', merchant_key: 'a/b' }, 'merchant_key: merchant key must be 1-64 letters, digits or hyphens'],
    ['a key that is not text', { name: 'x', merchant_key: 7 }, 'merchant_key: This value is not valid.'],
    ['an unknown payment method', { name: 'x', methods: ['cheque'] }, 'settings: methods must be a list without repeats of: card (unknown: cheque)'],
    ['a colour too light', { name: 'x', branding: { primary_color: '#ffffff' } }, expect.stringMatching(/^settings: brand color #ffffff is too light/)],
  ])('refuses %s with 400 and creates nothing', async (_case, body, message) => {
    const before = (await service.deps.merchants.list(200)).length;
    const res = await admin.createMerchant(body);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(invalidRequest(message));
    expect((await service.deps.merchants.list(200)).length).toBe(before);
  });

  it('refuses a cross-origin request before anything is created', async () => {
    const res = await service.request({
      method: 'POST',
      path: '/admin/api/merchants',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ name: 'Forged Shop' }),
    });
    expect(res.status).toBe(401);
    expect((await service.deps.merchants.list(200)).map((m) => m.name)).not.toContain('Forged Shop');
  });
});

describe('rotating credentials', () => {
  it('a new signing password works at once; the answer is the only place it is shown', async () => {
    const shop = await service.createMerchant({ name: 'Password Shop' });
    const res = await admin.rotatePassword(shop.merchant_key);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json).toEqual({ merchant_key: shop.merchant_key, password: expect.stringMatching(/^[0-9a-f]{32}$/), previous_valid_until: new Date(T0.getTime() + 24 * 3600_000).toISOString() });
    expect(res.json.password).not.toBe(shop.password);
    expect((await paidPayment(service, { merchant_key: shop.merchant_key, password: res.json.password })).status.status).toBe('settled');
  });

  it('the password a rotation replaces is still accepted for 24 hours, in every instance, then refused; a third password ends the first at once', async () => {
    const shop = await service.createMerchant({ name: 'Overlap Shop' });
    // This instance has read (and cached) the current password before the rotation.
    expect((await paidPayment(service, shop)).status.status).toBe('settled');
    const next = (await admin.rotatePassword(shop.merchant_key)).json.password as string;
    const status = (password: string) => service.signedPost('/api/v1/payment/status', { merchant_key: shop.merchant_key, payment_id: randomUUID() }, password);
    // Both are accepted (404: the request was verified, the payment is not there).
    expect((await status(shop.password)).status).toBe(404);
    expect((await status(next)).status).toBe(404);
    // An instance that read the secret after the rotation (a fresh cache) accepts the old one too.
    const { CachedMerchantSecrets, SecretsManagerMerchantSecrets, createSecretsClient } = await import('../../lambdas/adapters/secrets-manager/merchant-secrets');
    const { verifySignature } = await import('../../lambdas/middleware/signature');
    const fresh = new CachedMerchantSecrets(new SecretsManagerMerchantSecrets(createSecretsClient(service.backend.secretsEndpoint), service.deps.config.MERCHANT_SECRET_PREFIX), clock, 300_000);
    const { signFields } = await import('../../lambdas/domain/hash');
    await expect(verifySignature(fresh, shop.merchant_key, signFields(['x'], shop.password), [['x']], clock.now())).resolves.toBeUndefined();
    // A day later the old one is refused, exactly as a wrong hash is.
    clock.advance(24 * 3600_000 + 1000);
    const late = await status(shop.password);
    expect(late.status).toBe(400);
    expect(late.json).toMatchObject({ errors: [{ error_message: 'hash: Hash is not valid.' }] });
    expect((await status(next)).status).toBe(404);
    // Rotating again keeps only the one just replaced.
    const third = (await admin.rotatePassword(shop.merchant_key)).json.password as string;
    expect((await status(next)).status).toBe(404);
    expect((await status(third)).status).toBe(404);
    expect((await status(shop.password)).status).toBe(400);
  });

  it('a new webhook secret signs at once, the previous one beside it for 24 hours', async () => {
    const shop = await service.createMerchant({ name: 'Secret Shop' });
    const [before] = await service.deps.secrets.webhookSecretsOf(shop.merchant_key, clock.now());
    const res = await admin.rotateWebhookSecret(shop.merchant_key);
    expect(res.json).toEqual({ merchant_key: shop.merchant_key, webhook_secret: expect.any(String), previous_valid_until: '2030-10-02T10:00:00.000Z' });
    expect(await service.deps.secrets.webhookSecretsOf(shop.merchant_key, clock.now())).toEqual([res.json.webhook_secret, before]);
    clock.set('2030-10-02T10:00:01.000Z');
    expect(await service.deps.secrets.webhookSecretsOf(shop.merchant_key, clock.now())).toEqual([res.json.webhook_secret]);
  });

  it('an unknown merchant is 404 (the catalog envelope), and nothing is stored for it', async () => {
    for (const res of [await admin.rotatePassword('no-such-merchant'), await admin.rotateWebhookSecret('no-such-merchant')]) {
      expect([res.status, res.json]).toEqual([404, { error_code: ERRORS.MERCHANT_NOT_FOUND.code, error_message: ERRORS.MERCHANT_NOT_FOUND.message, errors: [] }]);
    }
    expect(await service.deps.secrets.passwordOf('no-such-merchant')).toBeUndefined();
  });

  it('needs a JSON body from the same origin (no cross-site rotation)', async () => {
    const shop = await service.createMerchant({ name: 'Guarded Shop' });
    const res = await adminRequest(service, 'POST', `/admin/api/merchants/${shop.merchant_key}/password`, adminToken);
    expect(res.status).toBe(400);
    expect(await service.deps.secrets.passwordOf(shop.merchant_key)).toBe(shop.password);
  });
});

describe('e-mail receipts (ADR 0037)', () => {
  it('are off for a new merchant, turned on and off by the settings route, each change audited; not-a-boolean is refused', async () => {
    const key = (await admin.createMerchant({ name: 'Receipting Shop' })).json.merchant_key;
    expect((await admin.merchant(key)).json.settings.emailReceipts).toBeUndefined();
    const on = await admin.changeMerchant(key, { email_receipts: true });
    expect([on.status, on.json.settings.emailReceipts]).toEqual([200, true]);
    expect((await service.deps.merchants.find(key))?.emailReceipts).toBe(true);
    clock.set('2030-10-01T10:05:00.000Z');
    expect((await admin.changeMerchant(key, { email_receipts: false })).json.settings.emailReceipts).toBe(false);
    const refused = await admin.changeMerchant(key, { email_receipts: 'yes' });
    expect([refused.status, refused.json]).toEqual([400, invalidRequest('email_receipts: This value is not valid.')]);
    const changes = (await admin.merchant(key)).json.audit.filter((e) => e.action === 'merchant.settings');
    expect(changes.map((e) => [(e.before as Record<string, unknown>).emailReceipts, (e.after as Record<string, unknown>).emailReceipts])).toEqual([
      [true, false],
      [undefined, true],
    ]);
  });
});

describe('the audit log', () => {
  it('records each creation and rotation by the admin, with the settings but never a credential', async () => {
    const created = await admin.createMerchant({ name: 'Audited Shop' });
    const key = created.json.merchant_key;
    clock.set('2030-10-01T10:01:00.000Z');
    const password = (await admin.rotatePassword(key)).json.password;
    clock.set('2030-10-01T10:02:00.000Z');
    const secret = (await admin.rotateWebhookSecret(key)).json.webhook_secret;
    const entries = (await admin.merchant(key)).json.audit;
    expect(entries.map((e) => [e.actor, e.actorRole, e.action, e.target, e.outcome])).toEqual([
      ['ada', 'admin', 'merchant.rotate-webhook-secret', `merchant:${key}`, 'done'],
      ['ada', 'admin', 'merchant.rotate-password', `merchant:${key}`, 'done'],
      ['ada', 'admin', 'merchant.create', `merchant:${key}`, 'done'],
    ]);
    expect(entries[2]!.after).toMatchObject({ name: 'Audited Shop' });
    const logged = JSON.stringify(entries);
    for (const value of [created.json.password, created.json.webhook_secret, password, secret]) expect(logged).not.toContain(value);
  });
});
