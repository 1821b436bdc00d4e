/**
 * The portal's browser script: it signs the operator in and renders every view from the admin
 * API. Bundled for the browser by lib/portal-script.ts and inlined into the page with its CSP nonce.
 */
import { hostedSignIn, type PortalSignIn } from '../hosted-sign-in';
import { api, newView, SIGNED_OUT } from './api';
import { byId, say } from './dom';
import { renderChrome, session, signOut, token } from './session';
import { auditView } from './views/audit';
import { disputesView } from './views/disputes';
import { accountsView } from './views/accounts';
import { merchantsView, merchantView } from './views/merchants';
import { paymentView } from './views/payment';
import { paymentsView } from './views/payments';
import { queueView } from './views/queue';
import { finishHostedSignIn, signInView, startSession } from './views/sign-in';

/** What the page tells the script (page.ts): the payment statuses to search by, and how operators sign in. */
const pageData = <T>(id: string): T => JSON.parse(byId(id).textContent ?? 'null') as T;
const STATUSES = pageData<readonly string[]>('statuses');
const SIGN_IN = pageData<PortalSignIn>('sign-in');

/** Shows the view the address's fragment names ('#/payments/…', '#/queue', …). */
function route(): void {
  // Only '#/…' is a route; any other fragment (the skip link's '#main') is not a page to show.
  if (location.hash && !location.hash.startsWith('#/')) return;
  newView();
  // A tab signed in before its session was read (a reload meanwhile): read it first.
  const kept = token();
  if (kept && !session()) {
    startSession(kept, route).catch((e: Error) => {
      if (e.message === SIGNED_OUT) return;
      say(e.message, 'error');
      location.hash = '#/sign-in';
    });
    return;
  }
  renderChrome();
  const [where = '', search = ''] = (location.hash || '#/payments').slice(2).split('?');
  const path = where.split('/');
  const params = Object.fromEntries(new URLSearchParams(search));
  if (!kept) {
    if (path[0] !== 'sign-in') location.hash = '#/sign-in';
    else signInView(SIGN_IN, route);
    return;
  }
  say('');
  if (path[0] === 'payments' && path[1]) return paymentView(decodeURIComponent(path[1]));
  if (path[0] === 'queue') return queueView();
  if (path[0] === 'merchants' && path[1]) return merchantView(decodeURIComponent(path[1]));
  if (path[0] === 'merchants') return merchantsView();
  if (path[0] === 'audit') return auditView(params);
  if (path[0] === 'disputes') return disputesView(params);
  if (path[0] === 'accounts') return accountsView();
  if (path[0] === 'sign-in') {
    location.hash = '#/payments';
    return;
  }
  return paymentsView(params, STATUSES);
}

byId('sign-out').addEventListener('click', () => {
  // Recorded in the audit log (the token is read as the request leaves); the tab forgets the token whatever the answer.
  const recorded = api('AdminSignOut', { body: {} }).catch(() => undefined);
  signOut();
  // On AWS the sign-in pages keep a session of their own: end it too, once the sign-out is recorded.
  if (SIGN_IN.kind === 'cognito') return void recorded.then(() => location.assign(hostedSignIn().logoutUrl(SIGN_IN)));
  say('Signed out.', 'ok');
});
// On a phone the sections fold behind "Menu" (styles.ts); elsewhere the button is not shown.
byId('menu').addEventListener('click', () => {
  const open = byId('menu').getAttribute('aria-expanded') !== 'true';
  byId('menu').setAttribute('aria-expanded', String(open));
  document.querySelector('.top')?.classList.toggle('menu-open', open);
});
// The skip link moves focus to the content and leaves the route (the URL fragment) alone.
document.querySelector('.skip')?.addEventListener('click', (e) => {
  e.preventDefault();
  byId('main').focus();
});
window.addEventListener('hashchange', route);
const returned = new URLSearchParams(location.search);
if (SIGN_IN.kind === 'cognito' && (returned.has('code') || returned.has('error'))) finishHostedSignIn(SIGN_IN, returned, route);
else route();
