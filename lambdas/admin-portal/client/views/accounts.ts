import type { AccountView } from '../../../protocol/admin/acquirer-accounts';
import { api, fail } from '../api';
import { cell, el, field, newId, say, show, table, timeCell } from '../dom';
import { may } from '../session';

/** The fields of an account's form; the password is write-only (never shown, never sent back). */
function accountFields(a?: AccountView) {
  return {
    id: el('input', { name: 'account_id', class: 'mono', required: true, spellcheck: 'false', autocomplete: 'off' }),
    url: el('input', { name: 'gateway_url', type: 'url', class: 'mono', value: a?.gateway_url ?? '', required: true }),
    clientKey: el('input', { name: 'client_key', class: 'mono', value: a?.client_key ?? '', required: true, spellcheck: 'false', autocomplete: 'off' }),
    password: el('input', { name: 'password', type: 'password', autocomplete: 'new-password', required: !a }),
    currencies: el('input', { name: 'currencies', value: a ? a.currencies.join(', ') : '', required: true, placeholder: 'EUR, USD' }),
    descriptor: el('input', { name: 'descriptor', value: a?.descriptor ?? '', maxlength: '25' }),
    googlePayGateway: el('input', { name: 'google_pay_gateway', class: 'mono', value: a?.google_pay_gateway ?? '', spellcheck: 'false', autocomplete: 'off' }),
    googlePayGatewayMerchantId: el('input', { name: 'google_pay_gateway_merchant_id', class: 'mono', value: a?.google_pay_gateway_merchant_id ?? '', spellcheck: 'false', autocomplete: 'off' }),
  };
}

/** Google Pay's two parameters, hinted so that neither label reads as the other's. */
const googlePayFields = (f: ReturnType<typeof accountFields>) => [
  field('Google Pay gateway id', f.googlePayGateway, 'Google Pay\'s name for the gateway (its gateway value); empty: no Google Pay'),
  field('Google Pay gateway merchant id', f.googlePayGatewayMerchantId, 'This account\'s id at that gateway; both are needed for Google Pay'),
];

/** An account's Google Pay parameters in the list: gateway / merchant id, a dash for one not set. */
const googlePayText = (a: AccountView): string =>
  a.google_pay_gateway || a.google_pay_gateway_merchant_id ? `${a.google_pay_gateway ?? '—'} / ${a.google_pay_gateway_merchant_id ?? '—'}` : '—';

/** A form's answer: the view again with what it says, or the refusal on the status line. */
function submitted(work: Promise<unknown>, done: string): void {
  say('Saving…');
  work
    .then(() => {
      accountsView();
      say(done, 'ok');
    })
    .catch(fail);
}

/** One account's change form (an admin's): fields to change, and a new password to rotate it. */
function changeForm(a: AccountView): HTMLElement {
  const f = accountFields(a);
  const onsubmit = (e: Event): void => {
    e.preventDefault();
    const body: Record<string, unknown> = {};
    if (f.url.value.trim() !== a.gateway_url) body.gateway_url = f.url.value.trim();
    if (f.clientKey.value.trim() !== a.client_key) body.client_key = f.clientKey.value.trim();
    if (f.currencies.value.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean).join(',') !== a.currencies.join(',')) body.currencies = f.currencies.value;
    if (f.descriptor.value.trim() !== (a.descriptor ?? '')) body.descriptor = f.descriptor.value.trim() || null;
    if (f.googlePayGateway.value.trim() !== (a.google_pay_gateway ?? '')) body.google_pay_gateway = f.googlePayGateway.value.trim() || null;
    if (f.googlePayGatewayMerchantId.value.trim() !== (a.google_pay_gateway_merchant_id ?? '')) body.google_pay_gateway_merchant_id = f.googlePayGatewayMerchantId.value.trim() || null;
    if (f.password.value) body.password = f.password.value;
    if (!Object.keys(body).length) return say('Nothing to change.', 'error');
    submitted(api('AdminAccountUpdate', { params: { accountId: a.account_id }, body }), body.password ? `Account ${a.account_id} saved; its password was rotated.` : `Account ${a.account_id} saved.`);
  };
  const headingId = newId('account');
  return el(
    'details',
    { class: 'account' },
    el('summary', { id: headingId, text: `Change ${a.account_id}` }),
    el(
      'form',
      { class: 'settings', novalidate: true, 'aria-labelledby': headingId, onsubmit },
      field('Gateway URL', f.url),
      field('Client key', f.clientKey),
      field('New password', f.password, 'Rotates it; empty keeps the current one'),
      field('Currencies', f.currencies, 'Comma separated ISO codes'),
      field('Descriptor', f.descriptor, 'What the cardholder\'s statement shows; empty: the gateway\'s'),
      ...googlePayFields(f),
      el('div', null, el('button', { type: 'submit', text: 'Save account' })),
    ),
  );
}

