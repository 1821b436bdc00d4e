import { join } from 'node:path';
import { build } from 'esbuild';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ERRORS } from '../../lambdas/domain/errors';
import { MAX_SHOWN_PATH, shownMethod, shownPath } from '../../lambdas/domain/unknown-route';
import { handler } from '../../lambdas/handlers/not-found';
import { CYRILLIC_RECURRING } from '../../lambdas/handlers/recurring-payment';
import { PROJECT_ROOT } from '../../lib/bundling';
import { FALLBACK_ROUTE, FALLBACK_ROUTE_KEY, ROUTES } from '../../lib/routes';
import { esbuildApiOptions } from '../bench/bundles';

/**
 * The `$default` route's function: what a request no route takes is told, from the route table
 * alone, and how little of what was sent it echoes.
 */
const context = { functionName: 'not-found', awsRequestId: 'request-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

function eventOf(method: string, rawPath: string, rawQueryString = ''): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: FALLBACK_ROUTE_KEY,
    rawPath,
    rawQueryString,
    headers: { 'content-type': 'application/json' },
    requestContext: {
      accountId: 'test',
      apiId: 'test',
      domainName: 'pay.example.com',
      domainPrefix: 'pay',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
      requestId: 'req-1',
      routeKey: FALLBACK_ROUTE_KEY,
      stage: '$default',
      time: '01/Sep/2030:08:00:00 +0000',
      timeEpoch: 1914480000000,
    },
    body: '{"card_number":"4111111111111111"}',
    isBase64Encoded: false,
  };
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly json?: { error_code: number; error_message: string; errors: unknown[] };
}

async function ask(method: string, rawPath: string, rawQueryString = ''): Promise<Answer> {
  const result = (await handler(eventOf(method, rawPath, rawQueryString), context)) as APIGatewayProxyStructuredResultV2;
  const body = result.body ?? '';
  return {
    status: result.statusCode ?? 200,
    headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
    body,
    ...(body ? { json: JSON.parse(body) as Answer['json'] } : {}),
  };
}

const notFound = (message: string) => ({ error_code: ERRORS.ROUTE_NOT_FOUND.code, error_message: message, errors: [] });
const notAllowed = (message: string) => ({ error_code: ERRORS.METHOD_NOT_ALLOWED.code, error_message: message, errors: [] });

const acquirer = process.env.ACQUIRER;
afterEach(() => {
  if (acquirer === undefined) delete process.env.ACQUIRER;
  else process.env.ACQUIRER = acquirer;
});

