import { api, fail } from '../api';
import { cell, confirmMoney, el, field, newId, say, show, table, when } from '../dom';
import { may } from '../session';
import type { AuditEntry } from '../../../ports/operators';
import { auditTable } from './audit';
import { deadCallbacksSection } from './callbacks';

interface MerchantRow {
  readonly merchant_key: string;
  readonly name: string;
  readonly dms?: boolean;
  readonly autoCaptureDelayMinutes?: number;
  readonly returnParams?: boolean;
}

/** A merchant's settings, as GET /admin/api/merchants/{merchantKey} answers them. */
interface Settings {
  readonly name?: string;
  readonly dms?: boolean;
  readonly autoCaptureDelayMinutes?: number;
  readonly returnParams?: boolean;
  readonly notificationUrl?: string;
  readonly methods?: readonly string[];
  readonly maxDeclines?: number;
  readonly branding?: { readonly primaryColor?: string; readonly logoUrl?: string };
  readonly frameAncestors?: readonly string[];
  readonly preRouting?: readonly { readonly methods: readonly string[]; readonly currency?: string; readonly minAmountMinor?: number; readonly maxAmountMinor?: number }[];
  readonly acquirerAccount?: string;
  readonly wallets?: readonly string[];
  readonly applePayMerchantId?: string;
  readonly googlePayMerchantId?: string;
  readonly googlePayGatewayMerchantId?: string;
  readonly emailReceipts?: boolean;
}

const merchantRow = (m: MerchantRow): HTMLTableRowElement =>
  el(
    'tr',
    { 'data-name': m.name },
    el('td', null, el('a', { href: `#/merchants/${encodeURIComponent(m.merchant_key)}`, text: m.name })),
    cell(m.merchant_key, 'mono'),
    cell(m.dms ? 'on' : 'off'),
    cell(m.autoCaptureDelayMinutes === undefined ? 'manual' : `${m.autoCaptureDelayMinutes} min`),
    cell(m.returnParams ? 'on' : 'off'),
  );

/** The merchants by name; an admin also gets the form for a new one. */
export function merchantsView(): void {
  show('Merchants');
  api<{ merchants: MerchantRow[] }>('AdminMerchants')
    .then((r) => {
      const merchants = table('Merchants by name', ['Name', 'Merchant key', 'DMS', 'Auto capture', 'Return parameters'], r.merchants.map(merchantRow));
      // A merchant just created joins the list in its place by name, at once (no need to leave and come back).
      const added = (m: MerchantRow): void => {
        const body = merchants.querySelector('tbody')!;
        for (const empty of body.querySelectorAll('td[colspan]')) empty.parentElement?.remove();
        const row = merchantRow(m);
        const after = [...body.querySelectorAll<HTMLTableRowElement>('tr[data-name]')].find((tr) => (tr.dataset.name ?? '').localeCompare(m.name) > 0);
        body.insertBefore(row, after ?? null);
      };
      show('Merchants', merchants, may('AdminMerchantCreate') ? newMerchantForm(added) : null);
    })
    .catch(fail);
}

/** New credentials, shown once: each in a read-only field to select and copy. */
function credentialsPanel(title: string, values: readonly (readonly [label: string, value: string])[]): HTMLElement {
  const id = newId('credentials');
  return el(
    'section',
    { class: 'credentials', 'aria-labelledby': id },
    el('h2', { id, tabindex: '-1', text: title }),
    el('p', { class: 'hint', text: 'Copy these now and hand them to the merchant over a safe channel: they are not shown again.' }),
    values.map(([label, value]) => field(label, el('input', { readonly: true, class: 'mono', value, spellcheck: 'false', autocomplete: 'off' }))),
  );
}

const focusHeading = (panel: HTMLElement): void => (panel.querySelector('h2') as HTMLElement).focus();

