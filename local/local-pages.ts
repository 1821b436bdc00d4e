import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { DepsWithCallbacks } from '../lambdas/callback-container';
import { esc } from '../lambdas/checkout-page/html';
import { callbacksOf } from './merchant-callbacks';
import { LOCAL_MAIL_PATH, mailDirectory } from './mail-pages';
import { merchantRequest, RunnerUnreachable, type MerchantCredentials } from './merchant-requests';

/**
 * The local runner's own pages, outside the route table (they are no part of the service and never
 * deployed; docs/adr/0038-local-demo-pages.md): where the printed curl's success and cancel URLs
 * lead, the demo merchant's result page, and the local runner's own terms of service and privacy
 * notice, which the checkout page's footer links to locally (a deployed stage links its provider's).
 */
export const LOCAL_PAGE_PATHS = { result: '/local/result', terms: '/local/terms', privacy: '/local/privacy' } as const;

export interface LocalPagesOptions {
  /** Where the runner itself answers: the result page asks the real status route there. */
  readonly selfUrl: string;
  readonly demo: MerchantCredentials;
  readonly deps: DepsWithCallbacks;
  /** What goes before `npm run -s merchant` for it to reach this runner (`DATA_DIR=… `), and after the command (`--base-url …`). */
  readonly helper: { readonly prefix: string; readonly options: string };
  /** Where the runner keeps everything (DATA_DIR): the privacy notice names it. */
  readonly dataDir: string;
}

type Answer = APIGatewayProxyStructuredResultV2;

/** The answer for a local page, or undefined for any other path (the route table's then). */
export function localPages(options: LocalPagesOptions): (method: string, url: URL) => Promise<Answer | undefined> {
  return async (method, url) => {
    const page = Object.entries(LOCAL_PAGE_PATHS).find(([, path]) => path === url.pathname)?.[0];
    if (!page) return undefined;
    if (method !== 'GET' && method !== 'HEAD') return { statusCode: 405, headers: { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' }, body: 'GET only\n' };
    if (page === 'result') return resultPage(options, url.searchParams);
    return page === 'terms' ? termsPage(options) : privacyPage(options);
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

/** Where this runner's payments go: the sandbox in the runner itself, or the S2S CARD gateway its operator named. */
function acquirerOf(options: LocalPagesOptions): string {
  const { config } = options.deps;
  if (config.ACQUIRER !== 's2s-card') {
    return 'the sandbox acquirer built into this runner. It reaches no card network and charges no card: it answers by the rules of its test cards (docs/sandbox.md) and approves any other valid card number without charging it';
  }
  const host = config.S2S_CARD_URL ? new URL(config.S2S_CARD_URL).host : 'not configured';
  return `the S2S CARD gateway this runner's operator configured (<code>${esc(host)}</code>). What that gateway does with a card is its own operator's business; use its test cards only`;
}

/**
 * The local runner's terms of service: what it is and is not, for someone who reaches its
 * checkout page. Locally the runner is the provider the footer names.
 */
function termsPage(options: LocalPagesOptions): Answer {
  return html(
    200,
    'Terms of service',
    `<p>These terms cover the hosted checkout served from this address: the local runner, a copy of the service that the person who started it runs on their own computer for development and testing (<code>npm start</code>). Nobody else runs it, and no payment provider stands behind it.</p>
<h2>No money moves here</h2>
<p>Payments made here go to ${acquirerOf(options)}. A payment that says <em>settled</em> here is a test: nobody is owed or paid anything because of it, and refunds, voids and chargebacks here return nothing.</p>
<p>Do not enter your own card. Use the test cards of the merchant's integration guide (docs/sandbox.md in this project).</p>
<h2>Availability and data</h2>
<p>The runner is up while its operator keeps it running, and keeps its data only as long as they keep its data directory. It comes with no guarantee of service, of correctness or of keeping anything. It must not take real customers' payments; a deployed stage of the service, run by a payment provider under its own terms, does that.</p>
<h2>Accounts</h2>
<p>Merchant keys, passwords and operator sign-ins are made by the runner's operator (<code>npm run merchant</code>, <code>npm run operator</code>) and printed to them. Whoever holds a merchant's key and password can make and refund that merchant's test payments here, so keep them to yourself as you would real ones.</p>
<p>How this runner treats personal data is in its <a href="${LOCAL_PAGE_PATHS.privacy}">privacy notice</a>.</p>`,
  );
}

/**
 * The local runner's privacy notice: exactly what it keeps of a checkout, where, for how long and
 * what leaves the machine. Each statement is what the code does (never a card number or security
 * code in storage or logs: test/integration/checkout-pay.test.ts and test/unit/redaction.test.ts hold that).
 */
function privacyPage(options: LocalPagesOptions): Answer {
  const dir = esc(options.dataDir);
  return html(
    200,
    'Privacy notice',
    `<p>The local runner at this address runs on the computer of the person who started it, and that person alone holds what it keeps. Nothing described here is sent to the service's authors or to any provider.</p>
<h2>What is kept, and where</h2>
<p>Everything is kept in the runner's data directory, <code>${dir}</code>, on that computer:</p>
<ul>
<li>each checkout: the order the merchant sent (number, amount, currency, description) and the customer's name, e-mail address and billing address, when the merchant sent them or the customer typed them;</li>
<li>of the card: its first six and last four digits, its brand and its expiry date; of a wallet payment, the wallet's name and the card summary the wallet gave;</li>
<li>the customer's IP address as the runner received it, which the merchant's callbacks carry;</li>
<li>the callbacks sent to the merchant and what the merchant's server answered;</li>
<li>e-mail receipts, written as files in <code>${esc(mailDirectory(options.dataDir))}</code> (shown at <a href="${LOCAL_MAIL_PATH}">${LOCAL_MAIL_PATH}</a>) and never sent;</li>
<li>merchants' settings and secrets, operators' accounts, and the audit log of their sign-ins and actions.</li>
</ul>
<p><strong>The full card number and the security code are never kept.</strong> They are passed to the acquirer in memory for the one payment and reach neither the data directory nor the runner's log.</p>
<h2>What leaves this computer</h2>
<p>Only what the payment needs: the payment to ${acquirerOf(options)}, and the callbacks to the URLs the merchant set for them. The runner's log goes to its own console.</p>
<p>When the checkout page offers Apple Pay or Google Pay, your browser loads Apple's or Google's payment script from their servers, and a wallet payment goes through the wallet first; Apple's and Google's own privacy terms cover that part.</p>
<h2>How long</h2>
<p>A checkout link stops working an hour after it was made, but the local engine deletes nothing by itself: everything stays in <code>${dir}</code> until its operator removes it. Stopping the runner and deleting that directory removes all of it.</p>`,
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
