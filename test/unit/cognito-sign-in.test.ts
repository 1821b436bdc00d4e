import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { hostedSignIn, type CognitoSignIn } from '../../lambdas/admin-portal/hosted-sign-in';
import { portalContentSecurityPolicy, portalSignInOf, renderPortal } from '../../lambdas/admin-portal/page';
import { roleOf } from '../../lambdas/middleware/operator-endpoint';

/**
 * Operators on AWS sign in on Cognito's sign-in pages (ADR 0019): the portal's script sends them
 * there with an authorization code request and PKCE, exchanges the code for the ID token, and the
 * admin API reads their role from the token's `cognito:groups` as API Gateway hands it over.
 */
const COGNITO: CognitoSignIn = {
  kind: 'cognito',
  pagesUrl: 'https://checkout-prod-123456789012.auth.eu-west-1.amazoncognito.com',
  clientId: 'client1abc',
  redirectUri: 'https://pay.example.com/admin',
};
const flow = hostedSignIn();

describe('the authorization code flow with PKCE (S256)', () => {
  it('derives the challenge of RFC 7636 appendix B', async () => {
    await expect(flow.challengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).resolves.toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes verifiers and states of 256 random bits, as 43 URL-safe characters', () => {
    const secrets = Array.from({ length: 50 }, () => flow.newSecret());
    for (const s of secrets) expect(s).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set(secrets).size).toBe(secrets.length);
  });

  it('sends the operator to the authorize endpoint with the client, the portal as return address, the state and the challenge', async () => {
    const url = new URL(await flow.authorizeUrl(COGNITO, 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'state-1'));
    expect(url.origin + url.pathname).toBe(`${COGNITO.pagesUrl}/oauth2/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'client1abc',
      redirect_uri: 'https://pay.example.com/admin',
      scope: 'openid',
      state: 'state-1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
  });

  it('exchanges the code with the verifier (never a client secret) at the token endpoint', () => {
    const request = flow.tokenRequest(COGNITO, 'code-1', 'verifier-1');
    expect(request.url).toBe(`${COGNITO.pagesUrl}/oauth2/token`);
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      grant_type: 'authorization_code',
      client_id: 'client1abc',
      code: 'code-1',
      redirect_uri: 'https://pay.example.com/admin',
      code_verifier: 'verifier-1',
    });
  });

  it("signs out of the sign-in pages' own session too", () => {
    const url = new URL(flow.logoutUrl(COGNITO));
    expect(url.origin + url.pathname).toBe(`${COGNITO.pagesUrl}/logout`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ client_id: 'client1abc', logout_uri: 'https://pay.example.com/admin' });
  });
});

describe("the portal page's sign-in configuration", () => {
  const base = { OPERATOR_SIGN_IN_URL: COGNITO.pagesUrl, OPERATOR_CLIENT_ID: 'client1abc', PUBLIC_BASE_URL: 'https://pay.example.com' };

  it("uses Cognito's pages where the stack configured them, returning to PUBLIC_BASE_URL/admin", () => {
    expect(portalSignInOf(base)).toEqual(COGNITO);
    expect(portalSignInOf({})).toEqual({ kind: 'local' });
  });

  it('refuses half a configuration at cold start rather than falling back to a password form', () => {
    expect(() => portalSignInOf({ OPERATOR_SIGN_IN_URL: COGNITO.pagesUrl })).toThrow(/Invalid configuration/);
    expect(() => portalSignInOf({ OPERATOR_SIGN_IN_URL: COGNITO.pagesUrl, OPERATOR_CLIENT_ID: 'client1abc' })).toThrow(/PUBLIC_BASE_URL/);
  });

  it("lets the page reach Cognito's token endpoint and nothing else beyond its own origin", () => {
    expect(portalContentSecurityPolicy('n', COGNITO)).toContain(`connect-src 'self' ${COGNITO.pagesUrl};`);
    expect(portalContentSecurityPolicy('n')).toContain("connect-src 'self';");
    const embedded = /<script type="application\/json" id="sign-in">([^<]*)<\/script>/.exec(renderPortal('n', COGNITO))?.[1];
    expect(JSON.parse(embedded ?? 'null')).toEqual(COGNITO);
  });
});

describe("the operator's role from the verified token", () => {
  const event = (claims: Record<string, unknown>) => ({ requestContext: { authorizer: { jwt: { claims } } } }) as unknown as APIGatewayProxyEventV2;

  it.each([
    ['one group, as API Gateway hands it over', { 'cognito:groups': '[viewer]' }, 'viewer'],
    ['several groups: the strongest', { 'cognito:groups': '[viewer admin operator]' }, 'admin'],
    ['an array (a direct invocation)', { 'cognito:groups': ['operator', 'viewer'] }, 'operator'],
    ['groups that are not roles are ignored', { 'cognito:groups': '[finance operator]' }, 'operator'],
    ['no group', { 'cognito:groups': '[]' }, undefined],
    ['no groups claim at all', {}, undefined],
    ["the local runner's role claim", { role: 'operator' }, 'operator'],
    ['a role claim that is not a role', { role: 'root' }, undefined],
    ["Cognito's groups win over a role claim", { 'cognito:groups': '[viewer]', role: 'admin' }, 'viewer'],
  ])('%s', (_case, claims, role) => {
    expect(roleOf(event(claims))).toBe(role);
  });
});
