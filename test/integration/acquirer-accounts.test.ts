import { ManualClock } from '../../lambdas/ports/clock';
import { transactionHash } from '../../lambdas/adapters/s2s-card/hash';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { checkAgainstGateway } from '../support/ledger-checker';
import { adminApi, adminRequest, seedOperator, signIn, type AdminApi } from '../support/admin';
import { openSession, recurringChain, recurringOf, refundOf, statusOf, submitPage } from '../support/payments';
import { receivingMerchants } from '../support/callback-receiver';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { startTestService, type TestService } from '../support/service';
import { asFunction } from '../support/table-access';
import { insideVoidWindow } from '../support/void-window';
import { until } from '../support/until';
import { executeAccountCommand, parseAccountCommand } from '../../local/account-command';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import type { AccountView } from '../../lambdas/protocol/admin/acquirer-accounts';

/**
 * Each merchant's own acquirer account (docs/acquirer-accounts.md): admins create and rotate
 * accounts (portal API and CLI, audited, the password never shown again); a merchant linked to one
 * pays, is refunded and is charged back only through it — the fake gateway keeps a ledger per
 * account, as the real one does for its merchant accounts — and the stage's own account serves the
 * merchants linked to none. Callbacks are verified with the payment's account's password;
 * reconciliation asks that account.
 */
jest.setTimeout(60_000);

let gateway: FakeGateway;
let service: TestService;
let admin: AdminApi;
let viewer: AdminApi;
let adminToken: string;
const clock = new ManualClock(insideVoidWindow());
const merchants = receivingMerchants(() => service, 'Account Shop');
let a: { clientKey: string; password: string };
let b: { clientKey: string; password: string };

beforeAll(async () => {
  gateway = await startFakeGateway();
  a = gateway.addAccount();
  b = gateway.addAccount();
  service = await startTestService({
    clock,
    // Every read of an account's password goes to the secret store (a rotation is seen at once here).
    env: { ACQUIRER: 's2s-card', S2S_CARD_URL: gateway.url, S2S_CARD_CLIENT_KEY: gateway.clientKey, S2S_CARD_PASSWORD: gateway.password, S2S_CARD_TIMEOUT_MS: '2000', S2S_CARD_FOLLOW_UP_WAIT_MS: '1500', SECRET_CACHE_TTL_SECONDS: '0' },
  });
  gateway.notifyUrl = `${service.baseUrl}/acquirer/s2s-card/notify`;
  adminToken = await signIn(service, await seedOperator(service));
  admin = adminApi(service, adminToken);
  viewer = adminApi(service, await signIn(service, await seedOperator(service, undefined, undefined, 'viewer')));
});
afterAll(async () => {
  await merchants.close();
  await gateway?.close();
  await service?.close();
});

const reconcile = () => asFunction('ReconcileAttempts', () => reconcileDue(service.deps));
const createAccount = (body: Record<string, unknown>, token = adminToken) => adminRequest<AccountView & { error_code?: number; errors?: { path?: string; error_message: string }[] }>(service, 'POST', '/admin/api/acquirer-accounts', token, body);
const changeAccount = (id: string, body: Record<string, unknown>) => adminRequest<AccountView>(service, 'PUT', `/admin/api/acquirer-accounts/${id}`, adminToken, body);

async function pay(shop: MerchantCredentials, currency = 'EUR') {
  const s = await openSession(service, shop, {
    order: { currency, amount: '10.00' },
    extra: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' }, billing_address: { country: 'DE', city: 'Berlin', address: 'Street 1', zip: '10115' } },
  });
  expect((await submitPage(service, s, { card: '01/38' })).status).toBeLessThan(400);
  return s.paymentId;
}

/** Waits until the gateway's callbacks of this transaction and action were answered. */
async function answered(transId: string, action: string) {
  if (await until(() => gateway.callbacks.some((c) => c.fields.trans_id === transId && c.fields.action === action), { everyMs: 10 })) return;
  throw new Error(`no ${action} callback answered for ${transId}`);
}

