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
 * The authorization code flow with PKCE (RFC 7636, S256) against Cognito's sign-in pages. Browser
 * code, serialized into the page beside client.ts (so it must not use imports or module-level
 * names); unit-tested in Node, which has the same Web Crypto.
 */
export function hostedSignIn() {
  'use strict';
  function base64url(bytes: Uint8Array): string {
    var text = '';
    for (var i = 0; i < bytes.length; i++) text += String.fromCharCode(bytes[i] as number);
    return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function form(params: Record<string, string>): string {
    return Object.keys(params).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(params[k] as string); }).join('&');
  }
  function challengeOf(verifier: string): Promise<string> {
    return crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)).then(function (digest) { return base64url(new Uint8Array(digest)); });
  }
  return {
    /** 256 random bits as 43 characters: a code verifier, or the state that ties the answer to this tab. */
    newSecret: function (): string {
      var bytes = new Uint8Array(32);
      crypto.getRandomValues(bytes);
      return base64url(bytes);
    },
    challengeOf: challengeOf,
    /** Where to send the operator: Cognito asks for the password and TOTP (enrolling it the first time). */
    authorizeUrl: function (config: CognitoSignIn, verifier: string, state: string): Promise<string> {
      return challengeOf(verifier).then(function (challenge) {
        return config.pagesUrl + '/oauth2/authorize?' + form({
          response_type: 'code',
          client_id: config.clientId,
          redirect_uri: config.redirectUri,
          scope: 'openid',
          state: state,
          code_challenge: challenge,
          code_challenge_method: 'S256',
        });
      });
    },
    /** The code, with the verifier only this tab knows, for the tokens (a form POST to the token endpoint). */
    tokenRequest: function (config: CognitoSignIn, code: string, verifier: string): { url: string; body: string } {
      return {
        url: config.pagesUrl + '/oauth2/token',
        body: form({ grant_type: 'authorization_code', client_id: config.clientId, code: code, redirect_uri: config.redirectUri, code_verifier: verifier }),
      };
    },
    /** Ends the session of Cognito's sign-in pages too, so the next sign-in asks for the password again. */
    logoutUrl: function (config: CognitoSignIn): string {
      return config.pagesUrl + '/logout?' + form({ client_id: config.clientId, logout_uri: config.redirectUri });
    },
  };
}

export type HostedSignIn = ReturnType<typeof hostedSignIn>;
