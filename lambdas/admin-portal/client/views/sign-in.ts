import { hostedSignIn, type CognitoSignIn, type PortalSignIn } from '../../hosted-sign-in';
import { api, ApiError, fail, SIGNED_OUT } from '../api';
import { el, field, say, show } from '../dom';
import { forget, keepSession, renderChrome, type OperatorSession } from '../session';

const store = window.sessionStorage;
const hosted = hostedSignIn();

/**
 * With a token: who it is, their role and the routes it allows (GET /admin/api/session); then
 * `next` shows the page (the payments, or the page the tab was on).
 */
export async function startSession(accessToken: string, next: () => void): Promise<void> {
  keepSession(accessToken);
  let s: OperatorSession;
  try {
    s = await api<OperatorSession>('AdminSession');
  } catch (e) {
    if (e instanceof Error && e.message === SIGNED_OUT) throw e;
    forget();
    renderChrome();
    throw new Error(e instanceof ApiError && e.body.error_code === 403000 ? 'Your operator account has no role in the portal yet: ask an administrator to give you one.' : (e as Error).message);
  }
  keepSession(accessToken, s);
  say('');
  next();
}

/** The payments, where a fresh sign-in lands. */
function toPayments(route: () => void): () => void {
  return () => {
    if (location.hash === '#/payments') route();
    else location.hash = '#/payments';
  };
}

export function signInView(signIn: PortalSignIn, route: () => void): void {
  if (signIn.kind === 'cognito') return hostedSignInView(signIn);
  const user = el('input', { name: 'username', autocomplete: 'username', required: true });
  const pass = el('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const form = el(
    'form',
    {
      class: 'signin',
      novalidate: true,
      onsubmit: (e: Event) => {
        e.preventDefault();
        if (!user.value || !pass.value) {
          say('Enter your user name and password.', 'error');
          (user.value ? pass : user).focus();
          return;
        }
        say('Signing in…');
        api<{ token: string }>('AdminSignIn', { body: { username: user.value, password: pass.value } })
          .then((r) => startSession(r.token, toPayments(route)))
          .catch((e: Error) => {
            say(e.message, 'error');
            pass.value = '';
            pass.focus();
          });
      },
    },
    field('User name', user),
    field('Password', pass),
    el('div', null, el('button', { type: 'submit', text: 'Sign in' })),
  );
  show('Sign in', form);
}

/** Cognito's sign-in pages: password and authenticator code there, then back here with a code for the token. */
function hostedSignInView(signIn: CognitoSignIn): void {
  const button = el('button', {
    type: 'button',
    text: 'Sign in',
    onclick: () => {
      button.disabled = true;
      const verifier = hosted.newSecret();
      const state = hosted.newSecret();
      store.setItem('pkce-verifier', verifier);
      store.setItem('pkce-state', state);
      void hosted.authorizeUrl(signIn, verifier, state).then((url) => location.assign(url));
    },
  });
  show(
    'Sign in',
    el('p', { text: 'Operators sign in on the sign-in page of this deployment, with their password and the code of their authenticator app (set up at the first sign-in).' }),
    el('div', null, button),
  );
}

/** The sign-in pages sent the operator back with ?code=…&state=… (or ?error=…). */
export function finishHostedSignIn(signIn: CognitoSignIn, params: URLSearchParams, route: () => void): void {
  const verifier = store.getItem('pkce-verifier');
  const state = store.getItem('pkce-state');
  store.removeItem('pkce-verifier');
  store.removeItem('pkce-state');
  // The code is single-use and must not stay in the address bar or the history.
  history.replaceState(null, '', `${location.pathname}#/sign-in`);
  route();
  if (params.get('error')) return say(`Sign-in failed: ${params.get('error_description') || params.get('error')}`, 'error');
  if (!verifier || !state || params.get('state') !== state) return say('This sign-in was not started in this tab. Sign in again.', 'error');
  say('Signing in…');
  const request = hosted.tokenRequest(signIn, params.get('code') ?? '', verifier);
  fetch(request.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: request.body, credentials: 'omit' })
    .then(async (res) => {
      const json = (await res.json().catch(() => ({}))) as { id_token?: string; error?: string };
      if (!res.ok || !json.id_token) throw new Error(`Sign-in failed: ${json.error || res.status}. Sign in again.`);
      return startSession(json.id_token, toPayments(route));
    })
    .catch(fail);
}