describe('accounts are created, listed and rotated by admins, audited, the password never shown', () => {
  it('an admin creates two accounts; a viewer lists them but cannot create one; a bad or repeated one is refused on its field', async () => {
    const made = await createAccount({ account_id: 'shop-a', gateway_url: gateway.url, client_key: a.clientKey, password: a.password, currencies: 'eur', descriptor: 'SHOP A' });
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ account_id: 'shop-a', acquirer: 's2s-card', gateway_url: gateway.url, client_key: a.clientKey, currencies: ['EUR'], descriptor: 'SHOP A' });
    expect(made.text).not.toContain(a.password);
    expect((await createAccount({ account_id: 'shop-b', gateway_url: gateway.url, client_key: b.clientKey, password: b.password, currencies: ['EUR', 'USD'] })).status).toBe(201);

    const again = await createAccount({ account_id: 'shop-a', gateway_url: gateway.url, client_key: 'x', password: 'another-password', currencies: 'EUR' });
    expect(again.status).toBe(400);
    expect(again.json.errors).toEqual([expect.objectContaining({ error_message: 'account_id: Acquirer account shop-a already exists.' })]);
    const bad = await createAccount({ account_id: 'Shop A', gateway_url: 'ftp://x', client_key: '', password: 'short', currencies: 'EURO', descriptor: 'x'.repeat(30), extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.json.errors?.map((e) => e.error_message)).toEqual(['extra: This field is not expected.']);
    const bad2 = await createAccount({ account_id: 'Shop A', gateway_url: 'ftp://x', client_key: '', password: 'short', currencies: 'EURO', descriptor: 'x'.repeat(30) });
    expect(bad2.status).toBe(400);
    expect(bad2.json.errors).toHaveLength(6);

    const listed = await viewer.session();
    expect(listed.status).toBe(200);
    const list = await adminRequest<{ accounts: AccountView[] }>(service, 'GET', '/admin/api/acquirer-accounts', (await signIn(service, await seedOperator(service, undefined, undefined, 'viewer'))));
    expect(list.json.accounts.map((x) => x.account_id)).toEqual(['shop-a', 'shop-b']);
    expect(list.text).not.toContain(a.password);
    const refused = await adminRequest(service, 'POST', '/admin/api/acquirer-accounts', (await signIn(service, await seedOperator(service, undefined, undefined, 'operator'))), { account_id: 'shop-c', gateway_url: gateway.url, client_key: 'c', password: 'password-c', currencies: 'EUR' });
    expect(refused.status).toBe(403);
    // Audited, without the password.
    const audit = (await admin.audit()).json.entries.filter((e) => e.target === 'account:shop-a');
    expect(audit).toEqual([expect.objectContaining({ action: 'account.create', targetKind: 'account', after: expect.objectContaining({ client_key: a.clientKey, password: 'set' }) })]);
    expect(JSON.stringify(audit)).not.toContain(a.password);
  });

  it('changes of one account racing each other: each is taken whole or refused as changed meanwhile, never merged', async () => {
    const created = await createAccount({ account_id: 'race-acct', gateway_url: gateway.url, client_key: 'race-0', password: 'race-password-0', currencies: 'EUR' });
    expect(created.status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => changeAccount('race-acct', { client_key: `race-${i + 1}`, descriptor: `RACE ${i + 1}` })));
    expect(answers.every((r) => r.status === 200 || r.status === 400)).toBe(true);
    const won = answers.filter((r) => r.status === 200);
    expect(won.length).toBeGreaterThanOrEqual(1);
    for (const lost of answers.filter((r) => r.status === 400)) expect(lost.text).toContain('was changed meanwhile');
    // The account is one of the winners' whole: client key and descriptor of the same change.
    const now = (await service.deps.accounts.find('race-acct'))!;
    expect(now.descriptor).toBe(`RACE ${now.clientKey.slice('race-'.length)}`);
    expect(won.map((r) => r.json.client_key)).toContain(now.clientKey);
    // Every change that was taken is in the audit log, once.
    const audited = (await admin.audit()).json.entries.filter((e) => e.target === 'account:race-acct' && e.action === 'account.update');
    expect(audited).toHaveLength(won.length);
  });

  it('a merchant is linked to an account that exists only', async () => {
    const { shop } = await merchants.merchant();
    const res = await admin.changeMerchant(shop.merchant_key, { acquirer_account: 'no-such-account' });
    expect(res.status).toBe(400);
    expect(res.text).toContain('acquirer account no-such-account does not exist');
    expect((await admin.changeMerchant(shop.merchant_key, { acquirer_account: 'stage' })).status).toBe(400);
  });
});

