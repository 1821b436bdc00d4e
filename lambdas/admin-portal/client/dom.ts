/** Building the portal's DOM: elements, the status line, views, forms, tables and times. */

import { formatMinor } from '../../domain/money';

type Child = Node | string | null | undefined | false | readonly Child[];
type Attributes = Record<string, string | number | boolean | null | undefined | ((event: never) => void)>;

/**
 * An element: `text` sets its text, `on…` adds a listener, true writes an empty attribute and
 * null, undefined or false leaves it out. Children may come as lists (rows, options, cells),
 * nested as deep as the caller built them.
 */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attributes | null, ...kids: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') node.textContent = String(v);
    else if (typeof v === 'function') node.addEventListener(k.slice(2), v as EventListener);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  const add = (list: readonly Child[]): void => {
    for (const c of list) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) add(c);
      else node.appendChild(typeof c === 'string' ? document.createTextNode(c) : (c as Node));
    }
  };
  add(kids);
  return node;
}

export const byId = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

/** A fresh id for a label or heading to point at. */
export const newId = (prefix: string): string => `${prefix}-${Math.random().toString(36).slice(2)}`;

/** The status line; `details` lists one line each below it (what a bulk action did to each payment). */
export function say(text: string, kind?: 'ok' | 'error', details?: readonly string[]): void {
  const box = byId('status');
  box.textContent = text;
  box.className = `status${kind ? ` ${kind}` : ''}`;
  if (details?.length) box.appendChild(el('ul', null, details.map((d) => el('li', { text: d }))));
}

/** A view: its heading (focused, so a screen reader starts there) and its parts, replacing the last one. */
export function show(title: string, ...nodes: (Node | null | undefined)[]): void {
  const view = byId('view');
  view.textContent = '';
  const h = el('h1', { text: title, tabindex: '-1' });
  view.appendChild(h);
  for (const n of nodes) if (n) view.appendChild(n);
  document.title = `${title} – Checkout operations`;
  h.focus();
}

/**
 * Asks before money moves: a modal dialog naming every payment and amount the action touches.
 * Resolves true on the confirm button only; Cancel, Escape and closing answer false.
 */
export function confirmMoney(title: string, lines: readonly string[], confirmLabel: string, danger = false): Promise<boolean> {
  return new Promise((resolve) => {
    let answered = false;
    const id = newId('confirm');
    const dialog = el(
      'dialog',
      { class: 'confirm', 'aria-labelledby': id },
      el('h2', { id, text: title }),
      el('ul', null, lines.map((l) => el('li', { text: l }))),
      el(
        'div',
        { class: 'actions' },
        el('button', { type: 'button', class: danger ? 'danger' : null, text: confirmLabel, onclick: () => { answered = true; dialog.close(); } }),
        el('button', { type: 'button', class: 'secondary', text: 'Cancel', onclick: () => dialog.close() }),
      ),
    );
    dialog.addEventListener('close', () => { dialog.remove(); resolve(answered); });
    document.body.appendChild(dialog);
    dialog.showModal();
    // A dialog about something that cannot be undone starts on Cancel: Enter alone never confirms it.
    if (danger) (dialog.querySelector('.actions button.secondary') as HTMLButtonElement | null)?.focus();
  });
}

/** A labelled form field, with an optional hint inside its label. */
export function field(label: string, input: HTMLElement, hint?: string): HTMLDivElement {
  input.id ||= newId('f');
  return el('div', null, el('label', { for: input.id }, label, hint ? el('span', { class: 'hint', text: hint }) : null), input);
}

export const cell = (text: string | number | null | undefined, cls?: string): HTMLTableCellElement =>
  el('td', { class: cls, text: text === undefined || text === null ? '' : text });

let tables = 0;
/**
 * A captioned table. On a phone it is shown as cards (styles.ts `table.cards`): each row a stack of
 * "column: value" lines, so nothing is wider than the screen; each cell of a row with one cell per
 * column is labelled with its column here (a row of another shape, such as a detail spanning the
 * row, is left alone). A table still wider than its place scrolls inside its own focusable region,
 * never the page.
 */
export function table(caption: string, columns: readonly string[], rows: readonly Child[]): HTMLDivElement {
  const id = `table-${++tables}`;
  const body = el('tbody', null, rows.length ? rows : [el('tr', null, el('td', { colspan: String(columns.length), text: 'Nothing to show.' }))]);
  for (const row of Array.from(body.rows)) {
    if (row.cells.length !== columns.length) continue;
    Array.from(row.cells).forEach((c, i) => {
      if (!c.hasAttribute('data-label')) c.setAttribute('data-label', columns[i] as string);
    });
  }
  return el(
    'div',
    { class: 'scroll', role: 'region', 'aria-labelledby': id, tabindex: '0' },
    el('table', { class: 'cards' }, el('caption', { id, text: caption }), el('thead', null, el('tr', null, columns.map((c) => el('th', { scope: 'col', text: c })))), body),
  );
}