/** An admin creates a merchant: its key, signing password and webhook secret are shown once. */
function newMerchantForm(added: (m: MerchantRow) => void): HTMLElement {
  const name = el('input', { name: 'name', required: true, maxlength: '64', autocomplete: 'off' });
  const key = el('input', { name: 'merchant_key', class: 'mono', maxlength: '64', autocomplete: 'off' });
  const dms = el('input', { name: 'dms', type: 'checkbox' });
  const out = el('div');
  const form: HTMLFormElement = el(
    'form',
    {
      class: 'settings',
      novalidate: true,
      onsubmit: (e: Event) => {
        e.preventDefault();
        if (!name.value.trim()) {
          say("Enter the merchant's name.", 'error');
          name.focus();
          return;
        }
        const body: { name: string; dms: boolean; merchant_key?: string } = { name: name.value.trim(), dms: dms.checked };
        if (key.value.trim()) body.merchant_key = key.value.trim();
        say('Creating the merchant…');
        api<{ merchant_key: string; password: string; webhook_secret: string }>('AdminMerchantCreate', { body })
          .then((c) => {
            form.reset();
            out.textContent = '';
            const panel = credentialsPanel(`Merchant ${body.name} created`, [['Merchant key', c.merchant_key], ['Signing password', c.password], ['Webhook secret', c.webhook_secret]]);
            panel.appendChild(el('p', null, el('a', { href: `#/merchants/${encodeURIComponent(c.merchant_key)}`, text: `Open the settings of ${body.name}` })));
            out.appendChild(panel);
            say(`Merchant ${body.name} created.`, 'ok');
            added({ merchant_key: c.merchant_key, name: body.name, dms: body.dms });
            focusHeading(panel);
          })
          .catch(fail);
      },
    },
    field('Name', name),
    field('Merchant key', key, 'Optional: letters, digits and hyphens; a random one when empty'),
    field('Two-stage payments (DMS)', dms, 'Payments are authorized, then captured'),
    el('div', null, el('button', { type: 'submit', text: 'Create merchant' })),
  );
  return el('section', { 'aria-labelledby': 'new-merchant-title' }, el('h2', { id: 'new-merchant-title', text: 'New merchant' }), form, out);
}

/**
 * An admin rotates the merchant's signing password or webhook secret, after confirming; the new
 * value is shown once.
 */
function credentialsSection(merchantKey: string, name: string): HTMLElement {
  const out = el('div');
  const rotate = (what: 'password' | 'webhook'): void => {
    const password = what === 'password';
    const lines = password
      ? ['The new password works at once. The current one is still accepted beside it for 24 hours, so the merchant can switch without a failed request. Callbacks are signed with the new one at once.']
      : ["Callbacks are signed with the new secret at once. The current secret keeps signing beside it for 24 hours, so the merchant's receiver can switch without missing a callback."];
    const label = password ? 'Rotate signing password' : 'Rotate webhook secret';
    void confirmMoney(`${label} of ${name}?`, lines, label, true).then((yes) => {
      if (!yes) {
        say('Nothing was changed.');
        return;
      }
      say('Rotating…');
      api<{ password?: string; webhook_secret?: string; previous_valid_until?: string }>(password ? 'AdminMerchantPassword' : 'AdminMerchantWebhookSecret', { params: { merchantKey }, body: {} })
        .then((r) => {
          out.textContent = '';
          const panel = password
            ? credentialsPanel('New signing password', [['Signing password', r.password ?? '']])
            : credentialsPanel('New webhook secret', [['Webhook secret', r.webhook_secret ?? '']]);
          if (r.previous_valid_until) {
            const text = password ? `The previous password is accepted too until ${when(r.previous_valid_until)}.` : `The previous secret signs too until ${when(r.previous_valid_until)}.`;
            panel.appendChild(el('p', { class: 'hint', text }));
          }
          out.appendChild(panel);
          say(password ? 'Signing password rotated.' : 'Webhook secret rotated.', 'ok');
          focusHeading(panel);
        })
        .catch(fail);
    });
  };
  const buttons = el(
    'div',
    { class: 'actions' },
    may('AdminMerchantPassword') ? el('button', { type: 'button', class: 'danger', text: 'Rotate signing password', onclick: () => rotate('password') }) : null,
    may('AdminMerchantWebhookSecret') ? el('button', { type: 'button', class: 'danger', text: 'Rotate webhook secret', onclick: () => rotate('webhook') }) : null,
  );
  return el(
    'section',
    { 'aria-labelledby': 'credentials-title' },
    el('h2', { id: 'credentials-title', text: 'Credentials' }),
    el('p', { class: 'hint', text: "The signing password checks the merchant's requests; the webhook secret signs the callbacks it receives. Neither is shown after it is made." }),
    buttons,
    out,
  );
}

