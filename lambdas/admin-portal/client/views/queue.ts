import type { ActionOutcome } from '../../../protocol/admin/actions';
import type { PaymentListEntry } from '../../../protocol/admin/payment-view';
import { api, fail } from '../api';
import { cell, confirmMoney, el, merchantCell, paymentLink, plural, say, show, table, timeCell, totalsByCurrency } from '../dom';
import { may } from '../session';
import { paymentName, typedAmount } from './payment';

type Action = Extract<ActionOutcome['action'], 'capture' | 'release'>;

/** The authorizations waiting for capture, soonest to expire first; an operator captures or releases them, one or many at once. */
export function queueView(): void {
  show('Capture queue');
  api<{ payments: PaymentListEntry[] }>('AdminCaptureQueue')
    .then((r) => {
      // A viewer sees the queue; capturing and releasing are the operator role's.
      const acting = may('AdminPaymentAction') && may('AdminCaptureBulk');
      const boxes: HTMLInputElement[] = [];
      const amounts = new Map<string, HTMLInputElement>();
      const byId = new Map<string, PaymentListEntry>();
      const rows = r.payments.map((p) => {
        const box = el('input', { type: 'checkbox', value: p.payment_id, 'aria-label': `Select ${p.order_number}` });
        boxes.push(box);
        const amount = el('input', { inputmode: 'decimal', value: p.amount, 'aria-label': `Capture amount for ${p.order_number}` });
        amounts.set(p.payment_id, amount);
        byId.set(p.payment_id, p);
        const act = (action: Action): void => {
          const typed = amount.value.trim();
          if (action === 'capture' && !typed) {
            say(`Enter the amount to capture for ${p.order_number}.`, 'error');
            amount.focus();
            return;
          }
          const shown = `${action === 'capture' ? typedAmount(typed, p.currency) : p.amount} ${p.currency}`;
          const confirmed =
            action === 'capture'
              ? confirmMoney(`Capture ${shown}?`, [`Capture ${shown} of the ${p.amount} ${p.currency} authorized for ${paymentName(p)}.`], `Capture ${shown}`)
              : confirmMoney(`Release ${shown}?`, [`Release the whole authorization of ${shown} for ${paymentName(p)}.`], `Release ${shown}`, true);
          void confirmed.then((yes) => {
            if (!yes) {
              say(`${action} cancelled: nothing was sent.`);
              return;
            }
            say('Working…');
            api<ActionOutcome>('AdminPaymentAction', { params: { paymentId: p.payment_id, action }, body: action === 'capture' ? { amount: typed } : {} })
              .then((res) => {
                queueView();
                say(`${p.order_number} ${action} ${shown}: ${res.outcome}${res.message ? ` – ${res.message}` : ''}`, res.outcome === 'done' ? 'ok' : 'error');
              })
              .catch(fail);
          });
        };
        if (!acting) {
          return el('tr', null, timeCell(p.authorization_expires_at), el('td', null, paymentLink(p.payment_id)), merchantCell(p), cell(p.order_number), cell(`${p.amount} ${p.currency}`, 'num'));
        }
        return el(
          'tr',
          null,
          el('td', null, box),
          timeCell(p.authorization_expires_at),
          el('td', null, paymentLink(p.payment_id)),
          merchantCell(p),
          cell(p.order_number),
          cell(`${p.amount} ${p.currency}`, 'num'),
          el(
            'td',
            null,
            el(
              'div',
              { class: 'actions' },
              amount,
              el('button', { type: 'button', text: 'Capture', onclick: () => act('capture') }),
              el('button', { type: 'button', class: 'danger', text: 'Release', onclick: () => act('release') }),
            ),
          ),
        );
      });
      /**
       * Capture or release the ticked rows: a capture sends each row's own amount box. The dialog
       * lists every payment and amount first; the result names each payment that was not done, and why.
       */
      const bulk = (action: Action): void => {
        const ids = boxes.filter((b) => b.checked).map((b) => b.value);
        if (!ids.length) {
          say('Select at least one payment.', 'error');
          return;
        }
        const typed = (id: string): string => (amounts.get(id) as HTMLInputElement).value.trim();
        const payment = (id: string): PaymentListEntry => byId.get(id) as PaymentListEntry;
        const empty = ids.find((id) => !typed(id));
        if (action === 'capture' && empty) {
          say(`Enter the amount to capture for ${payment(empty).order_number}.`, 'error');
          (amounts.get(empty) as HTMLInputElement).focus();
          return;
        }
        const sent: Record<string, string> = {};
        const lines = ids.map((id) => {
          const p = payment(id);
          if (action === 'release') return `${p.order_number}: release ${p.amount} ${p.currency} (payment ${id})`;
          sent[id] = typed(id);
          const shown = typedAmount(typed(id), p.currency);
          return `${p.order_number}: capture ${shown} ${p.currency}${shown === p.amount ? '' : ` of ${p.amount}`} (payment ${id})`;
        });
        const verb = action === 'capture' ? 'Capture' : 'Release';
        const title = `${verb} ${ids.length}${ids.length === 1 ? ' payment?' : ' payments?'}`;
        void confirmMoney(title, lines, `${verb} ${ids.length}`, action === 'release').then((yes) => {
          if (!yes) {
            say(`${action} cancelled: nothing was sent.`);
            return;
          }
          say(`Working on ${ids.length} payments…`);
          api<{ results: ActionOutcome[] }>('AdminCaptureBulk', { body: action === 'capture' ? { action, payment_ids: ids, amounts: sent } : { action, payment_ids: ids } })
            .then((res) => {
              const notDone = res.results.filter((x) => x.outcome !== 'done');
              queueView();
              const summary = `${action === 'capture' ? 'Captured ' : 'Released '}${res.results.length - notDone.length} of ${res.results.length}.`;
              say(
                notDone.length ? `${summary} Not done:` : summary,
                notDone.length ? 'error' : 'ok',
                notDone.map((x) => {
                  const p = byId.get(x.payment_id);
                  return `${p ? `${p.order_number} (payment ${x.payment_id})` : `payment ${x.payment_id}`}: ${x.outcome}${x.message ? ` – ${x.message}` : ''}`;
                }),
              );
            })
            .catch(fail);
        });
      };
      const selectAll = el('input', { type: 'checkbox', id: 'select-all', onchange: () => boxes.forEach((b) => { b.checked = selectAll.checked; }) });
      const bulkBar = el(
        'div',
        { class: 'actions' },
        el('label', { for: 'select-all' }, selectAll, ' Select all'),
        el('button', { type: 'button', text: 'Capture selected', onclick: () => bulk('capture') }),
        el('div', { class: 'danger-zone', role: 'group', 'aria-label': 'Cannot be undone' }, el('button', { type: 'button', class: 'danger', text: 'Release selected', onclick: () => bulk('release') })),
      );
      const columns = acting ? ['Select', 'Expires', 'Payment id', 'Merchant', 'Order', 'Amount', 'Capture or release'] : ['Expires', 'Payment id', 'Merchant', 'Order', 'Amount'];
      show('Capture queue', el('p', { text: `${plural(r.payments.length, 'authorization', 'authorizations')} waiting, the soonest to expire first${r.payments.length ? `: ${totalsByCurrency(r.payments)} in all` : ''}.` }), acting ? bulkBar : null, table('Authorizations waiting for capture', columns, rows));
    })
    .catch(fail);
}
