import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { DepsWithCallbacks } from '../lambdas/callback-container';
import { esc } from '../lambdas/checkout-page/html';
import { callbacksOf } from './merchant-callbacks';
import { merchantRequest, RunnerUnreachable, type MerchantCredentials } from './merchant-requests';

/**
 * The local runner's own pages, outside the route table (they are no part of the service and never
 * deployed; docs/adr/0038-local-demo-pages.md): where the printed curl's success and cancel URLs
 * lead, the demo merchant's result page, and the stand-ins for the provider's terms and privacy
 * notice that the checkout page's footer links to locally (a deployed stage links its own).
 */
export const LOCAL_PAGE_PATHS = { result: '/local/result', terms: '/local/terms', privacy: '/local/privacy' } as const;

export interface LocalPagesOptions {
  /** Where the runner itself answers: the result page asks the real status route there. */
  readonly selfUrl: string;
  readonly demo: MerchantCredentials;
  readonly deps: DepsWithCallbacks;
  /** What goes before `npm run -s merchant` for it to reach this runner (`DATA_DIR=… `), and after the command (`--base-url …`). */
  readonly helper: { readonly prefix: string; readonly options: string };
}

type Answer = APIGatewayProxyStructuredResultV2;

/** The answer for a local page, or undefined for any other path (the route table's then). */
export function localPages(options: LocalPagesOptions): (method: string, url: URL) => Promise<Answer | undefined> {
  return async (method, url) => {
    const page = Object.entries(LOCAL_PAGE_PATHS).find(([, path]) => path === url.pathname)?.[0];
    if (!page) return undefined;
    if (method !== 'GET' && method !== 'HEAD') return { statusCode: 405, headers: { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' }, body: 'GET only\n' };
    if (page === 'result') return resultPage(options, url.searchParams);
    return page === 'terms' ? document('Terms of service', 'terms') : document('Privacy notice', 'privacy');
  };
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:1rem;color:#1a1a1a}
code,pre{font:14px/1.4 ui-monospace,monospace;background:#f4f5f7;border-radius:.25rem}pre{padding:.5rem .75rem;white-space:pre-wrap;overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{color:#4a4a4a}dd{margin:0;overflow-wrap:anywhere}
table{border-collapse:collapse}th,td{border:1px solid #d0d4da;padding:.25rem .5rem;text-align:left}.note{color:#4a4a4a}`;

function html(statusCode: number, title: string, body: string): Answer {
  const nonce = randomBytes(16).toString('base64');
  return {
    statusCode,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
      'referrer-policy': 'no-referrer',
    },
    body: `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${esc(title)}</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main>
<h1>${esc(title)}</h1>
${body}
</main></body>
</html>`,
  };
}

/** The placeholder of a provider's document: a real page, saying what stands where. */
function document(title: string, which: 'terms' | 'privacy'): Answer {
  return html(
    200,
    title,
    `<p>This is the local runner's placeholder for the payment provider's ${which === 'terms' ? 'terms of service' : 'privacy notice'}, which the checkout page's footer links to.</p>
<p class="note">A deployed stage links its own documents: <code>provider</code> in <code>lib/stages/&lt;stage&gt;.ts</code> (name, <code>termsUrl</code>, <code>privacyUrl</code>). Locally <code>PROVIDER_NAME</code>, <code>PROVIDER_TERMS_URL</code> and <code>PROVIDER_PRIVACY_URL</code> choose others (README).</p>`,
  );
}

interface StatusAnswer {
  payment_id?: string;
  date?: string;
  status?: string;
  reason?: string;
  order?: { number?: string; amount?: string; currency?: string; description?: string };
  error_message?: string;
  errors?: { error_message?: string }[];
}

/**
 * What a newcomer needs after paying: the payment as the demo merchant's status request sees it
 * (through the real route, signed), the callbacks the demo merchant was sent, and the merchant
 * commands to try next. The payment is the one the return parameters name (payment_id, when the
 * merchant has them on), else the latest of the order the URL names (status by order_id).
 */
async function resultPage(options: LocalPagesOptions, query: URLSearchParams): Promise<Answer> {
  const paymentId = query.get('payment_id') ?? undefined;
  const order = query.get('order') ?? undefined;
  const outcome = query.get('outcome') === 'cancel' ? 'cancel' : 'success';
  const title = 'Demo shop: back from the checkout';
  const came = `<p>The checkout sent the customer back to the demo shop's <code>${outcome === 'cancel' ? 'cancel_url' : 'success_url'}</code>. Which payment that was, and what it says, is for the shop to ask the API: this page asks as the demo merchant <code>${esc(options.demo.merchant_key)}</code> would.</p>`;
  if (!paymentId && !order) return html(400, title, `${came}<p>This address names no payment: it takes <code>payment_id=…</code> (the return parameters) or <code>order=…</code> (the order number).</p>`);
  let answer: { status: number; json: StatusAnswer };
  const fields = paymentId ? { payment_id: paymentId } : { order_id: order! };
  try {
    answer = (await merchantRequest(options.selfUrl, options.demo, 'status', fields)) as { status: number; json: StatusAnswer };
  } catch (e) {
    if (e instanceof RunnerUnreachable) return html(502, title, `${came}<p>The status request did not reach the runner: ${esc(e.message)}</p>`);
    throw e;
  }
  const request = `<p class="note">Asked: <code>POST /api/v1/payment/status</code> with <code>${esc(JSON.stringify({ merchant_key: options.demo.merchant_key, ...fields, hash: '…' }))}</code>, answered HTTP ${answer.status}.</p>`;
  if (answer.status !== 200 || !answer.json.payment_id) {
    const why = [answer.json.error_message, ...(answer.json.errors ?? []).map((e) => e.error_message)].filter(Boolean).join(' ');
    return html(
      answer.status === 404 ? 404 : 200,
      title,
      `${came}<p>No payment of the demo merchant was found for ${paymentId ? `payment <code>${esc(paymentId)}</code>` : `order <code>${esc(order)}</code>`}${why ? `: ${esc(why)}` : ''}.</p>${request}`,
    );
  }
  const p = answer.json;
  const id = p.payment_id!;
  const rows: [string, string | undefined][] = [
    ['Order', p.order?.number],
    ['Amount', p.order?.amount !== undefined ? `${p.order.amount} ${p.order.currency ?? ''}` : undefined],
    ['Status', p.status],
    ['Reason', p.reason],
    ['Reference (payment_id)', id],
    ['Date', p.date],
  ];
  const status = `<h2>The payment</h2>${order && !paymentId ? `<p class="note">The latest payment of order <code>${esc(order)}</code>.</p>` : ''}<dl>${rows
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${esc(v)}</dd>`)
    .join('')}</dl>${request}<pre>${esc(JSON.stringify(p, null, 2))}</pre>`;
  const callbacks = await callbackSection(options, id);
  const cli = (args: string) => `${options.helper.prefix}npm run -s merchant -- ${args}${options.helper.options}`;
  const next = `<h2>Next</h2>
<p>The merchant commands sign each request as the demo merchant and print the answer:</p>
<pre>${esc([cli(`status ${id}`), cli(`refund ${id}${p.order?.amount ? ` ${p.order.amount}` : ''}`), cli(`void ${id}`), cli(`callbacks ${id}`)].join('\n'))}</pre>
<p class="note">A refund may be partial (an amount up to what was paid); a void gives back a settled payment whole until 21:00 UTC+3 of its day. <code>npm run -s merchant -- --help</code> lists them all, <code>sign</code> included (the hash of any message, for a request of your own).</p>`;
  return html(200, title, `${came}${status}${callbacks}${next}`);
}

async function callbackSection(options: LocalPagesOptions, paymentId: string): Promise<string> {
  const merchant = await options.deps.merchants.find(options.demo.merchant_key);
  const list = await callbacksOf(options.deps, paymentId).catch(() => []);
  const head = '<h2>Callbacks to the demo merchant</h2>';
  if (!merchant?.notificationUrl) {
    return `${head}<p>The demo merchant has no notification URL, so no callback was sent${list.length ? ` (${list.length} recorded, kept unsent)` : ''}. <code>npm start</code> prints how to run the callback receiver and point the demo merchant at it.</p>`;
  }
  if (!list.length) return `${head}<p>None yet for this payment (to ${esc(merchant.notificationUrl)}).</p>`;
  return `${head}<p class="note">To ${esc(merchant.notificationUrl)}:</p><table><thead><tr><th>No.</th><th>Type</th><th>Status</th><th>Order status</th><th>Delivery</th></tr></thead><tbody>${list
    .map((c) => `<tr><td>${c.number}</td><td>${esc(c.type)}</td><td>${esc(c.status)}</td><td>${esc(c.order_status)}</td><td>${esc(c.state)}${c.delivered_at ? ` ${esc(c.delivered_at)}` : ''}${c.last_error ? `: ${esc(c.last_error)}` : ''}</td></tr>`)
    .join('')}</tbody></table>`;
}
