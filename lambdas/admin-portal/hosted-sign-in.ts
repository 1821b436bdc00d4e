/** How the portal signs operators in: the local runner's own form, or Cognito's sign-in pages (ADR 0019). */
export type PortalSignIn =
  | { readonly kind: 'local' }
  | {
      readonly kind: 'cognito';
      /** https://<prefix>.auth.<region>.amazoncognito.com */
      readonly pagesUrl: string;
      /** The public app client the portal uses there (no secret: PKCE instead). */
      readonly clientId: string;
      /** The portal's own address, registered on the client as its only callback and sign-out URL. */
      readonly redirectUri: string;
    };

export type CognitoSignIn = Extract<PortalSignIn, { kind: 'cognito' }>;

/**
 * The authorization code flow with PKCE (RFC 7636, S256) against Cognito's sign-in pages: part of
 * the portal's browser script (client/), unit-tested in Node, which has the same Web Crypto.
 */
export function hostedSignIn() {
  const base64url = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const form = (params: Record<string, string>): string =>
    Object.entries(params)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
      .join('&');
  const challengeOf = async (verifier: string): Promise<string> => base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  return {
    /** 256 random bits as 43 characters: a code verifier, or the state that ties the answer to this tab. */
    newSecret: (): string => base64url(crypto.getRandomValues(new Uint8Array(32))),
    challengeOf,
    /** Where to send the operator: Cognito asks for the password and TOTP (enrolling it the first time). */
    authorizeUrl: async (config: CognitoSignIn, verifier: string, state: string): Promise<string> =>
      `${config.pagesUrl}/oauth2/authorize?${form({
        response_type: 'code',
        client_id: config.clientId,
        redirect_uri: config.redirectUri,
        scope: 'openid',
        state,
        code_challenge: await challengeOf(verifier),
        code_challenge_method: 'S256',
      })}`,
    /** The code, with the verifier only this tab knows, for the tokens (a form POST to the token endpoint). */
    tokenRequest: (config: CognitoSignIn, code: string, verifier: string): { url: string; body: string } => ({
      url: `${config.pagesUrl}/oauth2/token`,
      body: form({ grant_type: 'authorization_code', client_id: config.clientId, code, redirect_uri: config.redirectUri, code_verifier: verifier }),
    }),
    /** Ends the session of Cognito's sign-in pages too, so the next sign-in asks for the password again. */
    logoutUrl: (config: CognitoSignIn): string => `${config.pagesUrl}/logout?${form({ client_id: config.clientId, logout_uri: config.redirectUri })}`,
  };
}

export type HostedSignIn = ReturnType<typeof hostedSignIn>;
