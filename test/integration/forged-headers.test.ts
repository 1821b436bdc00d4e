import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { publicBaseUrl } from '../../lambdas/middleware/base-url';
import { sessionBody } from '../support/payments';
import { signBody } from '../support/sign';
import { serviceForFile } from '../support/suites';

/**
 * Links are built from configuration only: a client's Host or X-Forwarded-* headers never decide
 * where a customer is sent. Before, `X-Forwarded-Host: evil.example` on a session answered
 * `redirect_url: https://evil.example/auth/…`, and on a pay POST sent the 3-D Secure step there.
 */
const FORGED = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', forwarded: 'host=evil.example;proto=https' };

const { service, merchants: [shop] } = serviceForFile({ merchants: [{}] });

it('a session created with forged host headers links to the configured base', async () => {
  const body = signBody('/api/v1/session', sessionBody(shop) as Record<string, unknown>, shop.password);
  const res = await service.request<{ redirect_url: string }>({ method: 'POST', path: '/api/v1/session', headers: { 'content-type': 'application/json', ...FORGED }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  expect(new URL(res.json.redirect_url).origin).toBe(service.baseUrl);
});

it('a pay POST with forged host headers sends the 3-D Secure step and its return to the configured base', async () => {
  const body = signBody('/api/v1/session', sessionBody(shop) as Record<string, unknown>, shop.password);
  const session = await service.request<{ redirect_url: string }>({ method: 'POST', path: '/api/v1/session', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const path = new URL(session.json.redirect_url).pathname;
  const form = new URLSearchParams({ card_number: '4111111111111111', card_expiry: '05/38', card_cvv: '123', card_holder: 'John Doe', email: 'john@example.com', country: 'US' });
  const paid = await service.request({ method: 'POST', path, headers: { 'content-type': 'application/x-www-form-urlencoded', ...FORGED }, body: form.toString() });
  expect(paid.status).toBe(303);
  const challenge = new URL(String(paid.headers.location), service.baseUrl);
  expect(challenge.origin).toBe(service.baseUrl);
  const answered = await fetch(challenge, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ code: '123456', decision: 'confirm', return: challenge.searchParams.get('return') ?? '' }).toString(),
  });
  await answered.text();
  expect(answered.status).toBe(303);
  expect(new URL(answered.headers.get('location') ?? '', challenge).origin).toBe(service.baseUrl);
});

describe('publicBaseUrl', () => {
  const event = (headers: Record<string, string>, domainName = 'abc123.execute-api.eu-west-1.amazonaws.com') =>
    ({ headers, requestContext: { domainName } }) as unknown as APIGatewayProxyEventV2;

  it('prefers the configured base (the stack sets the API URL or a custom domain)', () => {
    expect(publicBaseUrl(event(FORGED), 'https://pay.example.com/')).toBe('https://pay.example.com');
  });

  it('without one, takes the domain API Gateway received the request on, never a header', () => {
    expect(publicBaseUrl(event(FORGED))).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com');
  });
});
