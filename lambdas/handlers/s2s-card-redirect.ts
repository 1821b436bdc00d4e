import { pageEndpoint } from '../middleware/page-endpoint';
import { acquirerDeps } from '../wiring/acquirer';
import { htmlResponse, newNonce, contentSecurityPolicy } from '../checkout-page/headers';
import { renderState } from '../checkout-page/render';
import { verifiedRedirect, type WireRedirect } from '../adapters/s2s-card/transformers';
import { paymentIdOfKey } from '../adapters/s2s-card/records';

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The auto-submitting form the CARD Guide asks for: one hidden input per parameter, a button without scripts. */
export function redirectPage(redirect: WireRedirect, nonce: string): string {
  const target = new URL(redirect.url);
  // A GET form replaces the action's query: its parameters become inputs (the guide's first option).
  const params = redirect.method === 'GET' ? { ...Object.fromEntries(target.searchParams), ...redirect.params } : redirect.params;
  if (redirect.method === 'GET') target.search = '';
  const inputs = Object.entries(params)
    .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Confirm the payment</title></head>
<body><form id="redirect" method="${redirect.method.toLowerCase()}" action="${esc(target.toString())}">
${inputs}
<p>You are taken to your bank to confirm the payment.</p>
<noscript><button type="submit">Continue</button></noscript>
</form><script nonce="${esc(nonce)}">document.getElementById('redirect').submit();</script></body></html>`;
}

/**
 * GET /acquirer/s2s-card/redirect?r=…&s=…: sends the customer on to the gateway's 3-D Secure or
 * bank page. The redirect travels in the link, signed with a key derived from the gateway password
 * (transformers.ts), so this page can only ever post to where the gateway said, and only while the
 * link has not expired and its attempt still waits for the customer.
 */
export const handler = pageEndpoint(async (event, deps) => {
  const nonce = newNonce();
  const notFound = () => htmlResponse(404, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  if (!deps.s2sCard) return notFound();
  // Our own link, signed with the stage account's password whatever account the payment goes through.
  const { password } = await deps.s2sCard.settings.account();
  const redirect = verifiedRedirect(event.queryStringParameters?.r, event.queryStringParameters?.s, password, deps.clock.now().getTime());
  if (!redirect) return htmlResponse(400, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  // The link lives as long as its attempt waits for the customer: once the attempt has an answer
  // (or was closed) nobody is sent to the gateway's page with it again.
  const attempt = await deps.s2sCard.records.entry(paymentIdOfKey(redirect.key), redirect.key);
  if (attempt?.state !== 'action') return htmlResponse(410, renderState({ kind: 'not-found' }, { nonce }), contentSecurityPolicy(nonce), false);
  const csp = ["default-src 'none'", `script-src 'nonce-${nonce}'`, `form-action ${new URL(redirect.url).origin}`, "frame-ancestors 'none'", "base-uri 'none'"].join('; ');
  return htmlResponse(200, redirectPage(redirect, nonce), csp, false);
}, acquirerDeps);
