import { createHmac, timingSafeEqual } from 'node:crypto';
import { currencyExponent } from '../../domain/money';
import type { AcquirerOutcome, AuthorizeRequest, PayerDetails } from '../../ports/acquirer';
import type { WalletPayment } from '../../domain/wallet';
import type { S2SCardCredentials, WireAnswer } from './client';
import { saleHash, tokenSaleHash, walletHash, type HashParty } from './hash';
import type { S2SEntry } from './records';

/**
 * Our types to the S2S CARD wire format and back (docs/acquirers/s2s-card.md). Pure functions: the
 * connector (s2s-card-acquirer.ts) does the I/O.
 */

export const S2S_REASONS = {
  neverSent: 'Closed before it was sent to the acquirer.',
  noAnswer: 'The acquirer has not given a final answer yet.',
  unknownCredential: 'The stored card is not one of this acquirer.',
  noPayer: 'The payment has no payer e-mail, which the acquirer requires.',
  accountUnusable: 'The merchant\'s acquirer account cannot be used.',
  currencyNotTaken: 'The merchant\'s acquirer account does not take this currency.',
} as const;

/**
 * Zero-decimal currencies the current edition of the CARD Guide wants written with `.00`; the older
 * edition says the opposite. We follow the current one (docs/acquirers/s2s-card.md, "Amounts").
 */
const ZERO_DECIMAL_WITH_CENTS = new Set(['UGX', 'JPY', 'KRW', 'CLP']);

/** Minor units to the gateway's amount string: `10.00`, `1.025`, `1000`, or `100.00` for JPY and its kind. */
export function wireAmount(amountMinor: number, currency: string): string {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0) throw new RangeError('s2s-card: amount must be a positive whole number of minor units');
  const exponent = currencyExponent(currency);
  if (exponent === undefined) throw new RangeError(`s2s-card: unknown currency ${currency}`);
  if (exponent === 0) return ZERO_DECIMAL_WITH_CENTS.has(currency) ? `${amountMinor}.00` : String(amountMinor);
  const s = String(amountMinor).padStart(exponent + 1, '0');
  return `${s.slice(0, -exponent)}.${s.slice(-exponent)}`;
}

