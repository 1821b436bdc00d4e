import type { PaymentListEntry } from '../../../protocol/admin/payment-view';
import { api, apiCsv, ApiError, fail } from '../api';
import { cell, el, field, filterForm, merchantCell, paymentLink, plural, query, saveFile, say, show, statusText, table, timeCell, totalsByCurrency } from '../dom';
import { may } from '../session';

type Params = Readonly<Record<string, string | undefined>>;

const SEARCH_FIELDS = ['order', 'payment_id', 'email', 'last4', 'amount', 'status', 'merchant', 'from', 'to'] as const;

/** The search form and a page of its results, with the total counted beside them. */
export function paymentsView(params: Params, statuses: readonly string[]): void {
  const inputs = {
    order: el('input', { name: 'order', value: params.order || '' }),
    payment_id: el('input', { name: 'payment_id', value: params.payment_id || '', class: 'mono' }),
    email: el('input', { name: 'email', type: 'search', value: params.email || '' }),
    last4: el('input', { name: 'last4', inputmode: 'numeric', maxlength: '4', value: params.last4 || '' }),
    amount: el('input', { name: 'amount', inputmode: 'decimal', value: params.amount || '' }),
    status: el('select', { name: 'status' }, el('option', { value: '', text: 'Any' }), statuses.map((s) => el('option', { value: s, text: statusText(s), selected: params.status === s }))),
    merchant: el('input', { name: 'merchant', value: params.merchant || '' }),
    from: el('input', { name: 'from', type: 'date', value: params.from || '' }),
    to: el('input', { name: 'to', type: 'date', value: params.to || '' }),
  };
  const form = filterForm(
    'payments',
    inputs,
    'Search',
    field('Order number', inputs.order, 'or part of it'),
    field('Payment id', inputs.payment_id, 'or its first characters'),
    field('Customer e-mail', inputs.email, 'or part of it'),
    field('Card last four', inputs.last4),
    field('Amount', inputs.amount, 'e.g. 25 or 25.00'),
    field('Status', inputs.status),
    field('Merchant', inputs.merchant, 'name or key'),
    field('From', inputs.from, 'UTC day'),
    field('To', inputs.to, 'UTC day'),
  );
  const results = el('div', { 'aria-busy': 'true' });
  show('Payments', form, results);
  const search: Record<string, string> = {};
  for (const k of [...SEARCH_FIELDS, 'cursor']) if (params[k]) search[k] = params[k];
  // The cursors of the pages before this one, so "Previous page" can go back ("-" is the first page).
  const back = params.back ? params.back.split(',') : [];
  api<{ payments: PaymentListEntry[]; cursor?: string }>('AdminPayments', { query: search })
    .then((r) => {
      results.removeAttribute('aria-busy');
      const pageNo = back.length + 1;
      const count = r.payments.length
        ? `Page ${pageNo}: ${r.payments.length}${r.payments.length === 1 ? ' payment' : ' payments'}${r.cursor ? ', more on the next page.' : pageNo > 1 ? ', the last page of this search.' : '.'}`
        : r.cursor
          ? `Page ${pageNo}: no match among the payments read so far; the next page reads on.`
          : 'No payments match this search.';
      results.appendChild(el('p', { class: 'count', id: 'result-count', text: count }));
      // Money, not only a count: this page's amounts per currency.
      if (r.payments.length) results.appendChild(el('p', { class: 'count', id: 'page-total', text: `Total on this page: ${totalsByCurrency(r.payments)}` }));
      const columns = ['Created', 'Payment id', 'Merchant', 'Order', 'Amount', 'Status', 'Reason'];
      const rows = r.payments.map((p) => {
        const cells = [
          timeCell(p.created_at),
          el('td', null, paymentLink(p.payment_id)),
          merchantCell(p),
          cell(p.order_number),
          cell(`${p.amount} ${p.currency}`, 'num'),
          el('td', null, el('span', { class: 'badge', title: p.status, text: statusText(p.status) })),
          cell(p.reason),
        ];
        // Each cell names its column, for the stacked layout of a phone.
        cells.forEach((c, i) => c.setAttribute('data-label', columns[i] as string));
        return el('tr', null, cells);
      });
      const list = table('Payments, newest first', columns, rows);
      (list.querySelector('table') as HTMLTableElement).className = 'cards';
      results.appendChild(list);
      const pager = el('nav', { class: 'pager', 'aria-label': 'Pages' });
      const go = (cursor: string, stack: readonly string[]): void => {
        const p: Record<string, string> = { ...search };
        delete p.cursor;
        if (cursor) p.cursor = cursor;
        if (stack.length) p.back = stack.join(',');
        location.hash = `#/payments?${query(p)}`;
      };
      if (back.length) {
        pager.appendChild(
          el('button', {
            type: 'button',
            class: 'secondary',
            text: 'Previous page',
            onclick: () => {
              const prev = back[back.length - 1] as string;
              go(prev === '-' ? '' : prev, back.slice(0, -1));
            },
          }),
        );
      }
      const next = r.cursor;
      if (next) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Next page', onclick: () => go(next, [...back, params.cursor || '-']) }));
      results.appendChild(pager);
      const total = el('p', { class: 'count', id: 'result-total', 'aria-live': 'polite' });
      results.insertBefore(total, list);
      if (!(r.payments.length || r.cursor)) total.remove();
      else if (SEARCH_FIELDS.some((f) => search[f])) countMatches(search, total);
      else offerCount(search, total);
      if (may('AdminPaymentsExport') && (r.payments.length || r.cursor)) {
        const exporting = el('button', { type: 'button', class: 'secondary', text: 'Download CSV', onclick: () => exportMatches(search, exporting) });
        pager.appendChild(exporting);
      }
    })
    .catch(fail);
}