describe('a path no route has', () => {
  it.each([
    ['POST', '/api/v1/sesion', 'No route: POST /api/v1/sesion does not exist.'],
    ['POST', '/api/v1/session/', 'No route: POST /api/v1/session/ does not exist.'],
    ['POST', '/API/V1/SESSION', 'No route: POST /API/V1/SESSION does not exist.'],
    ['GET', '/', 'No route: GET / does not exist.'],
    ['DELETE', '/api/v2/payment/void', 'No route: DELETE /api/v2/payment/void does not exist.'],
    ['GET', '/auth/some-token/extra', 'No route: GET /auth/some-token/extra does not exist.'],
  ])('%s %s is 404 in the error envelope, without Allow', async (method, path, message) => {
    const res = await ask(method, path);
    expect([res.status, res.json]).toEqual([404, notFound(message)]);
    expect(res.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    expect(res.headers.allow).toBeUndefined();
  });

  it('under /admin answers the same envelope, with no sign-in asked', async () => {
    for (const path of ['/admin/', '/admin/api/nope', '/admin/api/payments/x/y/z', '/administrator']) {
      const res = await ask('GET', path);
      expect([path, res.status, res.json]).toEqual([path, 404, notFound(`No route: GET ${path} does not exist.`)]);
    }
  });

  it('takes the Cyrillic recurring alias only for its one spelling: any other value of the parameter is an unknown path', async () => {
    expect(ROUTES.find((r) => r.id === 'RecurringPaymentCyrillic')?.servedValues).toEqual({ alias: [CYRILLIC_RECURRING] });
    const res = await ask('GET', '/api/v1/payment/recurrin');
    expect([res.status, res.json]).toEqual([404, notFound('No route: GET /api/v1/payment/recurrin does not exist.')]);
  });
});

describe('a path that exists, with another method', () => {
  it('is 405 naming the method it takes, with Allow', async () => {
    const res = await ask('GET', '/api/v1/session');
    expect([res.status, res.json]).toEqual([405, notAllowed('Method GET is not allowed on /api/v1/session; use POST.')]);
    expect(res.headers.allow).toBe('POST');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('lists every method of the path, in the usual order, and names a path with a token by its template only', async () => {
    const res = await ask('DELETE', '/auth/tok-SECRET-123');
    expect([res.status, res.json]).toEqual([405, notAllowed('Method DELETE is not allowed on /auth/{token}; use GET or POST.')]);
    expect(res.headers.allow).toBe('GET, POST');
    expect(res.body).not.toContain('tok-SECRET-123');
  });

  it('names the most specific route where two templates take the path, and the methods of both', async () => {
    const res = await ask('DELETE', '/admin/api/payments/p-1/callbacks');
    expect([res.status, res.json]).toEqual([405, notAllowed('Method DELETE is not allowed on /admin/api/payments/{paymentId}/callbacks; use GET or POST.')]);
    expect(res.headers.allow).toBe('GET, POST');
  });

  it('under /admin is the same envelope, never a 401', async () => {
    expect(await ask('POST', '/admin')).toMatchObject({ status: 405, json: notAllowed('Method POST is not allowed on /admin; use GET.'), headers: { allow: 'GET' } });
    expect(await ask('DELETE', '/admin/api/merchants/m-1')).toMatchObject({ status: 405, json: notAllowed('Method DELETE is not allowed on /admin/api/merchants/{merchantKey}; use GET or PUT.'), headers: { allow: 'GET, PUT' } });
  });

  it("answers from the deployed routes: the local runner's own sign-in route is not named", async () => {
    expect(ROUTES.find((r) => r.localOnly)?.path).toBe('/admin/api/session');
    expect(await ask('POST', '/admin/api/session')).toMatchObject({ status: 405, json: notAllowed('Method POST is not allowed on /admin/api/session; use GET.'), headers: { allow: 'GET' } });
  });

  it("knows the recurring alias by its spelling, shown as sent (escaped), and an explicit payment route before it", async () => {
    const alias = await ask('GET', '/api/v1/payment/re%d1%81urring');
    expect([alias.status, alias.json, alias.headers.allow]).toEqual([405, notAllowed('Method GET is not allowed on /api/v1/payment/re%D1%81urring; use POST.'), 'POST']);
    const voided = await ask('PUT', '/api/v1/payment/void');
    expect([voided.status, voided.json, voided.headers.allow]).toEqual([405, notAllowed('Method PUT is not allowed on /api/v1/payment/void; use POST.'), 'POST']);
  });

  it('matches a percent-encoded spelling of a path as API Gateway routes it, naming the route as the table writes it', async () => {
    const res = await ask('GET', '/api/v1/%73ession');
    expect([res.status, res.json]).toEqual([405, notAllowed('Method GET is not allowed on /api/v1/session; use POST.')]);
  });

  it("speaks for the stage's acquirer only", async () => {
    process.env.ACQUIRER = 'sandbox';
    expect(await ask('PUT', '/sandbox/challenge/k-1')).toMatchObject({ status: 405, headers: { allow: 'GET, POST' } });
    expect((await ask('GET', '/acquirer/s2s-card/notify')).status).toBe(404);
    process.env.ACQUIRER = 's2s-card';
    expect((await ask('PUT', '/sandbox/challenge/k-1')).status).toBe(404);
    expect(await ask('GET', '/acquirer/s2s-card/notify')).toMatchObject({ status: 405, json: notAllowed('Method GET is not allowed on /acquirer/s2s-card/notify; use POST.') });
  });
});

describe('HEAD and OPTIONS', () => {
  it('HEAD: no route takes it; the refusal without a body', async () => {
    const known = await ask('HEAD', '/auth/tok-1');
    expect([known.status, known.headers.allow, known.body]).toEqual([405, 'GET, POST', '']);
    const unknown = await ask('HEAD', '/nowhere');
    expect([unknown.status, unknown.headers.allow, unknown.body]).toEqual([404, undefined, '']);
  });

  it('OPTIONS: 204 with Allow on a path that exists (no CORS headers), 404 elsewhere', async () => {
    const known = await ask('OPTIONS', '/api/v1/payment/status');
    expect([known.status, known.headers.allow, known.body]).toEqual([204, 'POST', '']);
    expect(Object.keys(known.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const unknown = await ask('OPTIONS', '/api/v1/nowhere');
    expect([unknown.status, unknown.json]).toEqual([404, notFound('No route: OPTIONS /api/v1/nowhere does not exist.')]);
  });
});

describe('what of the request the answer shows', () => {
  it('never the query string, nor anything of the body', async () => {
    const res = await ask('POST', '/api/v1/sessions', 'card_number=4111111111111111&token=abc');
    expect(res.json?.error_message).toBe('No route: POST /api/v1/sessions does not exist.');
    expect(res.body).not.toMatch(/4111|abc|card_number/);
  });

  it.each([
    ['markup and quotes', '/<script>alert("x")</script>', '/%3Cscript%3Ealert(%22x%22)%3C/script%3E'],
    ['spaces, controls and a backslash', '/a b\r\nSet-Cookie:x\\y\t', '/a%20b%0D%0ASet-Cookie:x%5Cy%09'],
    ['braces, pipes, carets, backticks', '/{token}|^`', '/%7Btoken%7D%7C%5E%60'],
    ['letters beyond ASCII, as UTF-8 escapes', '/api/v1/sesión', '/api/v1/sesi%C3%B3n'],
    ['an emoji, and a lone surrogate', '/pay/💳/\ud800', '/pay/%F0%9F%92%B3/%EF%BF%BD'],
    ['bidirectional overrides', '/a\u202eb', '/a%E2%80%AEb'],
    ['escapes as sent, in upper-case hex', '/api/v1/sesi%c3%b3n', '/api/v1/sesi%C3%B3n'],
    ['an encoded slash stays encoded', '/api%2Fv1%2fsession', '/api%2Fv1%2Fsession'],
    ['a % that starts no escape, escaped itself', '/100%/a%zz/%4', '/100%25/a%25zz/%254'],
    ['the characters a path may carry as they are', "/a-b_c.d~e!f$g&h'i(j)k*l+m,n;o=p:q@r", "/a-b_c.d~e!f$g&h'i(j)k*l+m,n;o=p:q@r"],
    ['an empty path as /', '', '/'],
  ])('%s', (_what, path, shown) => {
    expect(shownPath(path)).toBe(shown);
    expect(shownPath(path)).toMatch(/^[\x21-\x7e]+$/);
  });

  it('masks anything shaped like a card number, also split by escaped separators', () => {
    expect(shownPath('/pay/4111111111111111')).toBe('/pay/411111******1111');
    expect(shownPath('/pay/4111%201111%201111%201111/x')).toBe('/pay/411111******1111/x');
    expect(shownPath('/pay/4111-1111-1111-1111')).toBe('/pay/411111******1111');
  });

  it(`cuts a long path after ${MAX_SHOWN_PATH} characters, never inside an escape`, async () => {
    const long = `/api/v1/${'a'.repeat(20_000)}`;
    expect(shownPath(long)).toBe(`${long.slice(0, MAX_SHOWN_PATH)}…`);
    const res = await ask('POST', long);
    expect(res.status).toBe(404);
    expect(res.body.length).toBeLessThan(300);
    expect(res.json?.error_message).toBe(`No route: POST ${long.slice(0, MAX_SHOWN_PATH)}… does not exist.`);
    // 98 characters, then é (%C3%A9): the cut would leave `%C`; it leaves the whole escape out.
    const accented = `/${'b'.repeat(97)}é`;
    expect(shownPath(accented)).toBe(`/${'b'.repeat(97)}…`);
    expect(shownPath(`/${'b'.repeat(96)}é`)).toBe(`/${'b'.repeat(96)}%C3…`);
    // Each character may take up to twelve when escaped: still at most MAX_SHOWN_PATH.
    expect(shownPath(`/${'💳'.repeat(5000)}`).length).toBeLessThanOrEqual(MAX_SHOWN_PATH + 1);
  });

  it('shows the method in upper case, letters and dashes only, at most 20', () => {
    expect(shownMethod('get')).toBe('GET');
    expect(shownMethod('M-SEARCH')).toBe('M-SEARCH');
    expect(shownMethod('PO<b>ST')).toBe('POBST');
    expect(shownMethod('X'.repeat(50))).toBe('X'.repeat(20));
    expect(shownMethod('123')).toBe('?');
  });
});

describe('the function', () => {
  it('is declared with no table and no secrets access', () => {
    expect(FALLBACK_ROUTE.access).toEqual({ table: { items: {}, indexes: [] }, merchantSecrets: false });
    expect(FALLBACK_ROUTE.entry).toBe('lambdas/handlers/not-found.ts');
  });

  it('bundles the route table but no AWS SDK client, no zod and no page code', async () => {
    const result = await build({
      ...esbuildApiOptions(),
      entryPoints: [join(PROJECT_ROOT, FALLBACK_ROUTE.entry)],
      outfile: join(PROJECT_ROOT, 'not-found.mjs'),
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('lib/routes.ts');
    const unwanted = /node_modules\/(@aws-sdk\/|@smithy\/|zod\/)|^lambdas\/(adapters|use-cases|checkout-page|admin-portal|container)/;
    expect(inputs.filter((i) => unwanted.test(i))).toEqual([]);
    const bundle = result.outputFiles.find((f) => f.path.endsWith('.mjs'))!;
    expect(bundle.contents.length).toBeLessThan(100_000);
  });
});