/** The gateway's amount string back to minor units (undefined when it is not one). */
export function minorOfWireAmount(text: unknown, currency: string): number | undefined {
  if (typeof text !== 'string' && typeof text !== 'number') return undefined;
  const exponent = currencyExponent(currency) ?? 2;
  const m = /^(\d+)(?:\.(\d+))?$/.exec(String(text));
  if (!m) return undefined;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  if (fraction.length > exponent) return undefined;
  return Number(m[1]) * 10 ** exponent + Number(fraction.padEnd(exponent, '0') || '0');
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** First and last name from one name (the gateway wants both; one word fills both). */
export function splitName(name: string | undefined): { first: string; last: string } {
  const words = (name ?? '').trim().split(/\s+/).filter(Boolean);
  if (!words.length) return { first: '', last: '' };
  if (words.length === 1) return { first: words[0]!, last: words[0]! };
  return { first: words.slice(0, -1).join(' '), last: words[words.length - 1]! };
}

/** The payer fields of a SALE, cut to the gateway's lengths; absent values are left out. */
export function payerFields(payer: PayerDetails | undefined, holder: string | undefined, ip: string | undefined): Record<string, string> {
  const { first, last } = splitName(payer?.name ?? holder);
  const fields: Record<string, string | undefined> = {
    payer_first_name: first.slice(0, 32),
    payer_last_name: last.slice(0, 32),
    payer_email: payer?.email?.slice(0, 256),
    payer_country: payer?.country,
    payer_state: payer?.state?.slice(0, 32),
    payer_city: payer?.city?.slice(0, 32),
    payer_address: payer?.address?.slice(0, 255),
    payer_zip: payer?.zip?.slice(0, 10),
    payer_phone: payer?.phone?.slice(0, 32),
    // IPv4 only: the downstream providers may not take IPv6 (an IPv4-mapped address is unwrapped).
    payer_ip: ip?.replace(/^::ffff:/, ''),
  };
  return Object.fromEntries(Object.entries(fields).filter((e): e is [string, string] => Boolean(e[1])));
}

export type WireResult = 'SUCCESS' | 'DECLINED' | 'REDIRECT' | 'ACCEPTED' | 'ERROR' | 'UNDEFINED';

/**
 * Errors the gateway answers for a request that may still be going on (a duplicate, or a previous
 * payment not completed): never taken as a decline.
 */
const STILL_OPEN_ERRORS = new Set(['400', '100000']);
/** "Payment not found": the gateway has no transaction for the id or order asked about. */
export const NOT_FOUND_ERROR = '208001';

export const errorCode = (answer: WireAnswer): string | undefined => str(answer.error_code);

/** Why the gateway refused or declined, in its words (never card data: it echoes none). */
export function reasonOf(answer: WireAnswer): string {
  const errors = Array.isArray(answer.errors) ? answer.errors.map((e) => str((e as WireAnswer).error_message)).filter(Boolean) : [];
  return str(answer.decline_reason) ?? (errors.length ? errors.join('; ') : undefined) ?? str(answer.error_message) ?? 'Declined by the acquirer.';
}

/** A request the gateway refused before processing: no money moved, unless it says the request is still open. */
export const isRefusal = (answer: WireAnswer): boolean => answer.result === 'ERROR' && !STILL_OPEN_ERRORS.has(errorCode(answer) ?? '');

/** Where the gateway sends the customer (3-D Secure or another redirect). */
export interface WireRedirect {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly params: Readonly<Record<string, string>>;
}

/** `redirect_params` arrive as an object, an empty array, a list of {name, value} pairs, or not at all. */
export function redirectOf(answer: WireAnswer): WireRedirect | undefined {
  const url = str(answer.redirect_url);
  if (!url || !/^https?:\/\//i.test(url)) return undefined;
  const raw = answer.redirect_params;
  const params: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const pair of raw) {
      const name = str((pair as WireAnswer)?.name);
      const value = str((pair as WireAnswer)?.value);
      if (name && value !== undefined) params[name] = value;
    }
  } else if (raw && typeof raw === 'object') {
    for (const [name, value] of Object.entries(raw)) {
      const v = str(value);
      if (v !== undefined) params[name] = v;
    }
  }
  return { url, method: String(answer.redirect_method).toUpperCase() === 'GET' ? 'GET' : 'POST', params };
}

/**
 * A transaction status read as the outcome of an authorization. `capture` tells a sale from an
 * auth: PENDING is an approved auth, but for a sale it is not final yet. Statuses after a follow-up
 * (REFUND, REVERSAL, VOID, CHARGEBACK) mean the authorization itself was approved. Unknown strings
 * are not guessed at: they leave the operation to reconciliation.
 */
export function authorizationStatus(status: unknown, capture: boolean): 'approved' | 'declined' | 'action' | 'open' {
  switch (String(status).toUpperCase()) {
    case 'SETTLED':
    case 'REFUND':
    case 'REVERSAL':
    case 'VOID':
    case 'CHARGEBACK':
      return 'approved';
    case 'PENDING':
      return capture ? 'open' : 'approved';
    case 'DECLINED':
      return 'declined';
    case '3DS':
    case 'REDIRECT':
      return 'action';
    default:
      return 'open';
  }
}

export const flowOf = (status: unknown): '3ds' | 'redirect' => (String(status).toUpperCase() === '3DS' ? '3ds' : 'redirect');

/**
 * What the gateway's stored-card answers become: one opaque reference holding what a later
 * RECURRING_SALE or token SALE needs (the first transaction, the recurring token, the card token)
 * and the payer e-mail their hash is computed with (the card's 6+4 digits travel in the card summary).
 */
export interface StoredCredential {
  readonly transId: string;
  readonly recurringToken?: string;
  readonly cardToken?: string;
  readonly email: string;
}

const CREDENTIAL_PREFIX = 's2s1.';

export function encodeStoredCredential(c: StoredCredential): string {
  return CREDENTIAL_PREFIX + Buffer.from(JSON.stringify({ t: c.transId, r: c.recurringToken, c: c.cardToken, e: c.email })).toString('base64url');
}

export function decodeStoredCredential(ref: string): StoredCredential | undefined {
  if (!ref.startsWith(CREDENTIAL_PREFIX)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(ref.slice(CREDENTIAL_PREFIX.length), 'base64url').toString('utf8')) as Record<string, unknown>;
    if (typeof v.t !== 'string' || typeof v.e !== 'string') return undefined;
    return { transId: v.t, email: v.e, ...(typeof v.r === 'string' ? { recurringToken: v.r } : {}), ...(typeof v.c === 'string' ? { cardToken: v.c } : {}) };
  } catch {
    return undefined;
  }
}

