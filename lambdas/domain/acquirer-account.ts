import { isKnownCurrency } from './money';

/**
 * A merchant's own account at the acquirer (S2S CARD): the gateway's URL, the account's client key
 * and password (the password in the secret store, never in the table), the descriptor the
 * cardholder's statement shows and the currencies it takes. Each merchant pays through one account;
 * a merchant linked to none pays through the stage's own (S2S_CARD_URL and its secret). An account
 * is added, changed and rotated by an admin (portal or CLI, audited) without a deploy.
 */
export interface AcquirerAccount {
  /** Lower-case letters, digits and dashes (`eu-retail-1`). */
  readonly accountId: string;
  readonly acquirer: 's2s-card';
  /** The URL requests are POSTed to (`https://<PAYMENT_URL>/post`). */
  readonly gatewayUrl: string;
  readonly clientKey: string;
  /** What the cardholder's statement shows; the gateway's own when absent. */
  readonly descriptor?: string;
  /** ISO 4217 codes the account takes: a payment in another currency is refused before it reaches the gateway. */
  readonly currencies: readonly string[];
  readonly createdAt: string;
  readonly updatedAt: string;
  /** When its password was last set (created or rotated). */
  readonly passwordSetAt: string;
  /**
   * Google Pay's tokenization parameters of the account (docs/wallets.md): the id its gateway is
   * known by to Google Pay (`gateway`) and the account's id at that gateway (`gatewayMerchantId`).
   * The page of a merchant linked to the account asks Google Pay for a token with these; without
   * both it shows no Google Pay button.
   */
  readonly googlePayGateway?: string;
  readonly googlePayGatewayMerchantId?: string;
}

/** The account a merchant linked to none pays through: the stage's own (its configuration and secret). */
export const STAGE_ACCOUNT = 'stage';

export const ACCOUNT_ID = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
/** A descriptor as card schemes print it: letters, digits, spaces and . * - , at most 25 characters. */
export const DESCRIPTOR = /^[A-Za-z0-9 .*\-]{1,25}$/;
/** A gateway's id at Google Pay, as Google lists it (`example`, `adyen`, `checkoutltd`). */
export const GOOGLE_PAY_GATEWAY = /^[a-z0-9_-]{1,60}$/;
/** An id at a Google Pay gateway (`gatewayMerchantId`): the gateway's own, kept to a safe alphabet. */
export const GOOGLE_PAY_GATEWAY_MERCHANT_ID = /^[A-Za-z0-9._:-]{1,100}$/;

export interface AccountInput {
  readonly gatewayUrl?: string;
  readonly clientKey?: string;
  readonly password?: string;
  readonly descriptor?: string | null;
  readonly currencies?: readonly string[];
  readonly googlePayGateway?: string | null;
  readonly googlePayGatewayMerchantId?: string | null;
}

/** The optional fields an admin clears with null (or ""). */
export const CLEARABLE_ACCOUNT_FIELDS = ['descriptor', 'googlePayGateway', 'googlePayGatewayMerchantId'] as const;

export interface AccountProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * What is wrong with an account's fields: all of them for a new account (`creating`), the ones given
 * for a change. `allowHttp` (the local runner) admits a plain-HTTP gateway URL.
 */
export function accountProblems(input: AccountInput & { readonly accountId?: string }, creating: boolean, allowHttp: boolean): AccountProblem[] {
  const problems: AccountProblem[] = [];
  if (creating && (input.accountId === undefined || !ACCOUNT_ID.test(input.accountId))) problems.push({ path: 'account_id', message: 'Use 1 to 40 lower-case letters, digits and dashes (not at either end).' });
  if (input.accountId === STAGE_ACCOUNT) problems.push({ path: 'account_id', message: `"${STAGE_ACCOUNT}" names the stage's own account.` });
  if (creating || input.gatewayUrl !== undefined) {
    let ok = false;
    try {
      const url = new URL(input.gatewayUrl ?? '');
      ok = (url.protocol === 'https:' || (allowHttp && url.protocol === 'http:')) && !url.username && !url.password && !url.hash;
    } catch {
      ok = false;
    }
    if (!ok) problems.push({ path: 'gateway_url', message: allowHttp ? 'Give the gateway\'s POST URL (http or https).' : 'Give the gateway\'s https POST URL.' });
  }
  if ((creating || input.clientKey !== undefined) && !/^[\x21-\x7e]{1,128}$/.test(input.clientKey ?? '')) problems.push({ path: 'client_key', message: 'Give the account\'s client key (1 to 128 printable characters, no spaces).' });
  if ((creating || input.password !== undefined) && !/^[\x20-\x7e]{8,256}$/.test(input.password ?? '')) problems.push({ path: 'password', message: 'Give the account\'s password (8 to 256 printable characters).' });
  const given = (value: string | null | undefined): value is string => value !== undefined && value !== null && value !== '';
  if (given(input.descriptor) && !DESCRIPTOR.test(input.descriptor)) problems.push({ path: 'descriptor', message: 'Use at most 25 letters, digits, spaces and . * -' });
  if (given(input.googlePayGateway) && !GOOGLE_PAY_GATEWAY.test(input.googlePayGateway)) {
    problems.push({ path: 'google_pay_gateway', message: 'Give the gateway\'s id at Google Pay (1 to 60 lower-case letters, digits, _ and -).' });
  }
  if (given(input.googlePayGatewayMerchantId) && !GOOGLE_PAY_GATEWAY_MERCHANT_ID.test(input.googlePayGatewayMerchantId)) {
    problems.push({ path: 'google_pay_gateway_merchant_id', message: 'Give the account\'s id at its Google Pay gateway (1 to 100 letters, digits and . _ : -).' });
  }
  if (creating || input.currencies !== undefined) {
    const list = input.currencies ?? [];
    if (!list.length || list.some((c) => !isKnownCurrency(c)) || new Set(list).size !== list.length) problems.push({ path: 'currencies', message: 'List the ISO 4217 currency codes the account takes (e.g. EUR, USD), each once.' });
  }
  return problems;
}

/** Whether the account takes payments in `currency`. */
export const takesCurrency = (account: Pick<AcquirerAccount, 'currencies'>, currency: string): boolean => account.currencies.includes(currency);
