import { CreateSecretCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import { CachedOriginSecret, secretsManagerOriginSecret } from '../../lambdas/adapters/secrets-manager/origin-secret';
import { readConfig } from '../../lambdas/config';
import { buildDeps, setDeps } from '../../lambdas/container';
import { ERRORS } from '../../lambdas/domain/errors';
import { ORIGIN_SECRET_HEADER } from '../../lambdas/domain/origin-secret';
import { ManualClock } from '../../lambdas/ports/clock';
import { FALLBACK_BEHIND_EDGE_ENTRY } from '../../lib/checkout-stack';
import { FALLBACK_ROUTE, ROUTES } from '../../lib/routes';
import type { HttpAnswer } from '../support/http';
import { startTestService, type TestService } from '../support/service';

/**
 * A stage behind CloudFront refuses what reaches its origin name without CloudFront's header
 * (ADR 0027): every route's function, through the local runner over HTTP and invoked one by one,
 * with the Secrets Manager stand-in holding the secret. The runner itself, and any stage without
 * ORIGIN_SECRET_ID, answers as before.
 */
const SECRET_NAME = 'Checkout-test/origin-verify';
const slotA = randomBytes(32).toString('hex');
const slotB = randomBytes(32).toString('hex');
const REFUSED = { error_code: ERRORS.ORIGIN_REFUSED.code, error_message: ERRORS.ORIGIN_REFUSED.message, errors: [] };

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
  await service.deps.secretsClient.send(new CreateSecretCommand({ Name: SECRET_NAME, SecretString: JSON.stringify({ a: slotA, b: slotB }) }));
});
afterAll(() => service.close());

/** The service as a stage with an edge runs it: the guard reads the stand-in's secret (cached as on AWS). */
const guarded = () => {
  process.env.ORIGIN_SECRET_ID = SECRET_NAME;
  setDeps({ ...service.deps, originSecret: secretsManagerOriginSecret(service.deps.secretsClient, SECRET_NAME, service.deps.clock, 300_000) });
};
const unguarded = () => {
  delete process.env.ORIGIN_SECRET_ID;
  setDeps(service.deps);
};
afterEach(unguarded);

