import type { OperatorAuthenticator, SignInResult } from '../../ports/operators';

interface CognitoAnswer {
  ChallengeName?: string;
  Session?: string;
  AuthenticationResult?: { IdToken?: string; ExpiresIn?: number };
}

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

  async signIn(username: string, password: string, mfaCode?: string): Promise<SignInResult> {
    const first = await this.call('InitiateAuth', {
      AuthFlow: 'USER_PASSWORD_AUTH',
      ClientId: this.clientId,
      AuthParameters: { USERNAME: username, PASSWORD: password },
    });
    if (first === 'refused') return { kind: 'refused' };
    if (first.ChallengeName === 'NEW_PASSWORD_REQUIRED') return { kind: 'password-change-required' };
    if (first.ChallengeName === 'SOFTWARE_TOKEN_MFA') {
      if (!mfaCode) return { kind: 'mfa-required' };
      const second = await this.call('RespondToAuthChallenge', {
        ChallengeName: 'SOFTWARE_TOKEN_MFA',
        ClientId: this.clientId,
        Session: first.Session,
        ChallengeResponses: { USERNAME: username, SOFTWARE_TOKEN_MFA_CODE: mfaCode },
      });
      return second === 'refused' ? { kind: 'refused' } : this.tokens(second, username);
    }
    return this.tokens(first, username);
  }

  private tokens(answer: CognitoAnswer, username: string): SignInResult {
    const token = answer.AuthenticationResult?.IdToken;
    if (!token) return { kind: 'refused' };
    return { kind: 'signed-in', token, expiresInSeconds: answer.AuthenticationResult?.ExpiresIn ?? 3600, username };
  }

  private async call(operation: 'InitiateAuth' | 'RespondToAuthChallenge', input: unknown): Promise<CognitoAnswer | 'refused'> {
    const res = await this.fetchImpl(`https://cognito-idp.${this.region}.amazonaws.com/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `AWSCognitoIdentityProviderService.${operation}` },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json().catch(() => ({}))) as CognitoAnswer & { __type?: string };
    if (res.ok) return body;
    if (/NotAuthorized|UserNotFound|InvalidParameter|PasswordResetRequired|UserNotConfirmed|CodeMismatch|ExpiredCode/.test(body.__type ?? '')) return 'refused';
    throw new Error(`Cognito ${operation} failed with ${res.status} ${body.__type ?? ''}`);
  }
}
