import { formatMinor, operatorAmountLiteral } from '../../../domain/money';
import type { ActionOutcome } from '../../../protocol/admin/actions';
import type { paymentDetailView } from '../../../protocol/admin/payment-view';
import { api, fail } from '../api';
import { cell, confirmMoney, disableAll, el, field, minorUnits, say, show, statusText, table, timeCell, transactionTypeText, when } from '../dom';
import { may } from '../session';
import { auditTable } from './audit';
import { callbacksSection } from './callbacks';

export const paymentName = (p: { readonly order_number: string; readonly payment_id: string }): string => `order ${p.order_number} (payment ${p.payment_id})`;

/**
 * What an operator typed, as the admin API will read it (lambdas/domain/money.ts), for the
 * confirmation; anything the API will refuse is shown as typed.
 */
export const typedAmount = (typed: string, currency: string): string => operatorAmountLiteral(typed, currency) ?? typed.trim();


/**
 * What is wrong with an amount an operator typed, before anything is confirmed or sent: not an
 * amount of this currency, zero, or more than `most` allows. Undefined when it can be sent.
 */
export function amountProblem(typed: string, currency: string, most: string, what: string): string | undefined {
  const literal = operatorAmountLiteral(typed, currency);
  if (!literal) return `${typed.trim()} is not an amount in ${currency}: digits, and at most the currency's decimals (${most} is one).`;
  if (minorUnits(literal) <= 0) return `The amount to ${what} must be more than 0.`;
  const limit = operatorAmountLiteral(most, currency);
  if (limit && minorUnits(literal) > minorUnits(limit)) return `At most ${most} ${currency} can be ${what === 'capture' ? 'captured' : 'refunded'}; ${literal} ${currency} is more.`;
  return undefined;
}

const amountInput = (label: string, value: string | undefined, hint: string): HTMLDivElement => field(label, el('input', { inputmode: 'decimal', value: value ?? '' }), hint);

/** The confirmation's title, lines, button and whether it is a danger: what the action will do, with the amount shown. */
type Question = readonly [title: string, lines: readonly string[], confirm: string, danger?: boolean];

/** A payment as the detail view reads it. */
type PaymentDetail = ReturnType<typeof paymentDetailView>['payment'];

function actionButtons(p: PaymentDetail, after: () => void): HTMLElement {
  const box = el('div', { class: 'actions' });
  const run = (action: ActionOutcome['action'], amountField: HTMLElement | null, question: (shown: string) => Question, most?: string): void => {
    const input = amountField?.querySelector('input');
    const amount = input ? input.value.trim() : '';
    if (input && !amount) {
      say(`Enter the amount to ${action}.`, 'error');
      input.focus();
      return;
    }
    // Refused here, before the confirmation: "abc", 0 and more than the payment allows never reach a dialog.
    const problem = input && most !== undefined ? amountProblem(amount, p.currency, most, action) : undefined;
    if (input && problem) {
      input.setAttribute('aria-invalid', 'true');
      say(problem, 'error');
      input.focus();
      return;
    }
    input?.setAttribute('aria-invalid', 'false');
    const shown = amount ? `${typedAmount(amount, p.currency)} ${p.currency}` : `${p.amount} ${p.currency}`;
    const [title, lines, confirm, danger] = question(shown);
    void confirmMoney(title, lines, confirm, danger).then((yes) => {
      if (!yes) {
        say(`${action} cancelled: nothing was sent.`);
        return;
      }
      say('Working…');
      disableAll(box);
      api<ActionOutcome>('AdminPaymentAction', { params: { paymentId: p.payment_id, action }, body: amount ? { amount } : {} })
        .then((r) => {
          say(`${action} ${shown}: ${r.outcome}${r.message ? ` – ${r.message}` : ''} (status ${r.status})`, r.outcome === 'done' ? 'ok' : 'error');
          after();
        })
        .catch((e: unknown) => {
          fail(e);
          after();
        });
    });
  };
  const who = paymentName(p);
  // What cannot be undone (release, void) stands apart from the amount fields and their buttons.
  const danger = el('div', { class: 'danger-zone', role: 'group', 'aria-label': 'Cannot be undone' });
  if (p.actions.includes('capture')) {
    const capAmount = amountInput(`Capture amount (${p.currency})`, p.amount, `At most ${p.amount}`);
    box.appendChild(capAmount);
    box.appendChild(
      el('button', {
        type: 'button',
        text: 'Capture',
        onclick: () =>
          run('capture', capAmount, (shown) => [`Capture ${shown}?`, [`Capture ${shown} of the ${p.amount} ${p.currency} authorized for ${who}.`, 'The rest of the authorization, if any, is released.'], `Capture ${shown}`], p.amount),
      }),
    );
  }
  if (p.actions.includes('release')) {
    danger.appendChild(
      el('button', {
        type: 'button',
        class: 'danger',
        text: 'Release',
        onclick: () => run('release', null, (shown) => [`Release ${shown}?`, [`Release the whole authorization of ${shown} for ${who}.`, 'Nothing of it can be captured afterwards.'], `Release ${shown}`, true]),
      }),
    );
  }
  if (p.actions.includes('void')) {
    danger.appendChild(
      el('button', {
        type: 'button',
        class: 'danger',
        text: 'Void',
        onclick: () => {
          const paid = `${p.captured_amount || p.amount} ${p.currency}`;
          run('void', null, () => [`Void ${paid}?`, [`Void ${who}: the whole ${paid} goes back to the customer.`], `Void ${paid}`, true]);
        },
      }),
    );
  }
  if (p.actions.includes('refund')) {
    const refAmount = amountInput(`Refund amount (${p.currency})`, p.left_to_refund, `Left to refund: ${p.left_to_refund}`);
    box.appendChild(refAmount);
    box.appendChild(
      el('button', {
        type: 'button',
        class: 'secondary',
        text: 'Refund',
        onclick: () =>
          run(
            'refund',
            refAmount,
            (shown) => {
              const before = p.left_to_refund ?? '0';
              const refund = operatorAmountLiteral(refAmount.querySelector('input')!.value, p.currency) ?? '0';
              const after = formatMinor(minorUnits(before) - minorUnits(refund), p.currency);
              return [`Refund ${shown}?`, [`Refund ${shown} of ${who} to the customer.`, `Refundable before this refund: ${before} ${p.currency}; after it: ${after} ${p.currency}.`], `Refund ${shown}`, true];
            },
            p.left_to_refund ?? '0',
          ),
      }),
    );
  }
  if (danger.childElementCount) box.appendChild(danger);
  if (!may('AdminPaymentAction')) return el('p', { text: 'Your role may look at payments but not act on them.' });
  return p.actions.length ? box : el('p', { text: 'No operator action applies to this payment now.' });
}

