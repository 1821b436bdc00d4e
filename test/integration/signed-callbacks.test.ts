import { verifyCallbackHash } from '../../lambdas/domain/callback';
import { verifySignatureHeader, WEBHOOK_ROTATION_GRACE_MS } from '../../lambdas/domain/webhook-signature';
import { ManualClock } from '../../lambdas/ports/clock';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { rotateWebhookSecret, webhookSecretOf } from '../../lambdas/use-cases/manage-merchants';
import { CachedMerchantSecrets, SecretsManagerMerchantSecrets } from '../../lambdas/adapters/secrets-manager/merchant-secrets';
import { receivingMerchants } from '../support/callback-receiver';
import { closePage, openSession, submitPage } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Forged outcomes: the legacy callback hash covers the order, not the outcome, and the customer
 * holds it (return parameters). Every callback now also carries X-Checkout-Signature, an HMAC of
 * the exact body with the merchant's webhook secret, which the customer never sees.
 */
const START = new Date('2030-06-01T10:00:00Z');
let service: TestService;
const clock = new ManualClock(START);
const merchants = receivingMerchants(() => service, 'Signed Shop', { returnParams: true, maxDeclines: 1 });
const merchant = () => merchants.merchant();

beforeAll(async () => {
  service = await startTestService({ clock });
});
afterAll(async () => {
  await merchants.close();
  await service.close();
});

it('a new merchant gets a webhook secret, and every callback is signed with it over the exact body', async () => {
  const { shop, receiver } = await merchant();
  expect(shop.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
  const s = await openSession(service, shop);
  await submitPage(service, s, { card: '01/38' });
  await runCallbackJob(service.deps);
  const [cb] = await receiver.waitFor(1);
  expect(cb!.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(verifySignatureHeader(cb!.signature, cb!.raw, shop.webhook_secret!, clock.now())).toEqual({ ok: true });
  expect(verifySignatureHeader(cb!.signature, cb!.raw, 'whsec_someone-else', clock.now())).toEqual({ ok: false, why: 'mismatch' });
  // The secret is never in anything a browser or the merchant API gets.
  const page = await service.request({ path: s.path });
  expect(page.text).not.toContain(shop.webhook_secret);
});

it('the customer of a declined payment can forge the legacy hash of a "success", not its signature', async () => {
  const { shop, receiver } = await merchant();
  const s = await openSession(service, shop);
  const declined = await submitPage(service, s, { card: '02/38' });
  const held = new URL(String(declined.headers.location ?? (await closePage(service, s)).headers.location)).searchParams.get('hash');
  await runCallbackJob(service.deps);
  const [genuine] = await receiver.waitFor(1);
  expect(genuine!.fields).toMatchObject({ type: 'sale', status: 'fail', order_status: 'decline', hash: held });

  const { reason: _reason, ...rest } = genuine!.fields;
  const forged = new URLSearchParams({ ...rest, order_status: 'settled', status: 'success' }).toString();
  expect(verifyCallbackHash(Object.fromEntries(new URLSearchParams(forged)), shop.password)).toBe(true);
  expect(verifySignatureHeader(genuine!.signature, forged, shop.webhook_secret!, clock.now()).ok).toBe(false);
  expect(verifySignatureHeader(undefined, forged, shop.webhook_secret!, clock.now())).toEqual({ ok: false, why: 'missing' });
});

it('a replayed callback is refused after five minutes', async () => {
  const { shop, receiver } = await merchant();
  const s = await openSession(service, shop);
  await submitPage(service, s, { card: '01/38' });
  await runCallbackJob(service.deps);
  const [cb] = await receiver.waitFor(1);
  expect(verifySignatureHeader(cb!.signature, cb!.raw, shop.webhook_secret!, new Date(clock.now().getTime() + 301_000))).toEqual({ ok: false, why: 'stale' });
});

it('rotation: the new secret signs at once, the previous one beside it for a day, then no more', async () => {
  const { shop, receiver } = await merchant();
  const rotated = await rotateWebhookSecret(service.deps, shop.merchant_key);
  expect(rotated.webhook_secret).not.toBe(shop.webhook_secret);
  expect(rotated.previous_valid_until).toBe(new Date(START.getTime() + WEBHOOK_ROTATION_GRACE_MS).toISOString());
  await expect(webhookSecretOf(service.deps, shop.merchant_key)).resolves.toBe(rotated.webhook_secret);
  // The password is untouched by a rotation.
  await expect(service.deps.secrets.passwordOf(shop.merchant_key)).resolves.toBe(shop.password);

  const first = await openSession(service, shop);
  await submitPage(service, first, { card: '01/38' });
  await runCallbackJob(service.deps);
  const [during] = await receiver.waitFor(1);
  expect(during!.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  for (const secret of [rotated.webhook_secret, shop.webhook_secret!]) expect(verifySignatureHeader(during!.signature, during!.raw, secret, clock.now()).ok).toBe(true);

  clock.set(new Date(START.getTime() + WEBHOOK_ROTATION_GRACE_MS + 1000));
  const second = await openSession(service, shop);
  await submitPage(service, second, { card: '01/38' });
  await runCallbackJob(service.deps);
  const [, after] = await receiver.waitFor(2);
  expect(after!.signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(verifySignatureHeader(after!.signature, after!.raw, rotated.webhook_secret, clock.now()).ok).toBe(true);
  expect(verifySignatureHeader(after!.signature, after!.raw, shop.webhook_secret!, clock.now()).ok).toBe(false);
});

it('a secret rotated by another function (its own cache) signs the next callback at once, whatever this one cached', async () => {
  const { shop, receiver } = await merchant();
  // This process delivers and caches the secret it signs with...
  const first = await openSession(service, shop);
  await submitPage(service, first, { card: '01/38' });
  await runCallbackJob(service.deps);
  const [before] = await receiver.waitFor(1);
  expect(verifySignatureHeader(before!.signature, before!.raw, shop.webhook_secret!, clock.now()).ok).toBe(true);

  // ... while the portal's function, with a cache of its own, rotates it. No time passes.
  const portal = { ...service.deps, secrets: new CachedMerchantSecrets(new SecretsManagerMerchantSecrets(service.deps.secretsClient, service.deps.config.MERCHANT_SECRET_PREFIX), clock, 300_000) };
  const rotated = await rotateWebhookSecret(portal, shop.merchant_key);

  const second = await openSession(service, shop);
  await submitPage(service, second, { card: '01/38' });
  await runCallbackJob(service.deps);
  const [, after] = await receiver.waitFor(2);
  expect(verifySignatureHeader(after!.signature, after!.raw, rotated.webhook_secret, clock.now()).ok).toBe(true);
});
