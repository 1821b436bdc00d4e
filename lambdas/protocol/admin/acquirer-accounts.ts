import { CLEARABLE_ACCOUNT_FIELDS, type AccountInput, type AcquirerAccount } from '../../domain/acquirer-account';
import { invalidRequest } from '../../domain/errors';
import type { ListedAccount } from '../../use-cases/admin/acquirer-accounts';

/** An account as the admin API shows it (snake_case): never its password, only when it was set. */
export interface AccountView {
  readonly account_id: string;
  readonly acquirer: string;
  readonly gateway_url: string;
  readonly client_key: string;
  readonly descriptor?: string;
  readonly currencies: readonly string[];
  /** Google Pay's tokenization parameters of the account (docs/wallets.md), when set. */
  readonly google_pay_gateway?: string;
  readonly google_pay_gateway_merchant_id?: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly password_set_at: string;
  /** The merchants linked to it (in the list). */
  readonly merchants?: readonly string[];
}

export const accountView = (a: AcquirerAccount, merchants?: readonly string[]): AccountView => ({
  account_id: a.accountId,
  acquirer: a.acquirer,
  gateway_url: a.gatewayUrl,
  client_key: a.clientKey,
  ...(a.descriptor ? { descriptor: a.descriptor } : {}),
  currencies: a.currencies,
  ...(a.googlePayGateway ? { google_pay_gateway: a.googlePayGateway } : {}),
  ...(a.googlePayGatewayMerchantId ? { google_pay_gateway_merchant_id: a.googlePayGatewayMerchantId } : {}),
  created_at: a.createdAt,
  updated_at: a.updatedAt,
  password_set_at: a.passwordSetAt,
  ...(merchants ? { merchants } : {}),
});

export const accountListView = (listed: readonly ListedAccount[]) => ({ accounts: listed.map((l) => accountView(l.account, l.merchants)) });

const FIELDS = {
  account_id: 'accountId',
  gateway_url: 'gatewayUrl',
  client_key: 'clientKey',
  password: 'password',
  descriptor: 'descriptor',
  currencies: 'currencies',
  google_pay_gateway: 'googlePayGateway',
  google_pay_gateway_merchant_id: 'googlePayGatewayMerchantId',
} as const;
const INVALID = 'This value is not valid.';
const CLEARABLE: readonly string[] = CLEARABLE_ACCOUNT_FIELDS;

/**
 * An account's fields from a form (POST to create, PUT to change): strings as given (trimmed, but the
 * password), currencies as a list or comma-separated text (upper-cased); null or "" clears the
 * descriptor and the Google Pay parameters. Unknown fields are refused, so a misspelt one is never
 * silently ignored.
 */
export function accountInputOf(body: Record<string, unknown>, creating: boolean): AccountInput & { accountId?: string } {
  const errors: { path: string; message: string }[] = [];
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    const field = FIELDS[name as keyof typeof FIELDS];
    if (!field || (name === 'account_id' && !creating)) {
      errors.push({ path: name, message: 'This field is not expected.' });
      continue;
    }
    if (CLEARABLE.includes(field) && (value === null || value === '')) out[field] = null;
    else if (name === 'currencies' && (Array.isArray(value) || typeof value === 'string')) {
      const list = Array.isArray(value) ? value : value.split(',');
      if (!list.every((c) => typeof c === 'string')) errors.push({ path: name, message: INVALID });
      else out.currencies = (list as string[]).map((c) => c.trim().toUpperCase()).filter(Boolean);
    } else if (typeof value === 'string') out[field] = name === 'password' ? value : value.trim();
    else errors.push({ path: name, message: INVALID });
  }
  if (!creating && !Object.keys(out).length && !errors.length) errors.push({ path: 'account', message: 'Give at least one field to change.' });
  if (errors.length) throw invalidRequest(errors);
  return out as AccountInput & { accountId?: string };
}
