import type { CardBrand } from './card';

/**
 * Apple Pay and Google Pay payments (docs/wallets.md, ADR 0039). The wallet's payment token is card
 * data: it lives in memory for the length of the request and goes to the acquirer, never to storage,
 * a log line or an error. What is kept is the WalletSummary.
 */
export const WALLETS = ['applepay', 'googlepay'] as const;
export type Wallet = (typeof WALLETS)[number];

export const isWallet = (m: string): m is Wallet => (WALLETS as readonly string[]).includes(m);

/**
 * The platform's `pan_type` of a wallet payment: `dpan`, a device account number with a cryptogram
 * (Apple Pay; Google Pay's CRYPTOGRAM_3DS), or `fpan`, the card's own number (Google Pay's
 * PAN_ONLY), for which 3-D Secure is the acquirer's to run.
 */
export type PanType = 'dpan' | 'fpan';

/** Google Pay's names of how the card was authenticated; Apple Pay tokens always carry a cryptogram. */
export const AUTH_METHODS = ['CRYPTOGRAM_3DS', 'PAN_ONLY'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];

export const panTypeOf = (authMethod: AuthMethod): PanType => (authMethod === 'PAN_ONLY' ? 'fpan' : 'dpan');

/** What a wallet discloses of the card in the clear (Apple Pay's display name, Google Pay's cardInfo): no expiry, no first six. */
export interface WalletCard {
  readonly brand: CardBrand;
  readonly last4: string;
}

/** What is stored of a wallet payment: which wallet, the PAN type and the card it disclosed; never the token. */
export interface WalletSummary extends WalletCard {
  readonly wallet: Wallet;
  readonly panType: PanType;
}

/** A wallet payment as the acquirer takes it: the summary and the opaque token. */
export interface WalletPayment extends WalletSummary {
  /** The wallet's payment token as the wallet gave it (Apple Pay `paymentData`, Google Pay `tokenizationData.token`), as text. */
  readonly paymentToken: string;
}

/** The longest token taken: Apple Pay's encrypted payment data is about 3 KB, Google Pay's about 2 KB. */
export const MAX_WALLET_TOKEN_LENGTH = 16_384;

/** The networks the wallets name (Apple Pay `network`, Google Pay `cardNetwork`), as our brands. */
const NETWORKS: Readonly<Record<string, CardBrand>> = {
  visa: 'visa',
  mastercard: 'mastercard',
  masterCard: 'mastercard',
  amex: 'amex',
  discover: 'discover',
  jcb: 'jcb',
  maestro: 'maestro',
  chinaunionpay: 'unionpay',
  unionpay: 'unionpay',
  mir: 'mir',
};

export const brandOfNetwork = (network: string): CardBrand => NETWORKS[network.trim().toLowerCase().replace(/[\s_-]/g, '')] ?? 'unknown';

/** What the page posts for a wallet payment, as it arrives (untrusted). */
export interface WalletInput {
  readonly wallet: string;
  readonly paymentToken: string;
  readonly network: string;
  readonly last4: string;
  /** Google Pay's auth method; Apple Pay's is always a cryptogram. */
  readonly authMethod?: string;
}

export type WalletProblem = 'wallet' | 'token' | 'card' | 'authMethod';

/**
 * The wallet payment a submission describes, or what is wrong with it. The token is only checked
 * for being present, text and within MAX_WALLET_TOKEN_LENGTH: it is the acquirer's to read.
 */
export function readWalletInput(input: WalletInput): { readonly ok: true; readonly payment: WalletPayment } | { readonly ok: false; readonly problem: WalletProblem } {
  if (!isWallet(input.wallet)) return { ok: false, problem: 'wallet' };
  const token = input.paymentToken;
  if (typeof token !== 'string' || !token.trim() || token.length > MAX_WALLET_TOKEN_LENGTH) return { ok: false, problem: 'token' };
  if (!/^\d{4}$/.test(input.last4 ?? '') || typeof input.network !== 'string' || input.network.length > 32) return { ok: false, problem: 'card' };
  let authMethod: AuthMethod = 'CRYPTOGRAM_3DS';
  if (input.wallet === 'googlepay') {
    if (!(AUTH_METHODS as readonly string[]).includes(input.authMethod ?? '')) return { ok: false, problem: 'authMethod' };
    authMethod = input.authMethod as AuthMethod;
  }
  return { ok: true, payment: { wallet: input.wallet, panType: panTypeOf(authMethod), brand: brandOfNetwork(input.network), last4: input.last4, paymentToken: token } };
}

export const walletSummary = (p: WalletPayment): WalletSummary => ({ wallet: p.wallet, panType: p.panType, brand: p.brand, last4: p.last4 });

/**
 * Wallet payments are "virtual" by the platform's default (docs/wallets.md): no card is stored, so a
 * session that asks to keep the card (recurring_init, req_token) cannot be paid with one, and an
 * authorization for a later capture (DMS) is not offered either.
 */
export const WALLET_RULES = {
  storesNoCard: 'Wallet payments (applepay, googlepay) store no card, so they cannot be used with recurring_init or req_token.',
  noDms: 'Wallet payments (applepay, googlepay) cannot be authorized for a later capture: this merchant captures later (DMS).',
} as const;

/** Why a wallet may not pay this session, or undefined when it may. */
export function walletRefusal(session: { readonly recurringInit: boolean; readonly reqToken: boolean }, merchant: { readonly dms: boolean }): string | undefined {
  if (session.recurringInit || session.reqToken) return WALLET_RULES.storesNoCard;
  if (merchant.dms) return WALLET_RULES.noDms;
  return undefined;
}