const list = (v: string): string[] => v.split(',').map((x) => x.trim()).filter(Boolean);
const orNull = <T>(values: T[]): T[] | null => (values.length ? values : null);

/** A merchant's settings (a form only an admin may save), credentials, dead callbacks and changes. */
export function merchantView(merchantKey: string): void {
  show('Merchant');
  api<{ settings: Settings; audit: AuditEntry[] }>('AdminMerchantDetail', { params: { merchantKey } })
    .then((r) => {
      const s = r.settings;
      const preRouting = (s.preRouting ?? []).map((x) => ({
        methods: x.methods,
        ...(x.currency ? { currency: x.currency } : {}),
        ...(x.minAmountMinor !== undefined ? { min_amount_minor: x.minAmountMinor } : {}),
        ...(x.maxAmountMinor !== undefined ? { max_amount_minor: x.maxAmountMinor } : {}),
      }));
      const f = {
        name: el('input', { name: 'name', value: s.name || '', required: true }),
        dms: el('input', { name: 'dms', type: 'checkbox', checked: Boolean(s.dms) }),
        delay: el('input', { name: 'auto_capture_delay_minutes', inputmode: 'numeric', value: s.autoCaptureDelayMinutes === undefined ? '' : String(s.autoCaptureDelayMinutes) }),
        returnParams: el('input', { name: 'return_params', type: 'checkbox', checked: Boolean(s.returnParams) }),
        notificationUrl: el('input', { name: 'notification_url', type: 'url', value: s.notificationUrl || '' }),
        // E-mail receipts to customers who gave their address (ADR 0037): off unless turned on.
        emailReceipts: el('input', { name: 'email_receipts', type: 'checkbox', checked: Boolean(s.emailReceipts) }),
        methods: el('input', { name: 'methods', value: (s.methods ?? []).join(', ') }),
        maxDeclines: el('input', { name: 'max_declines', inputmode: 'numeric', value: String(s.maxDeclines || 3) }),
        color: el('input', { name: 'primary_color', value: s.branding?.primaryColor || '', placeholder: '#0b5cad' }),
        logo: el('input', { name: 'logo_url', type: 'url', value: s.branding?.logoUrl || '' }),
        frames: el('input', { name: 'frame_ancestors', value: (s.frameAncestors ?? []).join(', ') }),
        rules: el('textarea', { name: 'pre_routing' }, JSON.stringify(preRouting, null, 2)),
        account: el('input', { name: 'acquirer_account', class: 'mono', value: s.acquirerAccount || '', spellcheck: 'false', autocomplete: 'off' }),
        // Apple Pay and Google Pay on the checkout page (docs/wallets.md).
        applePay: el('input', { name: 'wallet_applepay', type: 'checkbox', checked: Boolean(s.wallets?.includes('applepay')) }),
        googlePay: el('input', { name: 'wallet_googlepay', type: 'checkbox', checked: Boolean(s.wallets?.includes('googlepay')) }),
        applePayId: el('input', { name: 'apple_pay_merchant_id', class: 'mono', value: s.applePayMerchantId || '', spellcheck: 'false', autocomplete: 'off' }),
        googlePayId: el('input', { name: 'google_pay_merchant_id', class: 'mono', value: s.googlePayMerchantId || '', spellcheck: 'false', autocomplete: 'off' }),
        gatewayId: el('input', { name: 'google_pay_gateway_merchant_id', class: 'mono', value: s.googlePayGatewayMerchantId || '', spellcheck: 'false', autocomplete: 'off' }),
      };
      // Only an admin changes settings: anyone else sees them in a disabled form, without Save.
      const editable = may('AdminMerchantUpdate');
      const form = el(
        'form',
        {
          class: 'settings',
          novalidate: true,
          onsubmit: (e: Event) => {
            e.preventDefault();
            if (!editable) return;
            let rules: unknown[] | null;
            try {
              rules = f.rules.value.trim() ? (JSON.parse(f.rules.value) as unknown[] | null) : null;
            } catch {
              say('Pre-routing rules must be JSON.', 'error');
              f.rules.focus();
              return;
            }
            const color = f.color.value.trim();
            const logo = f.logo.value.trim();
            const body = {
              name: f.name.value.trim(),
              dms: f.dms.checked,
              return_params: f.returnParams.checked,
              auto_capture_delay_minutes: f.delay.value.trim() === '' ? null : Number(f.delay.value),
              notification_url: f.notificationUrl.value.trim() || null,
              email_receipts: f.emailReceipts.checked,
              methods: orNull(list(f.methods.value)),
              max_declines: Number(f.maxDeclines.value),
              branding: color || logo ? { primary_color: color || null, logo_url: logo || null } : null,
              frame_ancestors: orNull(list(f.frames.value)),
              pre_routing: rules?.length ? rules : null,
              acquirer_account: f.account.value.trim() || null,
              wallets: orNull([...(f.applePay.checked ? ['applepay'] : []), ...(f.googlePay.checked ? ['googlepay'] : [])]),
              apple_pay_merchant_id: f.applePayId.value.trim() || null,
              google_pay_merchant_id: f.googlePayId.value.trim() || null,
              google_pay_gateway_merchant_id: f.gatewayId.value.trim() || null,
            };
            say('Saving…');
            api('AdminMerchantUpdate', { params: { merchantKey }, body })
              .then(() => {
                merchantView(merchantKey);
                say('Settings saved.', 'ok');
              })
              .catch(fail);
          },
        },
        field('Name', f.name),
        field('Two-stage payments (DMS)', f.dms, 'Payments are authorized, then captured'),
        field('Automatic capture delay', f.delay, 'Minutes after authorization; empty = manual capture only'),
        field('Return parameters', f.returnParams, 'Append payment_id, trans_id, order_id, hash to the return URLs'),
        field('Notification URL', f.notificationUrl),
        field('E-mail receipts', f.emailReceipts, 'Send the customer a receipt when a checkout is paid; only on a stage that sends mail'),
        field('Payment methods', f.methods, 'Comma separated, e.g. card'),
        field('Declines before cancel', f.maxDeclines),
        field('Brand colour', f.color, '#RRGGBB'),
        field('Logo URL', f.logo, 'https only'),
        field('Allowed framing origins', f.frames, 'Comma separated, e.g. https://shop.example'),
        field('Pre-routing rules', f.rules, 'JSON list of {"currency", "min_amount_minor", "max_amount_minor", "methods"}'),
        field('Acquirer account', f.account, 'An account\'s id (Acquirer accounts); empty: the stage\'s own'),
        field('Apple Pay', f.applePay, 'The Apple Pay button on the checkout page'),
        field('Apple Pay merchant id', f.applePayId, 'merchant.… registered with Apple; empty: the stage\'s own'),
        field('Google Pay', f.googlePay, 'The Google Pay button on the checkout page'),
        field('Google Pay merchant id', f.googlePayId, 'From Google\'s Pay & Wallet Console (needed in production)'),
        field('Google Pay gateway merchant id', f.gatewayId, 'Your id at the stage\'s Google Pay gateway; linked to an account of its own, the account\'s is used'),
        editable ? el('div', null, el('button', { type: 'submit', text: 'Save settings' })) : el('p', { class: 'hint', text: 'Only an admin can change these settings.' }),
      );
      if (!editable) for (const input of Object.values(f)) input.disabled = true;
      const rotating = may('AdminMerchantPassword') || may('AdminMerchantWebhookSecret');
      show(
        `Merchant ${s.name || merchantKey}`,
        el('p', { class: 'mono', text: merchantKey }),
        form,
        rotating ? credentialsSection(merchantKey, s.name || merchantKey) : null,
        deadCallbacksSection(merchantKey),
        auditTable('Settings changes', r.audit),
      );
    })
    .catch(fail);
}