describe('two merchants on two accounts, and one on the stage\'s', () => {
  it('each pays, is refunded and charged back only through its own account; the gateway\'s ledger per account holds exactly its own', async () => {
    const { shop: shopA } = await merchants.merchant();
    const { shop: shopB } = await merchants.merchant();
    const { shop: shopStage } = await merchants.merchant();
    expect((await admin.changeMerchant(shopA.merchant_key, { acquirer_account: 'shop-a' })).status).toBe(200);
    expect((await admin.changeMerchant(shopB.merchant_key, { acquirer_account: 'shop-b' })).status).toBe(200);

    const [pA, pB, pS] = [await pay(shopA), await pay(shopB), await pay(shopStage)];
    for (const p of [pA, pB, pS]) expect((await statusOf(service, p === pA ? shopA : p === pB ? shopB : shopStage, p)).status).toBe('settled');
    expect(gateway.accountOf(`${pA}.1`)).toBe(a.clientKey);
    expect(gateway.accountOf(`${pB}.1`)).toBe(b.clientKey);
    expect(gateway.accountOf(`${pS}.1`)).toBe(gateway.clientKey);

    // Refunds (CREDITVOID: ACCEPTED, then its callback) and chargebacks (CHARGEBACK callback, then the reconciler's reading).
    expect((await refundOf(service, shopA, pA, '3.00')).status).toBe(200);
    expect((await refundOf(service, shopB, pB, '4.00')).status).toBe(200);
    const tA = gateway.byOrder(`${pA}.1`)!;
    const tB = gateway.byOrder(`${pB}.1`)!;
    expect(gateway.chargeback(tA.transId, 200, '4837')).toMatchObject({ ok: true });
    expect(gateway.chargeback(tB.transId, undefined, '10.4')).toMatchObject({ ok: true });
    await answered(tA.transId, 'CHARGEBACK');
    await answered(tB.transId, 'CHARGEBACK');
    await reconcile();
    expect(await statusOf(service, shopA, pA)).toMatchObject({ status: 'chargeback', refunded_amount: '3.00', chargeback_amount: '2.00' });
    expect(await statusOf(service, shopB, pB)).toMatchObject({ status: 'chargeback', refunded_amount: '4.00', chargeback_amount: '6.00' });

    // Every request of each payment carried its own account's client key; each account's ledger has its own payment only.
    const requestsOf = (paymentId: string, transId: string) => gateway.requests.filter((r) => r.fields.order_id?.startsWith(`${paymentId}.`) || r.fields.trans_id === transId);
    expect(new Set(requestsOf(pA, tA.transId).map((r) => r.fields.client_key))).toEqual(new Set([a.clientKey]));
    expect(new Set(requestsOf(pB, tB.transId).map((r) => r.fields.client_key))).toEqual(new Set([b.clientKey]));
    const idsOf = (clientKey: string) => [...new Set(gateway.ledgerOfAccount(clientKey).map((e) => e.orderId?.split('.')[0]))];
    expect(idsOf(a.clientKey)).toEqual([pA]);
    expect(idsOf(b.clientKey)).toEqual([pB]);
    expect(idsOf(gateway.clientKey)).not.toContain(pA);
    expect(idsOf(gateway.clientKey)).not.toContain(pB);
    for (const p of [pA, pB, pS]) expect(checkAgainstGateway((await service.deps.store.findPayment(p))!, gateway.ledgerOf(p), { settled: true })).toEqual([]);

    // The list names the merchants linked to each account.
    const list = await adminRequest<{ accounts: AccountView[] }>(service, 'GET', '/admin/api/acquirer-accounts', adminToken);
    expect(list.json.accounts.find((x) => x.account_id === 'shop-a')?.merchants).toContain(shopA.merchant_key);
  });

  it('a callback of a payment on one account signed with another account\'s password is refused and changes nothing', async () => {
    const { shop } = await merchants.merchant({ acquirerAccount: 'shop-a' });
    const paymentId = await pay(shop);
    const t = gateway.byOrder(`${paymentId}.1`)!;
    const fields = { action: 'CHARGEBACK', result: 'SUCCESS', status: 'CHARGEBACK', order_id: `${paymentId}.1`, trans_id: t.transId, amount: '10.00', reason_code: '4837' };
    const post = (password: string) =>
      service.request({ method: 'POST', path: '/acquirer/s2s-card/notify', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ...fields, hash: transactionHash(password, t.party, t.transId) }).toString() });
    expect((await post(b.password)).status).toBe(400);
    expect((await post(gateway.password)).status).toBe(400);
    expect((await service.deps.store.findPayment(paymentId))?.disputeNews ?? 0).toBe(0);
    expect((await post(a.password)).status).toBe(200);
    expect((await service.deps.store.findPayment(paymentId))?.disputeNews).toBe(1);
  });

  it('a recurring chain charges through the account of its first payment, even after its merchant moves to another', async () => {
    const { shop } = await merchants.merchant({ acquirerAccount: 'shop-a' });
    const chain = await recurringChain(service, shop, { order: { currency: 'EUR' }, extra: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' } } });
    expect(gateway.accountOf(`${chain.paymentId}.1`)).toBe(a.clientKey);
    expect((await admin.changeMerchant(shop.merchant_key, { acquirer_account: 'shop-b' })).status).toBe(200);
    const charged = await recurringOf<{ payment_id: string }>(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { number: `R-${chain.paymentId}` } });
    expect(charged.status).toBe(200);
    const charge = (await service.deps.store.findPayment(charged.json.payment_id))!;
    expect(charge).toMatchObject({ status: 'settled', acquirerAccount: 'shop-a' });
    expect(gateway.accountOf(`${charge.paymentId}.1`)).toBe(a.clientKey);
  });

  it('a currency the merchant\'s account does not take is declined before anything reaches the gateway', async () => {
    const { shop } = await merchants.merchant({ acquirerAccount: 'shop-a' });
    const before = gateway.requests.length;
    const paymentId = await pay(shop, 'USD');
    // A declined attempt on the page (the link stays open for another card until its declines run out).
    const attempt = (await service.deps.store.findPayment(paymentId))!.transactions.find((t) => t.type === 'sale');
    expect(attempt).toMatchObject({ status: 'fail', reason: 'The merchant\'s acquirer account does not take this currency.' });
    expect(gateway.requests.slice(before).filter((r) => r.fields.order_id?.startsWith(paymentId))).toEqual([]);
  });

  it('the next attempt on an open link goes through the merchant\'s account as it is now, back to the stage\'s too', async () => {
    const { shop } = await merchants.merchant({ acquirerAccount: 'shop-a' });
    const s = await openSession(service, shop, { order: { currency: 'USD', amount: '10.00' }, extra: { customer: { name: 'Jane Roe', email: 'jane.roe@example.com' } } });
    // shop-a takes EUR only: the first attempt is declined before the gateway, and the link stays open.
    expect((await submitPage(service, s, { card: '01/38' })).status).toBeLessThan(400);
    expect(await service.deps.store.findPayment(s.paymentId)).toMatchObject({ status: 'decline', attempt: 1, acquirerAccount: 'shop-a' });
    // The merchant goes back to the stage's account; the customer tries again on the same link.
    expect((await admin.changeMerchant(shop.merchant_key, { acquirer_account: null })).status).toBe(200);
    expect((await submitPage(service, s, { card: '01/38' })).status).toBeLessThan(400);
    const paid = (await service.deps.store.findPayment(s.paymentId))!;
    expect(paid).toMatchObject({ status: 'settled', attempt: 2 });
    expect(paid.acquirerAccount).toBeUndefined();
    expect(gateway.accountOf(`${s.paymentId}.2`)).toBe(gateway.clientKey);
    // Its refund follows the attempt that paid: the stage's account.
    expect((await refundOf(service, shop, s.paymentId, '2.00')).status).toBe(200);
    const t = gateway.byOrder(`${s.paymentId}.2`)!;
    expect(new Set(gateway.requests.filter((r) => r.fields.trans_id === t.transId).map((r) => r.fields.client_key))).toEqual(new Set([gateway.clientKey]));
    expect(checkAgainstGateway((await service.deps.store.findPayment(s.paymentId))!, gateway.ledgerOf(s.paymentId), { settled: true })).toEqual([]);
  });

  it('a rotated password is used for the next request at once; the old one no longer passes the gateway', async () => {
    const { shop } = await merchants.merchant({ acquirerAccount: 'shop-b' });
    const rotated = `${b.password}-rotated`;
    gateway.rotatePassword(b.clientKey, rotated);
    const res = await changeAccount('shop-b', { password: rotated });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(rotated);
    const paymentId = await pay(shop);
    expect((await statusOf(service, shop, paymentId)).status).toBe('settled');
    expect(gateway.accountOf(`${paymentId}.1`)).toBe(b.clientKey);
    const audit = (await admin.audit()).json.entries.filter((e) => e.target === 'account:shop-b');
    expect(audit[0]).toMatchObject({ action: 'account.rotate-password', after: expect.objectContaining({ password: 'set' }) });
    expect(JSON.stringify(audit)).not.toContain(rotated);
  });
});