/** The outcome an approved authorization answer gives, with the stored credential when one was asked for. */
export function approvedOutcome(answer: WireAnswer, transId: string, storeCredential: boolean, email: string): AcquirerOutcome {
  const recurringToken = str(answer.recurring_token);
  const cardToken = str(answer.card_token);
  if (!storeCredential || (!recurringToken && !cardToken)) return { kind: 'approved', acquirerRef: transId };
  return { kind: 'approved', acquirerRef: transId, storedCredentialRef: encodeStoredCredential({ transId, recurringToken, cardToken, email }) };
}

/**
 * The customer's way to the gateway's 3-D Secure or redirect page goes through one page of ours
 * (`/acquirer/s2s-card/redirect`) that builds the auto-submitting form: the redirect is carried in
 * the link itself, signed with a key derived from the gateway password, so nothing is stored and
 * nobody can make our domain post a form to a place of their choosing.
 */
export const REDIRECT_PATH = '/acquirer/s2s-card/redirect';

const redirectKey = (password: string) => createHmac('sha256', password).update('s2s-card redirect v1').digest();

/** Which attempt a signed redirect belongs to, and until when it may be used. */
export interface RedirectScope {
  /** Our idempotency key of the attempt (its order_id). */
  readonly key: string;
  readonly expiresAtMs: number;
}

export function signedRedirectUrl(origin: string, redirect: WireRedirect, password: string, scope: RedirectScope): string {
  const payload = Buffer.from(JSON.stringify({ u: redirect.url, m: redirect.method, p: redirect.params, k: scope.key, x: scope.expiresAtMs })).toString('base64url');
  const signature = createHmac('sha256', redirectKey(password)).update(payload).digest('base64url');
  const url = new URL(REDIRECT_PATH, origin);
  url.searchParams.set('r', payload);
  url.searchParams.set('s', signature);
  return url.toString();
}

/**
 * The redirect a link of ours carries, when its signature holds and it has not expired at `nowMs`
 * (the caller's clock); the attempt it belongs to comes with it, so the page can also refuse a link
 * whose attempt is over.
 */
export function verifiedRedirect(payload: string | undefined, signature: string | undefined, password: string, nowMs: number): (WireRedirect & { readonly key: string }) | undefined {
  if (!payload || !signature || payload.length > 16_384) return undefined;
  const expected = Buffer.from(createHmac('sha256', redirectKey(password)).update(payload).digest('base64url'));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { u?: unknown; m?: unknown; p?: unknown; k?: unknown; x?: unknown };
    if (typeof v.u !== 'string' || !/^https?:\/\//i.test(v.u)) return undefined;
    if (typeof v.k !== 'string' || typeof v.x !== 'number' || v.x <= nowMs) return undefined;
    const params = v.p && typeof v.p === 'object' ? Object.fromEntries(Object.entries(v.p).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};
    return { url: v.u, method: v.m === 'GET' ? 'GET' : 'POST', params, key: v.k };
  } catch {
    return undefined;
  }
}

/**
 * An authorization as the gateway takes it: RECURRING_SALE on a stored recurring chain, else SALE
 * with the card or the stored card token (`auth=Y` for an authorization only). A request the gateway
 * could not take (no payer e-mail, a stored card not of this acquirer, an amount it cannot write) is
 * refused with the reason, never sent.
 */
