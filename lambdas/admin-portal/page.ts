import { jsonForScript } from '../checkout-page/html';
import { PAYMENT_STATUSES } from '../domain/payment';
import { portalScript } from './script';
import { portalStyles } from './styles';

/**
 * The operators' portal: one page whose script signs the operator in and renders every view from
 * the admin API (the token is sent as a bearer header, never as a cookie). Nothing sensitive is in
 * the page itself, so it needs no authorization; every API route behind it does.
 */
export function renderPortal(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>Checkout operations</title>
<style nonce="${nonce}">${portalStyles}</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<p class="brand">Checkout operations</p>
<nav aria-label="Sections" id="nav" hidden>
<a href="#/payments" data-nav="payments">Payments</a>
<a href="#/queue" data-nav="queue">Capture queue</a>
<a href="#/merchants" data-nav="merchants">Merchants</a>
<a href="#/audit" data-nav="audit">Audit log</a>
</nav>
<p class="who" id="who" hidden><span id="who-name"></span> <button type="button" id="sign-out" class="link">Sign out</button></p>
</header>
<main id="main" tabindex="-1">
<div id="status" role="status" aria-live="polite" class="status"></div>
<div id="view"></div>
</main>
<script type="application/json" id="statuses">${jsonForScript(PAYMENT_STATUSES)}</script>
<script nonce="${nonce}">${portalScript}</script>
</body>
</html>`;
}

/** Only the page's own nonce'd style and script; API calls to this origin only; never framed. */
export const portalContentSecurityPolicy = (nonce: string): string =>
  [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
