import { jsonForScript } from '../checkout-page/html';
import type { Config } from '../config';
import { PAYMENT_STATUSES } from '../domain/payment';
import type { PortalSignIn } from './hosted-sign-in';
import { portalScript } from './script';
import { portalStyles } from './styles';

/**
 * How this deployment signs operators in: Cognito's sign-in pages where the stack configured them
 * (returning to PUBLIC_BASE_URL/admin, the client's only callback URL), else the local runner's form.
 */
export function portalSignInOf(config: Pick<Config, 'OPERATOR_SIGN_IN_URL' | 'OPERATOR_CLIENT_ID' | 'PUBLIC_BASE_URL'>): PortalSignIn {
  if (!config.OPERATOR_SIGN_IN_URL && !config.OPERATOR_CLIENT_ID) return { kind: 'local' };
  if (!config.OPERATOR_SIGN_IN_URL || !config.OPERATOR_CLIENT_ID || !config.PUBLIC_BASE_URL) {
    throw new Error('Invalid configuration: the admin portal needs OPERATOR_SIGN_IN_URL, OPERATOR_CLIENT_ID and PUBLIC_BASE_URL together');
  }
  return { kind: 'cognito', pagesUrl: config.OPERATOR_SIGN_IN_URL.replace(/\/+$/, ''), clientId: config.OPERATOR_CLIENT_ID, redirectUri: `${config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/admin` };
}

/** The head of the portal's pages: English, no referrer, the style under the response's nonce. */
const portalHead = (nonce: string, title: string, styles: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${title}</title>
<style nonce="${nonce}">${styles}</style>
</head>`;

/**
 * The portal's page when it could not be made (its configuration unreadable, say): for an operator,
 * in English as the portal is, with what to do; nothing of the failure itself (the log has it).
 */
export function renderPortalError(nonce: string): string {
  return `${portalHead(nonce, 'Checkout operations: the portal is unavailable', 'body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:2rem 1rem;color:#1a1a1a;background:#f6f7f9}main{max-width:36rem;margin:0 auto}h1{font-size:1.375rem;margin:0 0 .5rem}')}
<body>
<main>
<h1>The portal is unavailable</h1>
<p>The operators' portal could not be loaded. Reload the page in a moment; if it keeps failing, the service's logs say why.</p>
</main>
</body>
</html>`;
}

/**
 * The operators' portal: one page whose script signs the operator in and renders every view from
 * the admin API (the token is sent as a bearer header, never as a cookie). Nothing sensitive is in
 * the page itself, so it needs no authorization; every API route behind it does.
 */
export function renderPortal(nonce: string, signIn: PortalSignIn = { kind: 'local' }): string {
  return `${portalHead(nonce, 'Checkout operations', portalStyles)}
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand">Checkout operations</p>
<button type="button" id="menu" class="menu secondary" aria-expanded="false" aria-controls="nav" hidden>Menu</button>
<nav aria-label="Sections" id="nav" hidden>
<a href="#/payments" data-nav="payments">Payments</a>
<a href="#/queue" data-nav="queue">Capture queue</a>
<a href="#/merchants" data-nav="merchants">Merchants</a>
<a href="#/accounts" data-nav="accounts">Accounts</a>
<a href="#/disputes" data-nav="disputes">Disputes</a>
<a href="#/audit" data-nav="audit">Audit log</a>
</nav>
<p class="who" id="who" hidden><span id="who-name"></span> <button type="button" id="sign-out" class="link">Sign out</button></p>
</header>
<main id="main" tabindex="-1">
<div id="status" role="status" aria-live="polite" class="status"></div>
<div id="view"></div>
</main>
<script type="application/json" id="statuses">${jsonForScript(PAYMENT_STATUSES)}</script>
<script type="application/json" id="sign-in">${jsonForScript(signIn)}</script>
<script nonce="${nonce}">${portalScript()}</script>
</body>
</html>`;
}

/**
 * Only the page's own nonce'd style and script; API calls to this origin only, and on AWS to
 * Cognito's token endpoint; never framed.
 */
export const portalContentSecurityPolicy = (nonce: string, signIn: PortalSignIn = { kind: 'local' }): string =>
  [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    signIn.kind === 'cognito' ? `connect-src 'self' ${new URL(signIn.pagesUrl).origin}` : "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
