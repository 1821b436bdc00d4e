import type { ErrorName } from '../../lambdas/domain/errors';
import { ERRORS } from '../../lambdas/domain/errors';
import type { LocalOperatorAuthenticator } from '../../lambdas/adapters/local/operator-auth';
import { ManualClock } from '../../lambdas/ports/clock';
import { updateMerchantSettings, type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { OPERATOR_ROLES, roleAllows, type OperatorRole } from '../../lib/operator-roles';
import { ROUTES, routeKey } from '../../lib/routes';
import { adminApi, adminRequest, operatorToken, seedOperator, signIn } from '../support/admin';
import { paidPayment, storedPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Operator roles (viewer < operator < admin, lib/operator-roles.ts). Every /admin/api route names
 * the least role it needs in lib/routes.ts; this walks every one of them, taken from the route
 * table so that a new route cannot escape, with a token of each role, and checks the answer the
 * matrix below gives: 403 with the error envelope, or an answer from the route itself. The portal
 * hides what a role may not do (test/e2e/admin-portal.test.ts); the API refuses it anyway.
 */
const MATRIX: Readonly<Record<string, OperatorRole>> = {
  'GET /admin/api/session': 'viewer',
  'GET /admin/api/payments': 'viewer',
  'GET /admin/api/payments/count': 'viewer',
  'GET /admin/api/payments/export': 'viewer',
  'GET /admin/api/payments/{paymentId}': 'viewer',
  'GET /admin/api/payments/{paymentId}/callbacks': 'viewer',
  'GET /admin/api/capture-queue': 'viewer',
  'GET /admin/api/merchants': 'viewer',
  'GET /admin/api/merchants/{merchantKey}': 'viewer',
  'GET /admin/api/merchants/{merchantKey}/callbacks/dead': 'viewer',
  'GET /admin/api/audit': 'viewer',
  'GET /admin/api/audit/export': 'viewer',
  'POST /admin/api/sign-out': 'viewer',
  'GET /admin/api/disputes': 'viewer',
  'GET /admin/api/disputes/export': 'viewer',
  'GET /admin/api/acquirer-accounts': 'viewer',
  'POST /admin/api/payments/{paymentId}/{action}': 'operator',
  'POST /admin/api/payments/{paymentId}/callbacks/{index}/resend': 'operator',
  'POST /admin/api/capture-queue/bulk': 'operator',
  'POST /admin/api/merchants/{merchantKey}/callbacks/resend-dead': 'operator',
  'PUT /admin/api/merchants/{merchantKey}': 'admin',
  'POST /admin/api/merchants': 'admin',
  'POST /admin/api/merchants/{merchantKey}/password': 'admin',
  'POST /admin/api/merchants/{merchantKey}/webhook-secret': 'admin',
  'POST /admin/api/acquirer-accounts': 'admin',
  'PUT /admin/api/acquirer-accounts/{accountId}': 'admin',
};

const T0 = new Date('2030-08-05T08:00:00.000Z');
const clock = new ManualClock(T0);
const FORBIDDEN = { error_code: ERRORS.FORBIDDEN.code, error_message: ERRORS.FORBIDDEN.message, errors: [] };
const refusal = (name: ErrorName) => ({ error_code: ERRORS[name].code, error_message: ERRORS[name].message, errors: [] });

let service: TestService;
let shop: MerchantCredentials;
const tokens = {} as Record<OperatorRole, string>;

beforeAll(async () => {
  service = await startTestService({ clock });
  for (const role of OPERATOR_ROLES) tokens[role] = await signIn(service, await seedOperator(service, `${role}-1`, `${role}-long-password`, role));
  shop = await service.createMerchant({ name: 'Roles Shop' });
  await updateMerchantSettings(service.deps, shop.merchant_key, { dms: true });
});
afterAll(() => service.close());

const adminRoutes = ROUTES.filter((r) => r.path.startsWith('/admin/api'));
const roleRoutes = adminRoutes.filter((r) => r.auth === 'operator');

/** A request each route accepts from an allowed operator (unknown ids: nothing is changed by the walk). */
function requestFor(key: string): { path: string; body?: unknown } {
  const route = ROUTES.find((r) => routeKey(r) === key)!;
  const path = route.path
    .replace('{paymentId}', 'no-such-payment')
    .replace('{merchantKey}', 'no-such-merchant')
    .replace('{action}', 'capture')
    .replace('{index}', '0');
  if (route.method === 'GET') return { path };
  if (key === 'POST /admin/api/capture-queue/bulk') return { path, body: { action: 'capture', payment_ids: ['no-such-payment'] } };
  if (key === 'PUT /admin/api/merchants/{merchantKey}') return { path, body: { dms: true } };
  // Refused for its settings (an unknown method): nothing is created by the walk.
  if (key === 'POST /admin/api/merchants') return { path, body: { name: 'Walked', methods: ['no-such-method'] } };
  return { path, body: {} };
}

describe('every /admin/api route declares who may call it', () => {
  it('all but the local sign-in need an operator token and name a role; the sign-in is never deployed', () => {
    expect(adminRoutes.filter((r) => r.auth !== 'operator').map((r) => [r.id, r.localOnly])).toEqual([['AdminSignIn', true]]);
    for (const r of roleRoutes) expect(OPERATOR_ROLES).toContain(r.role);
  });

  it('the matrix of this test covers exactly the routes of the route table, with the same roles', () => {
    expect(Object.fromEntries(roleRoutes.map((r) => [routeKey(r), r.role]))).toEqual(MATRIX);
  });
});

describe.each(OPERATOR_ROLES)('with a token of the %s role', (role) => {
  it.each(roleRoutes.map((r) => [routeKey(r)] as const))('%s', async (key) => {
    const { path, body } = requestFor(key);
    const res = await adminRequest(service, key.split(' ')[0] as 'GET' | 'POST' | 'PUT', path, tokens[role], body);
    if (roleAllows(role, MATRIX[key]!)) {
      // The route itself answered: its result, or its own refusal of the unknown id.
      expect([401, 403]).not.toContain(res.status);
      expect(res.status).toBeLessThan(500);
    } else {
      expect([res.status, res.json]).toEqual([403, FORBIDDEN]);
    }
  });
});

describe('refusals', () => {
  it('a token without a role (an operator from before roles, a Cognito user in no group) may call nothing', async () => {
    const roleless = await operatorToken(service.backend.operatorKey, { username: 'nobody' });
    for (const r of roleRoutes) {
      const { path, body } = requestFor(routeKey(r));
      const res = await adminRequest(service, r.method, path, roleless, body);
      expect([routeKey(r), res.status, res.json]).toEqual([routeKey(r), 403, FORBIDDEN]);
    }
  });

  it("a viewer's forged capture is refused before anything is read or written: the payment stays pending, nothing is audited", async () => {
    const paid = await paidPayment(service, shop);
    expect(paid.status.status).toBe('pending');
    const viewer = adminApi(service, tokens.viewer);
    const capture = await viewer.act(paid.paymentId, 'capture', { amount: '1.00' });
    expect([capture.status, capture.json]).toEqual([403, FORBIDDEN]);
    const bulk = await viewer.bulk('release', [paid.paymentId]);
    expect([bulk.status, bulk.json]).toEqual([403, FORBIDDEN]);
    // Refused before the body is read: a malformed body gets the same 403, not a 400.
    const malformed = await service.request({
      method: 'POST',
      path: `/admin/api/payments/${paid.paymentId}/void`,
      headers: { authorization: `Bearer ${tokens.viewer}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect([malformed.status, malformed.json]).toEqual([403, FORBIDDEN]);
    expect((await storedPayment(service, paid.paymentId)).status).toBe('pending');
    expect((await adminApi(service, tokens.admin).payment(paid.paymentId)).json.audit).toEqual([]);
  });

  it("an operator's change of merchant settings is refused: only an admin's is applied", async () => {
    const change = await adminApi(service, tokens.operator).changeMerchant(shop.merchant_key, { name: 'Renamed by an operator' });
    expect([change.status, change.json]).toEqual([403, FORBIDDEN]);
    expect((await service.deps.merchants.find(shop.merchant_key))?.name).toBe('Roles Shop');
    const byAdmin = await adminApi(service, tokens.admin).changeMerchant('no-such-merchant', { name: 'x' });
    expect([byAdmin.status, byAdmin.json]).toEqual([404, refusal('MERCHANT_NOT_FOUND')]);
  });
});

describe('GET /admin/api/session', () => {
  it.each(OPERATOR_ROLES)('%s: the user name, the role and the routes it allows (what the portal offers)', async (role) => {
    const res = await adminApi(service, tokens[role]).session();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      username: `${role}-1`,
      role,
      routes: Object.entries(MATRIX)
        .filter(([, needed]) => roleAllows(role, needed))
        .map(([key]) => key)
        .sort((a, b) => roleRoutes.findIndex((r) => routeKey(r) === a) - roleRoutes.findIndex((r) => routeKey(r) === b)),
    });
  });
});

describe('the audit log names the role each operator acted with', () => {
  it('an operator capturing and an admin changing settings', async () => {
    const paid = await paidPayment(service, shop);
    clock.set(new Date(T0.getTime() + 60_000));
    expect((await adminApi(service, tokens.operator).act(paid.paymentId, 'capture')).json).toMatchObject({ outcome: 'done', status: 'settled' });
    clock.set(new Date(T0.getTime() + 120_000));
    expect((await adminApi(service, tokens.admin).changeMerchant(shop.merchant_key, { max_declines: 4 })).status).toBe(200);
    const entries = (await adminApi(service, tokens.viewer).audit()).json.entries;
    expect(entries.filter((e) => e.target === paid.paymentId || e.target === `merchant:${shop.merchant_key}`).map((e) => [e.actor, e.actorRole, e.action])).toEqual([
      ['admin-1', 'admin', 'merchant.settings'],
      ['operator-1', 'operator', 'payment.capture'],
    ]);
    // A plain attribute of the entry, covered by its hash like the others (the chain still verifies).
    const stored = (await service.tableItems()).filter((i) => i.action === 'merchant.settings' && i.target === `merchant:${shop.merchant_key}`);
    expect(stored).toEqual([expect.objectContaining({ actor: 'admin-1', actorRole: 'admin' })]);
  });

  it('a changed role applies from the next sign-in (an open token keeps its role until it expires)', async () => {
    const who = await seedOperator(service, 'promoted', 'promoted-long-password', 'viewer');
    const before = await signIn(service, who);
    await (service.deps.operators as LocalOperatorAuthenticator).setRole('promoted', 'operator');
    expect((await adminApi(service, before).session()).json.role).toBe('viewer');
    expect((await adminApi(service, await signIn(service, who)).session()).json.role).toBe('operator');
  });
});