describe('the CLI\'s account commands (npm run -s merchant -- accounts | account-create | account-set)', () => {
  it('creates, changes and lists an account through the same use cases, audited as cli:<login>; the password only from ACQUIRER_ACCOUNT_PASSWORD', async () => {
    const env = { ACQUIRER_ACCOUNT_PASSWORD: 'cli-password-123' };
    const create = parseAccountCommand('account-create', ['cli-acct'], { 'gateway-url': gateway.url, 'client-key': 'cli-key', currencies: 'EUR,GBP', descriptor: 'CLI SHOP' }, env);
    const out = JSON.parse(await executeAccountCommand(create, service.deps, 'cli:tester')) as AccountView;
    expect(out).toMatchObject({ account_id: 'cli-acct', client_key: 'cli-key', currencies: ['EUR', 'GBP'], descriptor: 'CLI SHOP' });
    expect(await service.deps.accountSecrets.passwordOf('cli-acct', true)).toBe('cli-password-123');
    const set = parseAccountCommand('account-set', ['cli-acct'], { descriptor: 'off', 'rotate-password': true }, { ACQUIRER_ACCOUNT_PASSWORD: 'cli-password-456' });
    const changed = JSON.parse(await executeAccountCommand(set, service.deps, 'cli:tester')) as AccountView;
    expect(changed.descriptor).toBeUndefined();
    expect(await service.deps.accountSecrets.passwordOf('cli-acct', true)).toBe('cli-password-456');
    const listed = JSON.parse(await executeAccountCommand(parseAccountCommand('accounts', [], {}, {}), service.deps, 'cli:tester')) as { accounts: AccountView[] };
    expect(listed.accounts.map((x) => x.account_id)).toContain('cli-acct');
    expect(JSON.stringify(listed)).not.toContain('cli-password');
    expect(() => parseAccountCommand('account-create', ['x'], { 'gateway-url': gateway.url }, {})).toThrow(/ACQUIRER_ACCOUNT_PASSWORD/);
    expect(() => parseAccountCommand('account-set', ['x'], {}, {})).toThrow(/at least one/);
    await expect(executeAccountCommand(parseAccountCommand('account-set', ['nope'], { currencies: 'EUR' }, {}), service.deps, 'cli:tester')).rejects.toThrow('Acquirer account not found.');
    const audit = (await admin.audit()).json.entries.filter((e) => e.target === 'account:cli-acct').map((e) => [e.actor, e.action]);
    expect(audit).toEqual([['cli:tester', 'account.update'], ['cli:tester', 'account.create']]);
  });
});