// Times in the operator's own time zone (the browser's), written alike everywhere; UTC on hover.
const CLOCK = new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
const utc = (iso: string): string => `${iso.replace('T', ' ').slice(0, 19)} UTC`;

export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const part: Record<string, string> = {};
  for (const x of CLOCK.formatToParts(new Date(iso))) part[x.type] = x.value;
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second} ${part.timeZoneName}`;
}

export const timeCell = (iso: string | null | undefined, cls = 'time'): HTMLTableCellElement =>
  el('td', { class: cls }, iso ? el('time', { datetime: iso, title: utc(iso), text: when(iso) }) : null);

export const paymentLink = (id: string): HTMLAnchorElement => el('a', { href: `#/payments/${encodeURIComponent(id)}`, class: 'mono', text: id });

/** An amount as the admin API writes it ("12.30", with its currency's decimals) in minor units. */
export const minorUnits = (literal: string): number => Number(literal.replace('.', ''));

/** The amounts of a list added up per currency, exactly (in minor units): "125.00 USD · 1500 JPY". Empty for no amounts. */
export function totalsByCurrency(rows: readonly { readonly amount: string; readonly currency: string }[]): string {
  const sums = new Map<string, number>();
  for (const { amount, currency } of rows) sums.set(currency, (sums.get(currency) ?? 0) + minorUnits(amount));
  return [...sums]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, minor]) => `${formatMinor(minor, currency)} ${currency}`)
    .join(' · ');
}

/** What each payment status means to an operator; the status itself (the merchants' API word) follows in brackets. */
export const STATUS_LABELS: Readonly<Record<string, string>> = {
  prepare: 'Open, not paid yet',
  '3ds': 'Waiting for 3-D Secure',
  redirect: 'Waiting for the bank',
  pending: 'Authorized, to capture',
  settled: 'Paid',
  decline: 'Declined',
  refund: 'Refunded',
  void: 'Voided',
  reversal: 'Released',
  chargeback: 'Charged back',
};
export const statusText = (status: string): string => (STATUS_LABELS[status] ? `${STATUS_LABELS[status]} (${status})` : status);

/** A transaction's type as an operator reads it: a sale that only authorized (DMS) is an authorization. */
export const transactionTypeText = (t: { readonly type: string; readonly orderStatus?: string }): string =>
  t.type === 'sale' && t.orderStatus === 'pending' ? 'authorization (sale)' : t.type;

export const merchantCell = (p: { readonly merchant_key: string; readonly merchant_name?: string }): HTMLTableCellElement =>
  p.merchant_name ? el('td', { title: p.merchant_key, text: p.merchant_name }) : cell(p.merchant_key, 'mono');

/** A query string of the parameters that have a value. */
export const query = (params: Readonly<Record<string, string | undefined>>): string =>
  Object.keys(params)
    .filter((k) => params[k])
    .map((k) => `${encodeURIComponent(k)}=${encodeURIComponent(params[k] as string)}`)
    .join('&');

export const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

export const disableAll = (box: ParentNode): void => box.querySelectorAll('button').forEach((b) => { b.disabled = true; });

/**
 * A filter form: its submit puts the inputs' trimmed values into the address (`#/<view>?…`), and
 * the route shows the view again with them. It comes inside a disclosure that is folded on a
 * phone, its summary saying how many filters are set.
 */
export function filterForm(view: string, inputs: Readonly<Record<string, HTMLInputElement | HTMLSelectElement>>, submit: string, ...fields: HTMLElement[]): HTMLDetailsElement {
  const onsubmit = (e: Event): void => {
    e.preventDefault();
    location.hash = `#/${view}?${query(Object.fromEntries(Object.entries(inputs).map(([k, input]) => [k, input.value.trim()])))}`;
  };
  const form = el('form', { class: 'filters', role: 'search', onsubmit }, ...fields, el('div', null, el('button', { type: 'submit', text: submit })));
  // On a phone the fields fold behind "Filters", so the results come first; wider, they are always open.
  const set = Object.values(inputs).filter((i) => i.value.trim()).length;
  openFiltersWhenWide();
  return el('details', { class: 'filter-fold', open: !narrow() }, el('summary', { text: set ? `Filters (${set} set)` : 'Filters' }), form);
}

/** The width below which the portal takes its phone layout (styles.ts uses the same 40rem). */
const PHONE_WIDTH = '(max-width: 40rem)';
const narrow = (): boolean => window.matchMedia(PHONE_WIDTH).matches;
let watchingWidth = false;

/** Widened past a phone's width, folded filters open: wider screens show no "Filters" toggle to open them with. */
function openFiltersWhenWide(): void {
  if (watchingWidth) return;
  watchingWidth = true;
  window.matchMedia(PHONE_WIDTH).addEventListener('change', (e) => {
    if (!e.matches) document.querySelectorAll('details.filter-fold').forEach((d) => { (d as HTMLDetailsElement).open = true; });
  });
}

/** Saves text the portal made as a file in the browser's downloads (an export). */
export function saveFile(name: string, parts: readonly string[], type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([...parts], { type }));
  const link = el('a', { href: url, download: name, hidden: true });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