/** A new account (an admin's). */
function createForm(): HTMLElement {
  const f = accountFields();
  const onsubmit = (e: Event): void => {
    e.preventDefault();
    const body = {
      account_id: f.id.value.trim(),
      gateway_url: f.url.value.trim(),
      client_key: f.clientKey.value.trim(),
      password: f.password.value,
      currencies: f.currencies.value,
      ...(f.descriptor.value.trim() ? { descriptor: f.descriptor.value.trim() } : {}),
      ...(f.googlePayGateway.value.trim() ? { google_pay_gateway: f.googlePayGateway.value.trim() } : {}),
      ...(f.googlePayGatewayMerchantId.value.trim() ? { google_pay_gateway_merchant_id: f.googlePayGatewayMerchantId.value.trim() } : {}),
    };
    submitted(api('AdminAccountCreate', { body }), `Account ${body.account_id} created.`);
  };
  return el(
    'section',
    { 'aria-labelledby': 'new-account' },
    el('h2', { id: 'new-account', text: 'New account' }),
    el(
      'form',
      { class: 'settings', novalidate: true, onsubmit },
      field('Account id', f.id, 'Lower-case letters, digits and dashes'),
      field('Gateway URL', f.url, 'The gateway\'s POST URL, https://…/post'),
      field('Client key', f.clientKey),
      field('Password', f.password, 'Stored in the secret store; never shown again'),
      field('Currencies', f.currencies, 'Comma separated ISO codes'),
      field('Descriptor', f.descriptor, 'Optional'),
      ...googlePayFields(f),
      el('div', null, el('button', { type: 'submit', text: 'Create account' })),
    ),
  );
}

/**
 * Acquirer accounts: each merchant's own account at the gateway (a merchant's settings link it),
 * with the merchants linked to each; an admin creates, changes and rotates them here.
 */
export function accountsView(): void {
  show('Acquirer accounts');
  api<{ accounts: AccountView[] }>('AdminAccounts')
    .then((r) => {
      const columns = ['Account', 'Gateway URL', 'Client key', 'Currencies', 'Descriptor', 'Google Pay', 'Merchants', 'Password set', 'Changed'];
      const rows = r.accounts.map((a) => {
        const cells = [
          cell(a.account_id, 'mono'),
          cell(a.gateway_url, 'mono'),
          cell(a.client_key, 'mono'),
          cell(a.currencies.join(', ')),
          cell(a.descriptor ?? '—'),
          cell(googlePayText(a), 'mono'),
          el('td', null, (a.merchants ?? []).length ? (a.merchants ?? []).map((m, i) => [i ? ', ' : null, el('a', { href: `#/merchants/${encodeURIComponent(m)}`, class: 'mono', text: m })]) : '—'),
          timeCell(a.password_set_at),
          timeCell(a.updated_at),
        ];
        cells.forEach((c, i) => c.setAttribute('data-label', columns[i] as string));
        return el('tr', null, cells);
      });
      const list = table('Acquirer accounts', columns, rows);
      (list.querySelector('table') as HTMLTableElement).className = 'cards';
      const admin = may('AdminAccountCreate');
      show(
        'Acquirer accounts',
        el('p', { text: 'A merchant pays through its own account at the acquirer when its settings name one, and through the stage\'s own account otherwise. Passwords are kept in the secret store and never shown.' }),
        list,
        ...(may('AdminAccountUpdate') ? r.accounts.map(changeForm) : []),
        admin ? createForm() : el('p', { class: 'hint', text: 'Only an admin can add or change accounts.' }),
      );
    })
    .catch(fail);
}