const requests = [
  { what: 'the merchant API', method: 'POST', path: '/api/v1/session', body: '{}' },
  { what: 'a checkout page', method: 'GET', path: '/auth/not-a-token' },
  { what: 'the admin portal page', method: 'GET', path: '/admin' },
  { what: 'the portal sign-in', method: 'POST', path: '/admin/api/session', body: '{"username":"x","password":"y"}' },
  { what: 'the sandbox challenge page', method: 'GET', path: '/sandbox/challenge/nothing' },
  { what: 'the $default route', method: 'GET', path: '/api/v1/sesion' },
];
/** Status and body, a page's per-response nonce aside. */
const answerOf = (res: HttpAnswer) => [res.status, res.json ?? res.text.replace(/nonce="[^"]+"/g, 'nonce="…"')];
const send = (r: (typeof requests)[number], headers: Record<string, string> = {}) =>
  service.request({ method: r.method, path: r.path, headers: { ...(r.body ? { 'content-type': 'application/json' } : {}), ...headers }, ...(r.body ? { body: r.body } : {}) });

describe('the local runner (no edge)', () => {
  test('builds no guard and answers requests without the header as always', async () => {
    expect(service.deps.originSecret).toBeUndefined();
    for (const r of requests) {
      const res = await send(r);
      expect([r.what, res.status]).not.toEqual([r.what, 403]);
      expect(res.json).not.toEqual(REFUSED);
    }
  });
});

describe('a stage behind CloudFront', () => {
  test('the configuration builds the guard from ORIGIN_SECRET_ID', () => {
    const deps = buildDeps(readConfig({ ...process.env, ORIGIN_SECRET_ID: SECRET_NAME }));
    try {
      expect(deps.originSecret).toBeInstanceOf(CachedOriginSecret);
    } finally {
      deps.db.destroy();
      deps.secretsClient.destroy();
      setDeps(service.deps);
    }
  });

  test.each(requests)('$what: refused without the header or with a wrong value (403, the envelope), answered with either slot', async (r) => {
    guarded();
    const wrong: Record<string, string>[] = [{}, { [ORIGIN_SECRET_HEADER]: '' }, { [ORIGIN_SECRET_HEADER]: randomBytes(32).toString('hex') }, { [ORIGIN_SECRET_HEADER]: `${slotA}x` }];
    for (const headers of wrong) {
      const res = await send(r, headers);
      expect([res.status, res.json, res.headers['content-type']]).toEqual([403, REFUSED, 'application/json; charset=utf-8']);
    }
    unguarded();
    const plain = await send(r);
    guarded();
    for (const value of [slotA, slotB]) {
      const res = await send(r, { [ORIGIN_SECRET_HEADER]: value });
      // Past the guard the route answers exactly as it does where there is no guard.
      expect(answerOf(res)).toEqual(answerOf(plain));
    }
  });

  const context = { functionName: 'test', awsRequestId: 'r-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
  const entries = [...new Set([...ROUTES.map((r) => r.entry), FALLBACK_BEHIND_EDGE_ENTRY])];
  const eventWith = (headers: Record<string, string>) => ({
    version: '2.0',
    routeKey: 'POST /x',
    rawPath: '/x',
    rawQueryString: '',
    headers,
    body: '',
    isBase64Encoded: false,
    requestContext: { requestId: 'req-1', domainName: 'origin.example.com', http: { method: 'POST', path: '/x', sourceIp: '127.0.0.1' } },
  });

  test.each(entries.map((e) => [e]))('%s refuses a request without the header, and lets one with it through', async (entry) => {
    guarded();
    const { handler } = (await import(`../../${entry.replace(/\.ts$/, '')}`)) as { handler: (event: unknown, context: Context) => Promise<APIGatewayProxyStructuredResultV2> };
    const refused = await handler(eventWith({}), context);
    expect([refused.statusCode, JSON.parse(refused.body ?? '')]).toEqual([403, REFUSED]);
    const admitted = await handler(eventWith({ [ORIGIN_SECRET_HEADER]: slotB }), context).catch((e: unknown) => ({ statusCode: 0, body: String(e) }));
    expect(admitted.body ?? '').not.toContain(String(ERRORS.ORIGIN_REFUSED.code));
  });
});

test('the plain $default entry (stages without an edge), if ever told to check, fails closed: a 500, never an answer', async () => {
  // Its own module registry: without the container or the edge entry, no secret reader is registered.
  await jest.isolateModulesAsync(async () => {
    process.env.ORIGIN_SECRET_ID = SECRET_NAME;
    try {
      const { handler } = (await import(`../../${FALLBACK_ROUTE.entry.replace(/\.ts$/, '')}`)) as { handler: (event: unknown, context: Context) => Promise<APIGatewayProxyStructuredResultV2> };
      const res = await handler({ version: '2.0', routeKey: '$default', rawPath: '/x', headers: {}, requestContext: { requestId: 'r', http: { method: 'GET', path: '/x', sourceIp: '127.0.0.1' } } }, { getRemainingTimeInMillis: () => 3000 } as unknown as Context);
      expect(res.statusCode).toBe(500);
    } finally {
      delete process.env.ORIGIN_SECRET_ID;
    }
  });
});

describe('the cached secret', () => {
  test('is read once per cache time, then again: a rotation is picked up, the value before it still admitted', async () => {
    const clock = new ManualClock('2030-01-01T00:00:00Z');
    let stored = JSON.stringify({ a: slotA, b: '' });
    let reads = 0;
    const secret = new CachedOriginSecret(async () => (reads++, stored), clock, 300_000);
    const answers = await Promise.all(Array.from({ length: 50 }, () => secret.admits(slotA)));
    expect(answers.every(Boolean)).toBe(true);
    expect(reads).toBe(1);
    expect(await secret.admits(slotB)).toBe(false);

    // Rotation: the slot CloudFront does not send gets the new value.
    stored = JSON.stringify({ a: slotA, b: slotB });
    clock.advance(299_000);
    expect(await secret.admits(slotB)).toBe(false);
    clock.advance(2_000);
    expect([await secret.admits(slotB), await secret.admits(slotA)]).toEqual([true, true]);
    expect(reads).toBe(2);
  });

  test('a rotation written to Secrets Manager reaches a guard built on it after its cache time', async () => {
    const clock = new ManualClock('2030-01-01T00:00:00Z');
    const name = 'Checkout-test/origin-verify-rotation';
    const fresh = randomBytes(32).toString('hex');
    await service.deps.secretsClient.send(new CreateSecretCommand({ Name: name, SecretString: JSON.stringify({ a: slotA, b: '' }) }));
    const secret = secretsManagerOriginSecret(service.deps.secretsClient, name, clock, 300_000);
    expect(await secret.admits(fresh)).toBe(false);
    await service.deps.secretsClient.send(new PutSecretValueCommand({ SecretId: name, SecretString: JSON.stringify({ a: slotA, b: fresh }) }));
    clock.advance(300_001);
    expect([await secret.admits(fresh), await secret.admits(slotA), await secret.admits(slotB)]).toEqual([true, true, false]);
  });

  test('a secret that cannot be read or holds no usable value fails the request: never an open door', async () => {
    const clock = new ManualClock('2030-01-01T00:00:00Z');
    await expect(new CachedOriginSecret(() => Promise.reject(new Error('AccessDeniedException')), clock, 1000).admits(slotA)).rejects.toThrow('AccessDeniedException');
    await expect(new CachedOriginSecret(async () => JSON.stringify({ a: '', b: '' }), clock, 1000).admits('')).rejects.toThrow(/no value/);
    await expect(new CachedOriginSecret(async () => JSON.stringify({ a: 'short' }), clock, 1000).admits('short')).rejects.toThrow(/at least 32/);
    await expect(new CachedOriginSecret(async () => slotA, clock, 1000).admits(slotA)).rejects.toThrow(/must be JSON/);
  });
});
