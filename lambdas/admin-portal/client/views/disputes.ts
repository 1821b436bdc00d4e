import type { DisputesView, RateView } from '../../../protocol/admin/disputes';
import { api, apiCsv, fail } from '../api';
import { cell, el, field, filterForm, merchantCell, paymentLink, plural, saveFile, say, show, table, timeCell } from '../dom';
import { may } from '../session';

type Params = Readonly<Record<string, string | undefined>>;

/** A rate in percent as the view writes it (— when nothing settled that month). */
const percent = (v: number | undefined): string => (v === undefined ? '—' : `${v.toFixed(2)} %`);

/** The merchants' chargeback rates of a month: count and amount over what settled, those at or over the threshold marked. */
function ratesTable(caption: string, rates: readonly RateView[]): HTMLElement {
  const columns = ['Merchant', 'Settled payments', 'Chargebacks', 'Rate (count)', 'Settled amount', 'Charged back', 'Rate (amount)'];
  const rows = rates.map((r) => {
    const amounts = r.amounts.length ? r.amounts : [undefined];
    const cells = [
      merchantCell(r),
      // A part count (the reading ran out of time) says so: its rate reads high until read again.
      cell(r.settled_complete ? r.settled_count : `${r.settled_count} so far (still counting)`, 'num'),
      cell(r.chargeback_count, 'num'),
      el('td', { class: 'num' }, percent(r.count_rate_percent), r.over_threshold ? [' ', el('span', { class: 'badge state-dead', text: 'over threshold' })] : null),
      el('td', { class: 'num' }, amounts.map((a, i) => [i ? el('br') : null, a ? `${a.settled_amount} ${a.currency}` : '—'])),
      el('td', { class: 'num' }, amounts.map((a, i) => [i ? el('br') : null, a ? `${a.chargeback_amount} ${a.currency}` : '—'])),
      el('td', { class: 'num' }, amounts.map((a, i) => [i ? el('br') : null, a ? percent(a.rate_percent) : '—'])),
    ];
    cells.forEach((c, i) => c.setAttribute('data-label', columns[i] as string));
    return el('tr', r.over_threshold ? { class: 'over', 'data-over': 'true' } : null, cells);
  });
  const t = table(caption, columns, rows);
  (t.querySelector('table') as HTMLTableElement).className = 'cards';
  return t;
}

/**
 * Disputes: a month's chargebacks (filtered by merchant, reason code and outcome; exported as CSV)
 * and each merchant's chargeback rate of that month and the one before.
 */
export function disputesView(params: Params): void {
  const inputs = {
    month: el('input', { name: 'month', type: 'month', value: params.month || '' }),
    merchant: el('input', { name: 'merchant', value: params.merchant || '' }),
    reason: el('input', { name: 'reason', value: params.reason || '', class: 'mono' }),
    outcome: el(
      'select',
      { name: 'outcome' },
      el('option', { value: '', text: 'Any' }),
      el('option', { value: 'recorded', text: 'Recorded', selected: params.outcome === 'recorded' }),
      el('option', { value: 'refused', text: 'Refused by our records', selected: params.outcome === 'refused' }),
    ),
  };
  const form = filterForm(
    'disputes',
    inputs,
    'Show',
    field('Month', inputs.month, 'UTC; this month when empty'),
    field('Merchant', inputs.merchant, 'name or key'),
    field('Reason code', inputs.reason, 'e.g. 4837 or 10.4'),
    field('Outcome', inputs.outcome),
  );
  const results = el('div', { 'aria-busy': 'true' });
  show('Disputes', form, results);
  const search = { month: params.month, merchant: params.merchant, reason: params.reason, outcome: params.outcome };
  api<DisputesView>('AdminDisputes', { query: search })
    .then((r) => {
      results.removeAttribute('aria-busy');
      const over = r.rates.month.filter((x) => x.over_threshold);
      if (over.length) {
        results.appendChild(
          el('p', { class: 'alert', role: 'alert', text: `${plural(over.length, 'merchant is', 'merchants are')} at or over the chargeback rate threshold of ${r.threshold_percent} % in ${r.month}: ${over.map((x) => x.merchant_name ?? x.merchant_key).join(', ')}.` }),
        );
      }
      results.appendChild(
        el('p', { class: 'hint', text: `Rate: chargebacks of the month over the payments created that month whose money settled (later refunds and chargebacks included). Merchants with a chargeback in the month are rated. A merchant is marked at ${r.threshold_percent} % or more, once its month has ${plural(r.min_settled, 'settled payment', 'settled payments')}.` }),
      );
      results.appendChild(ratesTable(`Chargeback rates, ${r.month}`, r.rates.month));
      results.appendChild(ratesTable(`Chargeback rates, ${r.previous_month}`, r.rates.previous));
      results.appendChild(el('p', { class: 'count', id: 'result-count', text: r.chargebacks.length ? `${plural(r.chargebacks.length, 'chargeback', 'chargebacks')} in ${r.month}.` : `No chargebacks in ${r.month} match.` }));
      const columns = ['Chargeback date', 'Bank date', 'Recorded', 'Payment', 'Merchant', 'Amount', 'Reason code', 'Outcome'];
      const rows = r.chargebacks.map((d) => {
        const cells = [
          cell(d.chargeback_date ?? '—'),
          cell(d.bank_date ?? '—'),
          timeCell(d.recorded_at),
          el('td', null, paymentLink(d.payment_id)),
          merchantCell(d),
          cell(`${d.amount} ${d.currency}`, 'num'),
          cell(d.reason_code ?? '—', 'mono'),
          el('td', null, el('span', { class: `badge ${d.outcome === 'refused' ? 'state-dead' : 'state-delivered'}`, text: d.outcome === 'refused' ? `refused (${d.refusal ?? 'our records'})` : 'recorded' })),
        ];
        cells.forEach((c, i) => c.setAttribute('data-label', columns[i] as string));
        return el('tr', null, cells);
      });
      const list = table(`Chargebacks, ${r.month}, newest first`, columns, rows);
      (list.querySelector('table') as HTMLTableElement).className = 'cards';
      results.appendChild(list);
      if (may('AdminDisputesExport') && r.chargebacks.length) {
        const button = el('button', { type: 'button', class: 'secondary', text: 'Download CSV', onclick: () => exportDisputes(search, r.month, button) });
        results.appendChild(el('div', { class: 'pager' }, button));
      }
    })
    .catch(fail);
}

/** The month's chargebacks, as filtered, as one CSV file the browser saves. */
function exportDisputes(search: Params, month: string, button: HTMLButtonElement): void {
  button.disabled = true;
  say('Exporting…');
  apiCsv('AdminDisputesExport', { query: { ...search } })
    .then((file) => {
      const rows = Number(file.headers.get('x-export-rows') || 0);
      const name = `chargebacks-${month}.csv`;
      saveFile(name, [file.text]);
      button.disabled = false;
      say(`Exported ${plural(rows, 'chargeback', 'chargebacks')} to ${name}.`, 'ok');
    })
    .catch((e: unknown) => {
      button.disabled = false;
      fail(e);
    });
}
