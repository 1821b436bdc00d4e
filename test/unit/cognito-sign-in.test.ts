import { CognitoOperatorAuthenticator } from '../../lambdas/adapters/cognito/operator-auth';

/** Cognito's answers as its API gives them, through an injected fetch (no network in tests). */
type Call = { target: string; body: Record<string, unknown> };

function fakeCognito(answers: ((call: Call) => { status: number; body: unknown })[]) {
  const calls: Call[] = [];
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    const call = { target: String((init.headers as Record<string, string>)['x-amz-target']), body: JSON.parse(String(init.body)) as Record<string, unknown> };
    calls.push(call);
    const answer = answers[calls.length - 1]?.(call) ?? { status: 500, body: {} };
    return new Response(JSON.stringify(answer.body), { status: answer.status });
  }) as unknown as typeof fetch;
  return { calls, auth: new CognitoOperatorAuthenticator('eu-west-1', 'client-1', fetchImpl) };
}

describe('operator sign-in against Cognito', () => {
  it('exchanges user name and password for the ID token (USER_PASSWORD_AUTH)', async () => {
    const { calls, auth } = fakeCognito([() => ({ status: 200, body: { AuthenticationResult: { IdToken: 'id.jwt', ExpiresIn: 3600 } } })]);
    await expect(auth.signIn('alice', 'pw')).resolves.toEqual({ kind: 'signed-in', token: 'id.jwt', expiresInSeconds: 3600, username: 'alice' });
    expect(calls[0]).toEqual({
      target: 'AWSCognitoIdentityProviderService.InitiateAuth',
      body: { AuthFlow: 'USER_PASSWORD_AUTH', ClientId: 'client-1', AuthParameters: { USERNAME: 'alice', PASSWORD: 'pw' } },
    });
  });

  it('refuses wrong credentials without saying which part was wrong', async () => {
    const { auth } = fakeCognito([() => ({ status: 400, body: { __type: 'NotAuthorizedException' } })]);
    await expect(auth.signIn('alice', 'bad')).resolves.toEqual({ kind: 'refused' });
  });

  it('asks for the one-time code when the operator has TOTP, then answers the challenge with it', async () => {
    const challenge = () => ({ status: 200, body: { ChallengeName: 'SOFTWARE_TOKEN_MFA', Session: 'sess-1' } });
    const withoutCode = fakeCognito([challenge]);
    await expect(withoutCode.auth.signIn('alice', 'pw')).resolves.toEqual({ kind: 'mfa-required' });

    const withCode = fakeCognito([challenge, () => ({ status: 200, body: { AuthenticationResult: { IdToken: 'id.jwt', ExpiresIn: 3600 } } })]);
    await expect(withCode.auth.signIn('alice', 'pw', '123456')).resolves.toMatchObject({ kind: 'signed-in', token: 'id.jwt' });
    expect(withCode.calls[1]).toEqual({
      target: 'AWSCognitoIdentityProviderService.RespondToAuthChallenge',
      body: { ChallengeName: 'SOFTWARE_TOKEN_MFA', ClientId: 'client-1', Session: 'sess-1', ChallengeResponses: { USERNAME: 'alice', SOFTWARE_TOKEN_MFA_CODE: '123456' } },
    });
  });

  it('refuses a wrong one-time code', async () => {
    const { auth } = fakeCognito([
      () => ({ status: 200, body: { ChallengeName: 'SOFTWARE_TOKEN_MFA', Session: 's' } }),
      () => ({ status: 400, body: { __type: 'CodeMismatchException' } }),
    ]);
    await expect(auth.signIn('alice', 'pw', '000000')).resolves.toEqual({ kind: 'refused' });
  });

  it('reports a first sign-in that needs a permanent password', async () => {
    const { auth } = fakeCognito([() => ({ status: 200, body: { ChallengeName: 'NEW_PASSWORD_REQUIRED', Session: 's' } })]);
    await expect(auth.signIn('alice', 'temp')).resolves.toEqual({ kind: 'password-change-required' });
  });

  it('treats a Cognito outage as a failure, not as wrong credentials', async () => {
    const { auth } = fakeCognito([() => ({ status: 500, body: { __type: 'InternalErrorException' } })]);
    await expect(auth.signIn('alice', 'pw')).rejects.toThrow(/InternalErrorException/);
  });
});
