import { ADMIN_API, type AdminRouteId } from '../../../lib/admin-api';
import { byId, say } from './dom';

/** The operator's token and what GET /admin/api/session said of it, kept for this tab only. */
export interface OperatorSession {
  readonly username: string;
  readonly role: string;
  /** `METHOD /path` of every route the role may call. */
  readonly routes: readonly string[];
}

const store = window.sessionStorage;

export const token = (): string | null => store.getItem('operator-token');

export function session(): OperatorSession | null {
  try {
    return JSON.parse(store.getItem('operator-session') ?? 'null') as OperatorSession | null;
  } catch {
    return null;
  }
}

export function keepSession(accessToken: string, s?: OperatorSession): void {
  store.setItem('operator-token', accessToken);
  if (s) store.setItem('operator-session', JSON.stringify(s));
}

/**
 * Whether the operator's role may call the route: the portal shows a button only then; the API
 * refuses it anyway.
 */
export function may(route: AdminRouteId): boolean {
  return session()?.routes?.includes(ADMIN_API[route]) ?? false;
}

export function forget(): void {
  store.removeItem('operator-token');
  store.removeItem('operator-session');
}

/** The navigation and the operator's name, shown when signed in; the current section marked. */
export function renderChrome(): void {
  const signedIn = Boolean(token());
  byId('nav').hidden = !signedIn;
  byId('menu').hidden = !signedIn;
  // A phone's menu closes when a section is shown.
  byId('menu').setAttribute('aria-expanded', 'false');
  document.querySelector('.top')?.classList.remove('menu-open');
  byId('who').hidden = !signedIn;
  const s = session();
  byId('who-name').textContent = signedIn && s ? `Signed in as ${s.username} (${s.role})` : '';
  const current = location.hash.split('/')[1] ?? '';
  document.querySelectorAll('[data-nav]').forEach((a) => {
    if (a.getAttribute('data-nav') === current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  });
}

export function signOut(message?: string): void {
  forget();
  renderChrome();
  location.hash = '#/sign-in';
  if (message) say(message, 'error');
}
