import { api, fail } from '../api';
import { cell, confirmMoney, el, paymentLink, plural, say, table, timeCell, when } from '../dom';
import { may } from '../session';

interface Attempt {
  readonly at: string;
  readonly httpStatus?: number;
  readonly latencyMs: number;
  readonly error?: string;
  readonly url: string;
}

/** A payment's callback, as GET …/callbacks answers it. */
interface Callback {
  readonly index: number;
  readonly type: string;
  readonly status: string;
  readonly state: string;
  readonly amount: string;
  readonly currency: string;
  readonly order_status: string;
  readonly attempt_count: number;
  readonly attempts: readonly Attempt[];
  readonly last_error?: string;
  readonly next_attempt_at?: string;
  readonly resendable: boolean;
  readonly not_resendable_reason?: string;
  /** Why resending it would tell the merchant something the payment no longer is. */
  readonly contradiction?: string;
}

interface DeadCallback {
  readonly payment_id: string;
  readonly index: number;
  readonly type: string;
  readonly status: string;
  readonly attempt_count: number;
  readonly last_error?: string;
  readonly dead_at: string;
}

const CALLBACK_COLUMNS = ['No.', 'Type', 'Status', 'State', 'Attempts', 'Last attempt', 'HTTP status', 'Latency (ms)', 'Error', 'Next attempt', 'Action'];

// The history gets a row of its own under its callback, as wide as the table, so opening it
// does not stretch one column of the callbacks table.
function attemptHistoryRow(c: Callback): HTMLElement | null {
  if (!c.attempts.length) return null;
  const n = c.index + 1;
  // Only the most recent attempts are kept; the count covers them all.
  const kept = c.attempts.length < c.attempt_count ? ` (the last ${c.attempts.length})` : '';
  return el(
    'tr',
    { class: 'history' },
    el(
      'td',
      { colspan: String(CALLBACK_COLUMNS.length) },
      el(
        'details',
        null,
        el('summary', { text: `Attempt history of callback ${n} (${plural(c.attempt_count, 'attempt', 'attempts')})` }),
        table(
          `Delivery attempts of callback ${n}${kept}`,
          ['Time', 'HTTP status', 'Latency (ms)', 'Error', 'URL'],
          c.attempts.map((a) => el('tr', null, timeCell(a.at), cell(a.httpStatus === undefined ? 'no answer' : String(a.httpStatus), 'num'), cell(String(a.latencyMs), 'num'), cell(a.error), cell(a.url, 'mono'))),
        ),
      ),
    ),
  );
}

/** The payment's callbacks, one row per transaction; reloads itself after a resend. */
export function callbacksSection(paymentId: string): HTMLElement {
  const title = el('h2', { id: 'callbacks-title', tabindex: '-1', text: 'Callbacks' });
  const body = el('div');
  const section = el(
    'section',
    { 'aria-labelledby': 'callbacks-title' },
    title,
    el('p', { class: 'hint', text: "One server-to-server callback per transaction, posted to the merchant's notification URL. A failed one is tried again for 24 hours, then it is dead." }),
    body,
  );
  /**
   * Asks first, naming what the merchant will receive again; a callback whose order status is not
   * the payment's now is sent only after the operator has read that warning (the API asks the same).
   */
  const resend = (c: Callback, button: HTMLButtonElement): void => {
    const n = c.index + 1;
    const lines = [`Type: ${c.type}`, `Status: ${c.status}`, `Amount: ${c.amount} ${c.currency}`, `Order status it reports: ${c.order_status}`];
    if (c.contradiction) lines.push(`Warning: ${c.contradiction}`);
    void confirmMoney(`Resend callback ${n} to the merchant?`, lines, `Resend callback ${n}`, Boolean(c.contradiction)).then((yes) => {
      if (!yes) return;
      button.disabled = true;
      say(`Queuing callback ${n}…`);
      api<{ outcome: string }>('AdminCallbackResend', { params: { paymentId, index: c.index }, body: c.contradiction ? { contradiction_confirmed: true } : {} })
        .then((r) => {
          if (r.outcome === 'queued') say(`Callback ${n} (${c.type}/${c.status}, ${c.amount} ${c.currency}) queued: the callback job sends it again on its next run.`, 'ok');
          else say(`Callback ${n} is already waiting to be sent.`, 'error');
          load(true);
        })
        .catch((e: unknown) => {
          fail(e);
          load(true);
        });
    });
  };
  const load = (focus: boolean): void => {
    body.setAttribute('aria-busy', 'true');
    api<{ callbacks: Callback[] }>('AdminPaymentCallbacks', { params: { paymentId } })
      .then((r) => {
        body.textContent = '';
        body.removeAttribute('aria-busy');
        const rows = r.callbacks.map((c) => {
          const last = c.attempts[c.attempts.length - 1];
          // Not offered: a callback waiting to be sent says so by its state; any other says why.
          const waiting = c.state === 'pending' || c.state === 'not-sent';
          const action =
            c.resendable && may('AdminCallbackResend')
              ? el('button', { type: 'button', class: 'secondary', text: 'Resend', 'aria-label': `Resend callback ${c.index + 1}`, onclick: (e: Event) => resend(c, e.currentTarget as HTMLButtonElement) })
              : !c.resendable && !waiting && c.not_resendable_reason
                ? el('span', { class: 'hint', text: c.not_resendable_reason })
                : null;
          return [
            el(
              'tr',
              null,
              cell(String(c.index + 1), 'num'),
              cell(c.type),
              cell(c.status),
              el('td', null, el('span', { class: `badge state-${c.state}`, text: c.state })),
              cell(String(c.attempt_count), 'num'),
              cell(last ? when(last.at) : '', 'time'),
              cell(last && last.httpStatus !== undefined ? String(last.httpStatus) : last ? 'no answer' : '', 'num'),
              cell(last ? String(last.latencyMs) : '', 'num'),
              cell(c.last_error || last?.error || ''),
              timeCell(c.next_attempt_at),
              el('td', null, action),
            ),
            attemptHistoryRow(c),
          ];
        });
        body.appendChild(table('Callbacks of this payment', CALLBACK_COLUMNS, rows));
        if (focus) title.focus();
      })
      .catch((e: unknown) => {
        body.removeAttribute('aria-busy');
        fail(e);
      });
  };
  load(false);
  return section;
}

