import type { AuditEntry } from '../../../ports/operators';
import { api, fail } from '../api';
import { cell, el, field, filterForm, paymentLink, query, show, table, when } from '../dom';

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

/** The audit log, filtered by who, what and target, a page at a time. */
export function auditView(params: Params): void {
  const inputs = {
    actor: el('input', { name: 'actor', value: params.actor || '' }),
    action: el('input', { name: 'action', value: params.action || '' }),
    target: el('input', { name: 'target', value: params.target || '', class: 'mono' }),
  };
  const form = filterForm(
    'audit',
    inputs,
    'Filter',
    field('Who', inputs.actor, 'user name or cli:login, or part of it'),
    field('Action', inputs.action, 'e.g. payment.refund or merchant.'),
    field('Target', inputs.target, 'payment id or merchant:<key>'),
  );
  show('Audit log', form);
  const filters = { actor: params.actor, action: params.action, target: params.target };
  api<{ entries: AuditEntry[]; breaks?: ChainBreak[]; cursor?: string }>('AdminAudit', { query: { ...filters, cursor: params.cursor } })
    .then((r) => {
      const pager = el('div', { class: 'pager' });
      if (params.cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Newest', onclick: () => { location.hash = `#/audit?${query(filters)}`; } }));
      const older = r.cursor;
      if (older) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Older entries', onclick: () => { location.hash = `#/audit?${query({ ...filters, cursor: older })}`; } }));
      show(
        'Audit log',
        el('p', { text: "Every operator action, newest first. Entries cannot be changed or removed; each day's entries form a hash chain that shows any change." }),
        form,
        chainAlert(r.breaks),
        auditTable('Operator actions', r.entries, r.breaks),
        pager,
      );
    })
    .catch(fail);
}