/** The search without its page cursor, and with the cursor of the part to read next. */
function partOf(search: Params, cursor: string): Record<string, string | undefined> {
  const params: Record<string, string | undefined> = { ...search };
  delete params.cursor;
  return cursor ? { ...params, cursor } : params;
}

/**
 * The total of the last search counted to the end, shown again on its further pages instead of
 * counting again; its first page (the search run again) counts afresh.
 */
let lastTotal: { readonly key: string; readonly text: string } | undefined;

/**
 * The landing page (every merchant's last seven days, nothing asked) counts only when asked: the
 * count reads each merchant's every day, and an operator who signs in to look up one payment
 * should not start it. A search with any criterion counts at once.
 */
function offerCount(search: Params, line: HTMLElement): void {
  line.replaceChildren(el('button', { type: 'button', class: 'secondary', text: 'Count all matches', onclick: () => countMatches(search, line) }));
}

/**
 * The search's total: the count endpoint does a bounded part per request and says where to go
 * on; asked again until it is complete, the running total shown meanwhile.
 */
function countMatches(search: Params, line: HTMLElement): void {
  const key = query(partOf(search, ''));
  if (search.cursor && lastTotal?.key === key) {
    line.textContent = lastTotal.text;
    return;
  }
  line.textContent = 'Counting the payments that match…';
  const step = (cursor: string, requests: number, waits: number): void => {
    api<{ complete: boolean; total: number; cursor?: string }>('AdminPaymentsCount', { query: partOf(search, cursor) })
      .then((c) => {
        if (c.complete) {
          line.textContent = `${plural(c.total, 'payment matches', 'payments match')} this search in all.`;
          lastTotal = { key, text: line.textContent };
          return;
        }
        line.textContent = `Counting… ${c.total.toLocaleString('en')} so far.`;
        if (requests < 200) step(c.cursor ?? '', requests + 1, 0);
        else line.textContent = `More than ${c.total.toLocaleString('en')} payments match this search.`;
      })
      .catch((e: unknown) => {
        // Busy with this operator's other counts or exports: the same part again after Retry-After.
        if (whenBusy(e, waits, (text) => { line.textContent = text; }, () => step(cursor, requests, waits + 1))) return;
        line.textContent = '';
        fail(e);
      });
  };
  step('', 1, 0);
}

/**
 * A count or export refused because the operator's other ones are running (429 with Retry-After):
 * says so and asks again after the wait, a bounded number of times. False for any other refusal
 * (a search too broad to answer in time is shown as its message says: narrow the search).
 */
function whenBusy(e: unknown, waits: number, tell: (text: string) => void, again: () => void): boolean {
  if (!(e instanceof ApiError) || e.status !== 429 || waits >= 20) return false;
  const seconds = Math.min(Math.max(e.retryAfterSeconds || 2, 1), 30);
  tell(`Your other counts or exports are still running: trying again in ${plural(seconds, 'second', 'seconds')}…`);
  setTimeout(again, seconds * 1000);
  return true;
}

/**
 * The search as a CSV file: part after part (each a bounded read on the server, the next named by
 * X-Next-Cursor), joined into one file the browser saves. Nothing is kept but the parts so far.
 */
function exportMatches(search: Params, button: HTMLButtonElement): void {
  const parts: string[] = [];
  let rows = 0;
  button.disabled = true;
  say('Exporting…');
  const step = (cursor: string, waits: number): void => {
    // A part for a page the operator has left never comes back: the export ends with the page.
    apiCsv('AdminPaymentsExport', { query: partOf(search, cursor) })
      .then((part) => {
        parts.push(part.text);
        rows += Number(part.headers.get('x-export-rows') || 0);
        const next = part.headers.get('x-next-cursor');
        if (next) {
          say(`Exporting… ${plural(rows, 'payment', 'payments')} so far.`);
          return step(next, 0);
        }
        const name = `payments-${search.from || 'recent'}${search.to ? `-to-${search.to}` : ''}.csv`;
        saveFile(name, parts);
        button.disabled = false;
        say(`Exported ${plural(rows, 'payment', 'payments')} to ${name}.`, 'ok');
      })
      .catch((e: unknown) => {
        if (whenBusy(e, waits, (text) => say(text), () => step(cursor, waits + 1))) return;
        button.disabled = false;
        fail(e);
      });
  };
  step('', 0);
}