/** A merchant's dead callbacks, oldest first, and a button that queues them all again. */
export function deadCallbacksSection(merchantKey: string): HTMLElement {
  const title = el('h2', { id: 'dead-callbacks-title', tabindex: '-1', text: 'Dead callbacks' });
  const body = el('div');
  const resendAll: HTMLButtonElement = el('button', {
    type: 'button',
    text: 'Resend all dead callbacks',
    hidden: true,
    onclick: () => {
      resendAll.disabled = true;
      say('Queuing dead callbacks…');
      api<{ queued: number; more?: boolean }>('AdminDeadCallbacksResend', { params: { merchantKey }, body: {} })
        .then((r) => {
          say(`${plural(r.queued, 'dead callback', 'dead callbacks')} queued to be sent again.${r.more ? ' More are left: press the button again.' : ''}`, 'ok');
          resendAll.disabled = false;
          load(undefined, true);
        })
        .catch((e: unknown) => {
          resendAll.disabled = false;
          fail(e);
        });
    },
  });
  const section = el(
    'section',
    { 'aria-labelledby': 'dead-callbacks-title' },
    title,
    el('p', { class: 'hint', text: 'Callbacks still failing 24 hours after their first attempt. Resent callbacks are sent on the next run of the callback job.' }),
    el('div', { class: 'actions' }, resendAll),
    body,
  );
  const load = (cursor: string | undefined, focus: boolean): void => {
    body.setAttribute('aria-busy', 'true');
    api<{ callbacks: DeadCallback[]; cursor?: string }>('AdminDeadCallbacks', { params: { merchantKey }, ...(cursor ? { query: { cursor } } : {}) })
      .then((r) => {
        body.textContent = '';
        body.removeAttribute('aria-busy');
        resendAll.hidden = !may('AdminDeadCallbacksResend') || (!r.callbacks.length && !cursor);
        const rows = r.callbacks.map((c) =>
          el('tr', null, timeCell(c.dead_at), el('td', null, paymentLink(c.payment_id)), cell(String(c.index + 1), 'num'), cell(c.type), cell(c.status), cell(String(c.attempt_count), 'num'), cell(c.last_error)),
        );
        body.appendChild(table('Dead callbacks, oldest first', ['Dead since', 'Payment id', 'No.', 'Type', 'Status', 'Attempts', 'Last error'], rows));
        const pager = el('div', { class: 'pager' });
        if (cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'First dead callbacks', onclick: () => load(undefined, true) }));
        const more = r.cursor;
        if (more) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'More dead callbacks', onclick: () => load(more, true) }));
        body.appendChild(pager);
        if (focus) title.focus();
      })
      .catch((e: unknown) => {
        body.removeAttribute('aria-busy');
        fail(e);
      });
  };
  load(undefined, false);
  return section;
}
