import type { OperatorAuthenticator, SignInResult } from '../../ports/operators';

/**
 * Signs operators in against the Cognito user pool (USER_PASSWORD_AUTH on the app client). The ID
 * token it returns is what the HTTP API's JWT authorizer verifies on every admin route. Cognito's
 * InitiateAuth is a public, unsigned call, so no SDK client is bundled for it.
 */
export class CognitoOperatorAuthenticator implements OperatorAuthenticator {
  constructor(
    private readonly region: string,
    private readonly clientId: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  async signIn(username: string, password: string): Promise<SignInResult> {
    const res = await this.fetchImpl(`https://cognito-idp.${this.region}.amazonaws.com/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSCognitoIdentityProviderService.InitiateAuth' },
      body: JSON.stringify({ AuthFlow: 'USER_PASSWORD_AUTH', ClientId: this.clientId, AuthParameters: { USERNAME: username, PASSWORD: password } }),
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json().catch(() => ({}))) as {
      __type?: string;
      ChallengeName?: string;
      AuthenticationResult?: { IdToken?: string; ExpiresIn?: number };
    };
    if (!res.ok) {
      if (/NotAuthorized|UserNotFound|InvalidParameter|PasswordResetRequired|UserNotConfirmed/.test(body.__type ?? '')) return { kind: 'refused' };
      throw new Error(`Cognito sign-in failed with ${res.status} ${body.__type ?? ''}`);
    }
    if (body.ChallengeName === 'NEW_PASSWORD_REQUIRED') return { kind: 'password-change-required' };
    const token = body.AuthenticationResult?.IdToken;
    if (!token) return { kind: 'refused' };
    return { kind: 'signed-in', token, expiresInSeconds: body.AuthenticationResult?.ExpiresIn ?? 3600, username };
  }
}
