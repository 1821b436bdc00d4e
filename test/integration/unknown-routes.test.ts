import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ERRORS } from '../../lambdas/domain/errors';
import { handler as fallback } from '../../lambdas/handlers/not-found';
import { FALLBACK_ROUTE, FALLBACK_ROUTE_KEY } from '../../lib/routes';
import type { HttpAnswer } from '../support/http';
import { startTestService, type TestService } from '../support/service';

/**
 * Requests no route takes, through the local runner over HTTP: the `$default` route's function
 * answers them (404, or 405 with Allow) in the error envelope, as it does behind API Gateway, and
 * the runner logs each with its reason. API Gateway's own answers (413, 401) stay as they were.
 */
let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

const last = () => service.refusals.at(-1) ?? '';
const JSON_TYPE = 'application/json; charset=utf-8';
const notFound = (message: string) => ({ error_code: ERRORS.ROUTE_NOT_FOUND.code, error_message: message, errors: [] });
const notAllowed = (message: string) => ({ error_code: ERRORS.METHOD_NOT_ALLOWED.code, error_message: message, errors: [] });
const send = (method: string, path: string, body?: string): Promise<HttpAnswer> =>
  service.request({ method, path, headers: body === undefined ? {} : { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body }) });

describe('a path no route has', () => {
  it('is 404 in the error envelope, logged with its reason', async () => {
    const res = await send('POST', '/api/v1/sesion', '{"merchant_key":"k"}');
    expect([res.status, res.json]).toEqual([404, notFound('No route: POST /api/v1/sesion does not exist.')]);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(res.headers.allow).toBeUndefined();
    expect(last()).toBe('refused POST NotFound ($default) 404: No route: POST /api/v1/sesion does not exist.');
  });

  it('under /admin is the same envelope, with or without an operator token: never a 401', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-token' }] as Record<string, string>[]) {
      const res = await service.request({ method: 'GET', path: '/admin/api/paymens', headers });
      expect([res.status, res.json]).toEqual([404, notFound('No route: GET /admin/api/paymens does not exist.')]);
    }
  });

  it('past the recurring alias: any other spelling is 404 in the same envelope, whichever function answers', async () => {
    const posted = await send('POST', '/api/v1/payment/recurrng', '{}');
    expect([posted.status, posted.json]).toEqual([404, notFound('No route: POST /api/v1/payment/recurrng does not exist.')]);
    expect(last()).toBe('refused POST RecurringPaymentCyrillic (POST /api/v1/payment/{alias}) 404: No route: POST /api/v1/payment/recurrng does not exist.');
    const got = await send('GET', '/api/v1/payment/recurrng');
    expect([got.status, got.json]).toEqual([404, notFound('No route: GET /api/v1/payment/recurrng does not exist.')]);
  });

  it('shows odd characters escaped, a long path cut short, never the query string', async () => {
    const odd = await send('GET', "/api/v1/<b>\"x\"</b>/sesión/%zz?card_number=4111111111111111");
    expect(odd.json).toEqual(notFound('No route: GET /api/v1/%3Cb%3E%22x%22%3C/b%3E/sesi%C3%B3n/%25zz does not exist.'));
    const long = await send('GET', `/api/v1/${'x'.repeat(8000)}`);
    expect(long.status).toBe(404);
    expect((long.json as { error_message: string }).error_message).toBe(`No route: GET /api/v1/${'x'.repeat(92)}… does not exist.`);
    const card = await send('GET', '/pay/4111111111111111');
    expect(card.text).not.toContain('4111111111111111');
    expect(last()).toBe('refused GET NotFound ($default) 404: No route: GET /pay/411111******1111 does not exist.');
  });
});

