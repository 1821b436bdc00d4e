import type { AuditEntry } from '../../../ports/operators';
import { api, apiCsv, fail } from '../api';
import { cell, el, field, filterForm, paymentLink, plural, query, saveFile, say, show, table, when } from '../dom';
import { may } from '../session';

/** A day whose hash chain does not hold, and the entry where it breaks. */
export interface ChainBreak {
  readonly day: string;
  readonly break: { readonly seq: number; readonly problem: string };
}

type Params = Readonly<Record<string, string | undefined>>;

/** Entries, newest first; one where its day's chain breaks is marked. */
export function auditTable(caption: string, entries: readonly AuditEntry[], breaks?: readonly ChainBreak[]): HTMLElement {
  const brokenAt = new Map((breaks ?? []).map((b) => [`${b.day}#${b.break.seq}`, b.break]));
  return table(
    caption,
    ['When', 'Who', 'Role', 'What', 'Target', 'Outcome', 'Change'],
    entries.map((a) => {
      const target =
        a.targetKind === 'payment'
          ? paymentLink(a.target)
          : a.targetKind === 'account'
            ? el('a', { href: '#/accounts', class: 'mono', text: a.target })
            : a.targetKind === 'operator'
              ? el('span', { class: 'mono', text: a.target })
              : el('a', { href: `#/merchants/${encodeURIComponent(a.target.replace(/^merchant:/, ''))}`, class: 'mono', text: a.target });
      const broken = brokenAt.get(`${String(a.at).slice(0, 10)}#${a.seq}`);
      return el(
        'tr',
        broken ? { class: 'broken', 'data-chain': 'broken' } : null,
        cell(when(a.at) + (broken ? ` — chain broken here (${broken.problem})` : '')),
        cell(a.actor),
        cell(a.actorRole),
        cell(a.action),
        el('td', null, target),
        cell(a.outcome + (a.detail ? `: ${a.detail}` : '')),
        el('td', { class: 'diff' }, changeList(a.before, a.after)),
      );
    }),
  );
}

/** An entry's change as one line per field that differs: "field: before → after" (— for none). */
function changeList(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): HTMLElement | string {
  const b = before ?? {};
  const a = after ?? {};
  const shown = (v: unknown): string => (v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));
  const keys = [...Object.keys(b), ...Object.keys(a).filter((k) => !(k in b))];
  const lines = keys
    .filter((k) => JSON.stringify(b[k]) !== JSON.stringify(a[k]))
    .map((k) => el('li', null, el('span', { class: 'field', text: `${k}: ` }), before ? el('del', { text: shown(b[k]) }) : null, before ? ' → ' : null, el('ins', { text: shown(a[k]) })));
  return lines.length ? el('ul', null, lines) : before || after ? 'no change' : '';
}

function chainAlert(breaks: readonly ChainBreak[] | undefined): HTMLElement | null {
  if (!breaks?.length) return null;
  const text = breaks
    .map((b) => `The audit chain of ${b.day} is broken at entry ${b.break.seq} (${b.break.problem}): an entry was changed, removed or reordered after it was written. Run npm run merchant -- verify-audit ${b.day}.`)
    .join(' ');
  return el('p', { class: 'alert', role: 'alert', text });
}

/** The audit log, filtered by who, what, target and days, a page at a time; the filtered entries downloadable as CSV. */
export function auditView(params: Params): void {
  const inputs = {
    actor: el('input', { name: 'actor', value: params.actor || '' }),
    action: el('input', { name: 'action', value: params.action || '' }),
    target: el('input', { name: 'target', value: params.target || '', class: 'mono' }),
    from: el('input', { name: 'from', type: 'date', value: params.from || '' }),
    to: el('input', { name: 'to', type: 'date', value: params.to || '' }),
  };
  const form = filterForm(
    'audit',
    inputs,
    'Filter',
    field('Who', inputs.actor, 'user name or cli:login, or part of it'),
    field('Action', inputs.action, 'e.g. payment.refund, merchant. or operator.sign-in'),
    field('Target', inputs.target, 'payment id, merchant:<key> or operator:<name>'),
    field('From', inputs.from, 'UTC day'),
    field('To', inputs.to, 'UTC day'),
  );
  show('Audit log', form);
  const filters = { actor: params.actor, action: params.action, target: params.target, from: params.from, to: params.to };
  api<{ entries: AuditEntry[]; breaks?: ChainBreak[]; cursor?: string }>('AdminAudit', { query: { ...filters, cursor: params.cursor } })
    .then((r) => {
      const pager = el('div', { class: 'pager' });
      if (params.cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Newest', onclick: () => { location.hash = `#/audit?${query(filters)}`; } }));
      const older = r.cursor;
      if (older) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Older entries', onclick: () => { location.hash = `#/audit?${query({ ...filters, cursor: older })}`; } }));
      if (may('AdminAuditExport') && r.entries.length) {
        const exporting = el('button', { type: 'button', class: 'secondary', text: 'Download CSV', onclick: () => exportAudit(filters, exporting) });
        pager.appendChild(exporting);
      }
      show(
        'Audit log',
        el('p', { text: "Every operator action and sign-in, newest first. Entries cannot be changed or removed; each day's entries form a hash chain that shows any change." }),
        form,
        chainAlert(r.breaks),
        auditTable('Operator actions', r.entries, r.breaks),
        pager,
      );
    })
    .catch(fail);
}

/** The filtered log as one CSV file: part after part (the next named by X-Next-Cursor), joined in the browser. */
function exportAudit(filters: Params, button: HTMLButtonElement): void {
  const parts: string[] = [];
  let rows = 0;
  button.disabled = true;
  say('Exporting…');
  const step = (cursor: string): void => {
    apiCsv('AdminAuditExport', { query: { ...filters, cursor } })
      .then((part) => {
        parts.push(part.text);
        rows += Number(part.headers.get('x-export-rows') || 0);
        const next = part.headers.get('x-next-cursor');
        if (next && parts.length < 500) {
          say(`Exporting… ${plural(rows, 'entry', 'entries')} so far.`);
          return step(next);
        }
        const name = `audit-${filters.from || 'recent'}${filters.to ? `-to-${filters.to}` : ''}.csv`;
        saveFile(name, parts);
        button.disabled = false;
        say(`Exported ${plural(rows, 'entry', 'entries')} to ${name}.`, 'ok');
      })
      .catch((e: unknown) => {
        button.disabled = false;
        fail(e);
      });
  };
  step('');
}