/** A payment: its facts, what the operator may do to it, its transactions, callbacks and audit entries. */
export function paymentView(id: string): void {
  show('Payment');
  api<ReturnType<typeof paymentDetailView>>('AdminPaymentDetail', { params: { paymentId: id } })
    .then((r) => {
      const p = r.payment;
      const facts = el('dl', { class: 'facts' });
      const lines: [string, string | undefined][] = [
        ['Payment id', p.payment_id],
        ['Status', statusText(p.status) + (p.reason ? ` – ${p.reason}` : '')],
        ['Merchant', p.merchant_name ? `${p.merchant_name} (${p.merchant_key})` : p.merchant_key],
        ['Order', p.order_number],
        ['Amount', `${p.amount} ${p.currency}`],
        ['Description', p.description],
        ['Customer', (p.customer.name || '') + (p.customer.email ? ` <${p.customer.email}>` : '')],
        ['Card', p.card ? `${p.card.brand} ${p.card.mask} ${p.card.expiry}` : ''],
        ['Wallet', p.wallet ? `${p.wallet.wallet === 'applepay' ? 'Apple Pay' : 'Google Pay'} · ${p.wallet.brand} ····${p.wallet.last4} · PAN type ${p.wallet.pan_type}` : ''],
        ['Created', when(p.created_at)],
        ['Authorization expires', when(p.authorization_expires_at)],
        ['Captured', p.captured_amount],
        ['Refunded', p.refunded_amount],
        ['Charged back', p.chargeback_amount],
        // Only while a void can still be asked for: after a void (or past the day) it says nothing true.
        ['Void possible until', p.actions.includes('void') ? when(p.voidable_until) : undefined],
      ];
      for (const [term, value] of lines) {
        if (!value) continue;
        facts.appendChild(el('dt', { text: term }));
        facts.appendChild(el('dd', { text: value }));
      }
      const tx = table(
        'Transactions',
        ['When', 'Type', 'Status', 'Amount', 'Transaction id', 'Reason', 'By'],
        r.transactions.map((t) => el('tr', null, timeCell(t.at), cell(transactionTypeText(t)), cell(t.status), cell(`${t.amount} ${p.currency}`, 'num'), cell(t.transId, 'mono'), cell(t.reason), cell(t.actor))),
      );
      show(
        `Payment ${p.order_number}`,
        facts,
        el('h2', { text: 'Actions' }),
        actionButtons(p, () => paymentView(id)),
        tx,
        callbacksSection(p.payment_id),
        auditTable('Operator actions', r.audit),
      );
    })
    .catch(fail);
}