describe('a path that exists, with another method', () => {
  it('is 405 with Allow, logged with its reason', async () => {
    const res = await send('GET', '/api/v1/session');
    expect([res.status, res.json, res.headers.allow]).toEqual([405, notAllowed('Method GET is not allowed on /api/v1/session; use POST.'), 'POST']);
    expect(res.headers['content-type']).toBe(JSON_TYPE);
    expect(last()).toBe('refused GET NotFound ($default) 405: Method GET is not allowed on /api/v1/session; use POST.');
  });

  it('under /admin needs no operator token to say so', async () => {
    const res = await send('DELETE', '/admin/api/payments');
    expect([res.status, res.json, res.headers.allow]).toEqual([405, notAllowed('Method DELETE is not allowed on /admin/api/payments; use GET.'), 'GET']);
  });

  it('matches a percent-encoded spelling as the route it is', async () => {
    const res = await send('PUT', '/api/v1/payment/%76oid', '{}');
    expect([res.status, res.json]).toEqual([405, notAllowed('Method PUT is not allowed on /api/v1/payment/void; use POST.')]);
  });

  it('HEAD: the same refusal without a body; OPTIONS: 204 with Allow, not logged as refused', async () => {
    const head = await send('HEAD', '/auth/some-token');
    expect([head.status, head.headers.allow, head.text]).toEqual([405, 'GET, POST', '']);
    expect(last()).toBe('refused HEAD NotFound ($default) 405');
    const refusals = service.refusals.length;
    const options = await send('OPTIONS', '/auth/some-token');
    expect([options.status, options.headers.allow, options.text]).toEqual([204, 'GET, POST', '']);
    expect(service.refusals.length).toBe(refusals);
  });
});

describe('the runner and the cloud agree', () => {
  const context = { functionName: 'not-found', awsRequestId: 'r', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
  /** The function as Lambda runs it, given the event API Gateway would build. */
  const inLambda = async (method: string, path: string) =>
    (await fallback(
      {
        version: '2.0',
        routeKey: FALLBACK_ROUTE_KEY,
        rawPath: path,
        rawQueryString: '',
        headers: {},
        requestContext: { requestId: 'r', routeKey: FALLBACK_ROUTE_KEY, stage: '$default', http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: '' } },
        isBase64Encoded: false,
      } as unknown as APIGatewayProxyEventV2,
      context,
    )) as APIGatewayProxyStructuredResultV2;

  it.each([
    ['GET', '/'],
    ['GET', '/api/v1/payment/status'],
    ['POST', '/api/v1/payment/statuses'],
    ['PUT', '/admin/api/merchants/m-1/callbacks/dead'],
    ['POST', '/admin/api/session/x'],
    ['GET', '/sandbox/challenge/k-1/x'],
    ['PUT', '/sandbox/challenge/k-1'],
    ['GET', '/acquirer/s2s-card/notify'],
  ])('%s %s', async (method, path) => {
    const [local, cloud] = [await send(method, path), await inLambda(method, path)];
    expect([local.status, local.headers.allow, local.json]).toEqual([cloud.statusCode, cloud.headers?.allow, JSON.parse(cloud.body!)]);
  });

  it('the fallback touches no table', () => {
    expect(service.tableAccess.observed().filter((c) => c.fn === FALLBACK_ROUTE.id)).toEqual([]);
  });
});

describe("API Gateway's own answers stay", () => {
  const tooLarge = 'x'.repeat(10 * 1024 * 1024 + 1);

  it('413 for a body over 10 MB, on an unknown path as on a route', async () => {
    const unknown = await send('POST', '/api/v1/nowhere', tooLarge);
    expect([unknown.status, unknown.json]).toEqual([413, { message: 'Request Entity Too Large' }]);
    expect(last()).toBe('refused POST NotFound ($default) 413: Request Entity Too Large');
    const known = await send('POST', '/api/v1/session', tooLarge);
    expect([known.status, known.json]).toEqual([413, { message: 'Request Entity Too Large' }]);
  });

  it('401 on an operator route without a token', async () => {
    const res = await send('GET', '/admin/api/payments');
    expect([res.status, res.json]).toEqual([401, { message: 'Unauthorized' }]);
  });
});