export function authorizationFields(
  request: AuthorizeRequest,
  stored: StoredCredential | undefined,
  party: HashParty,
  { clientKey, password }: S2SCardCredentials,
): { readonly fields: Record<string, string> } | { readonly refused: string } {
  if (request.instrument.kind === 'stored' && !stored) return { refused: S2S_REASONS.unknownCredential };
  if (!stored && !party.email) return { refused: S2S_REASONS.noPayer };
  let amount: string;
  try {
    amount = wireAmount(request.amountMinor, request.currency);
  } catch (e) {
    return { refused: (e as Error).message };
  }
  const base = { client_key: clientKey, order_id: request.idempotencyKey, order_amount: amount, order_description: (request.description ?? request.paymentId).slice(0, 1024) };
  const authOnly: Record<string, string> = request.capture ? {} : { auth: 'Y' };
  if (request.recurring) {
    if (!stored?.recurringToken) return { refused: S2S_REASONS.unknownCredential };
    return { fields: { ...base, action: 'RECURRING_SALE', recurring_first_trans_id: stored.transId, recurring_token: stored.recurringToken, ...authOnly, hash: saleHash(password, party) } };
  }
  const { instrument } = request;
  if (instrument.kind === 'wallet') return { fields: walletSaleFields(request, instrument.wallet, base, authOnly, password, party.email) };
  const cardToken = instrument.kind === 'stored' ? stored?.cardToken : undefined;
  if (instrument.kind === 'stored' && !cardToken) return { refused: S2S_REASONS.unknownCredential };
  const card: Record<string, string> =
    instrument.kind === 'card'
      ? { card_number: instrument.card.pan, card_exp_month: String(instrument.card.expMonth).padStart(2, '0'), card_exp_year: String(instrument.card.expYear), card_cvv2: instrument.card.cvv }
      : { card_token: cardToken! };
  return {
    fields: {
      ...base,
      action: 'SALE',
      order_currency: request.currency,
      ...card,
      ...payerFields(request.payer, instrument.kind === 'card' ? instrument.card.holder : instrument.summary.holder, request.browser?.ip),
      term_url_3ds: request.returnUrl,
      term_url_target: '_top',
      ...(request.storeCredential ? { req_token: 'Y', recurring_init: 'Y' } : {}),
      ...authOnly,
      hash: cardToken ? tokenSaleHash(password, party.email, cardToken) : saleHash(password, party),
    },
  };
}

/**
 * The wallet SALE (CARD Guide: `digital_wallet` + `payment_token`, card fields omitted, Formula 8):
 * the gateway decrypts the token. Never `req_token` or `recurring_init`: a wallet payment is
 * virtual, nothing is stored for later charges (docs/wallets.md).
 */
function walletSaleFields(
  request: AuthorizeRequest,
  wallet: WalletPayment,
  base: Record<string, string>,
  authOnly: Record<string, string>,
  password: string,
  email: string,
): Record<string, string> {
  return {
    ...base,
    action: 'SALE',
    order_currency: request.currency,
    digital_wallet: wallet.wallet,
    payment_token: wallet.paymentToken,
    ...payerFields(request.payer, undefined, request.browser?.ip),
    term_url_3ds: request.returnUrl,
    term_url_target: '_top',
    ...authOnly,
    hash: walletHash(password, email),
  };
}

/**
 * The gateway's answer to an authorization as our outcome; a redirect becomes a link to our
 * redirect page, signed and usable until `redirectExpiresAtMs`.
 */
export function authorizationOutcome(answer: WireAnswer, entry: S2SEntry, returnUrl: string, password: string, redirectExpiresAtMs: number): AcquirerOutcome {
  const transId = str(answer.trans_id) ?? '';
  switch (answer.result) {
    case 'SUCCESS': {
      const read = authorizationStatus(answer.status, entry.capture ?? true);
      if (read === 'approved') return approvedOutcome(answer, transId, entry.storeCredential ?? false, entry.party.email);
      return { kind: 'unknown', acquirerRef: transId, reason: S2S_REASONS.noAnswer };
    }
    case 'DECLINED':
      return { kind: 'declined', acquirerRef: transId, reason: reasonOf(answer) };
    case 'REDIRECT': {
      const redirect = redirectOf(answer);
      if (!redirect) return { kind: 'unknown', acquirerRef: transId, reason: 'The acquirer asked for a redirect without an address.' };
      return { kind: 'action', acquirerRef: transId, flow: flowOf(answer.status), url: signedRedirectUrl(new URL(returnUrl).origin, redirect, password, { key: entry.key, expiresAtMs: redirectExpiresAtMs }) };
    }
    case 'ERROR':
      if (isRefusal(answer)) return { kind: 'declined', acquirerRef: transId, reason: reasonOf(answer) };
      return { kind: 'unknown', acquirerRef: transId, reason: reasonOf(answer) };
    default:
      return { kind: 'unknown', acquirerRef: transId, reason: S2S_REASONS.noAnswer };
  }
}
