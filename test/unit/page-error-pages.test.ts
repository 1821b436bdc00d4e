import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { lambdaContext } from '../../local/lambda-context';
import { pageEndpoint } from '../../lambdas/middleware/page-endpoint';

/**
 * A page that fails answers 500 with an error page of its own kind, saying nothing of the failure:
 * the customer's pages in the browser's language, the operators' portal in English with what an
 * operator can do (not the customer's "open this payment link again"). The CSP's nonce covers the
 * page's inline style.
 */
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const event = (headers: Record<string, string> = {}): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: 'GET /x',
    rawPath: '/x',
    rawQueryString: '',
    headers,
    requestContext: { http: { method: 'GET', path: '/x', protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' }, requestId: 'r', timeEpoch: Date.now() },
    isBase64Encoded: false,
  }) as unknown as APIGatewayProxyEventV2;
const invoke = async (handler: unknown, e: APIGatewayProxyEventV2, context: Context = lambdaContext('Page', 10)) =>
  (await (handler as (e: APIGatewayProxyEventV2, c: Context) => Promise<APIGatewayProxyStructuredResultV2>)(e, context)) as APIGatewayProxyStructuredResultV2 & { body: string; headers: Record<string, string> };
const nonceOf = (csp: string | undefined) => /'nonce-([^']+)'/.exec(csp ?? '')?.[1];

describe("a customer's page that fails", () => {
  const failing = pageEndpoint(async () => {
    throw new Error('table unreachable: secret detail');
  }, () => ({}));

  it.each([
    ['de-DE,de;q=0.9', 'Etwas ist schiefgelaufen', 'lang="de"'],
    ['en', 'Something went wrong', 'lang="en"'],
  ])('answers 500 in the language asked for (%s)', async (language, title, lang) => {
    const res = await invoke(failing, event({ 'accept-language': language }));
    expect(res.statusCode).toBe(500);
    expect(res.body).toContain(title);
    expect(res.body).toContain(lang);
    expect(res.body).not.toContain('secret detail');
    expect(res.body).toContain(`nonce="${nonceOf(res.headers['content-security-policy'])}"`);
  });
});

describe("the operators' portal when it cannot be made", () => {
  const saved = { ...process.env };
  beforeEach(() => {
    Object.assign(process.env, { TABLE_NAME: 'checkout-test', MERCHANT_SECRET_PREFIX: 'checkout/test/merchants/', AWS_REGION: 'eu-west-1' });
  });
  afterEach(() => {
    process.env = { ...saved };
    jest.resetModules();
  });

  it("answers 500 with the portal's own page, in English, not the customer's", async () => {
    // Half a Cognito configuration: the portal refuses to guess how operators sign in.
    process.env.OPERATOR_SIGN_IN_URL = 'https://ops.auth.eu-west-1.amazoncognito.com';
    delete process.env.OPERATOR_CLIENT_ID;
    const { handler } = require('../../lambdas/handlers/admin-portal') as typeof import('../../lambdas/handlers/admin-portal');
    const res = await invoke(handler, event({ 'accept-language': 'de' }));
    expect(res.statusCode).toBe(500);
    expect(res.body).toContain('<html lang="en">');
    expect(res.body).toContain('The portal is unavailable');
    expect(res.body).not.toMatch(/payment link|Etwas ist schiefgelaufen|OPERATOR_CLIENT_ID/);
    expect(res.body).toContain(`nonce="${nonceOf(res.headers['content-security-policy'])}"`);
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('serves the portal once its configuration is whole', async () => {
    delete process.env.OPERATOR_SIGN_IN_URL;
    delete process.env.OPERATOR_CLIENT_ID;
    const { handler } = require('../../lambdas/handlers/admin-portal') as typeof import('../../lambdas/handlers/admin-portal');
    const res = await invoke(handler, event());
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<title>Checkout operations</title>');
  });
});
