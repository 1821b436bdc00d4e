/**
 * Card rules of the hosted page (protocol.md §6). The card number and CVV only ever live in memory
 * for the length of a request: what may be kept is the CardSummary.
 */
export const CARD_MESSAGES = {
  number: 'Invalid card number',
  expiry: 'The expiration date of card is expired and not valid.',
  cvv: 'Invalid security code',
  holder: 'Must contain at least 2 words: first name and last name',
} as const;

export type CardBrand = 'visa' | 'mastercard' | 'amex' | 'discover' | 'jcb' | 'diners' | 'maestro' | 'unionpay' | 'mir' | 'unknown';

/** What is stored of a card: never the full number, never the CVV. */
export interface CardSummary {
  /** First six and last four, e.g. 411111****1111 (the platform's callback mask). */
  readonly mask: string;
  readonly brand: CardBrand;
  readonly expMonth: number;
  readonly expYear: number;
  readonly holder?: string;
}

export interface CardInput {
  readonly number: string;
  readonly expiry: string;
  readonly cvv: string;
  readonly holder: string;
}

export interface ValidCard {
  readonly pan: string;
  readonly expMonth: number;
  readonly expYear: number;
  readonly cvv: string;
  readonly holder: string;
}

/** Letters, spaces, dots, apostrophes and hyphens; at least two words are checked separately. */
export const HOLDER_PATTERN = /^[\p{L}][\p{L} .'-]*$/u;

export const digitsOnly = (s: string): string => s.replace(/[\s-]/g, '');

export function luhnValid(pan: string): boolean {
  if (!/^\d+$/.test(pan)) return false;
  let sum = 0;
  for (let i = 0; i < pan.length; i++) {
    let d = pan.charCodeAt(pan.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const BRANDS: readonly [CardBrand, RegExp][] = [
  ['amex', /^3[47]/],
  ['diners', /^3(?:0[0-5]|[689])/],
  ['jcb', /^35(?:2[89]|[3-8])/],
  ['mir', /^220[0-4]/],
  ['mastercard', /^(?:5[1-5]|2(?:2[2-9][1-9]|2[3-9]|[3-6]|7[01]|720))/],
  ['discover', /^(?:6011|65|64[4-9])/],
  ['unionpay', /^62/],
  ['maestro', /^(?:5[06-8]|6)/],
  ['visa', /^4/],
];

/** The brand patterns as [brand, regex source], for the page's live brand detection. */
export const cardBrandPatterns = (): [CardBrand, string][] => BRANDS.map(([b, re]) => [b, re.source]);

export function cardBrand(pan: string): CardBrand {
  for (const [brand, re] of BRANDS) if (re.test(pan)) return brand;
  return 'unknown';
}

/** 13 to 19 digits, possibly grouped with spaces, dashes, dots, slashes or plus signs: maybe a card number. */
const CARD_SHAPED = /\d(?:[ +./-]?\d){12,18}/;

/**
 * Whether a text a customer typed holds something shaped like a card number (a number pasted
 * into the wrong field): such a text is never shown back, kept or logged.
 */
export const containsCardNumber = (text: string): boolean => CARD_SHAPED.test(text);

export const maskPan = (pan: string): string => `${pan.slice(0, 6)}****${pan.slice(-4)}`;

/** "MM/YY" (or MM/YYYY) -> month and four-digit year. */
export function parseExpiry(expiry: string): { month: number; year: number } | undefined {
  const m = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(expiry);
  if (!m) return undefined;
  const month = Number(m[1]);
  const year = (m[2] as string).length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  if (month < 1 || month > 12) return undefined;
  return { month, year };
}

/** A card is valid through the last day of its expiry month. */
export function expired(month: number, year: number, now: Date): boolean {
  const y = now.getUTCFullYear();
  const mo = now.getUTCMonth() + 1;
  return year < y || (year === y && month < mo) || year > y + 50;
}

export type CardField = keyof CardInput;

export function validateCard(input: CardInput, now: Date): { card: ValidCard } | { errors: Partial<Record<CardField, string>> } {
  const errors: Partial<Record<CardField, string>> = {};
  const pan = digitsOnly(input.number);
  // A number of no card network cannot be routed whatever its checksum: 1111 2222 3333 4444 passes
  // the Luhn sum, yet the page must refuse it as "Invalid card number" (protocol.md §5).
  if (!/^\d{14,19}$/.test(pan) || !luhnValid(pan) || cardBrand(pan) === 'unknown') errors.number = CARD_MESSAGES.number;
  const exp = parseExpiry(input.expiry);
  if (!exp || expired(exp.month, exp.year, now)) errors.expiry = CARD_MESSAGES.expiry;
  if (!/^\d{3,4}$/.test(input.cvv.trim())) errors.cvv = CARD_MESSAGES.cvv;
  const holder = input.holder.trim().replace(/\s+/g, ' ');
  if (holder.length > 32 || holder.split(' ').length < 2 || !HOLDER_PATTERN.test(holder)) errors.holder = CARD_MESSAGES.holder;
  if (Object.keys(errors).length || !exp) return { errors };
  return { card: { pan, expMonth: exp.month, expYear: exp.year, cvv: input.cvv.trim(), holder } };
}

export function summarize(card: ValidCard): CardSummary {
  return { mask: maskPan(card.pan), brand: cardBrand(card.pan), expMonth: card.expMonth, expYear: card.expYear, holder: card.holder };
}

/** MM/YYYY, as callbacks report it. */
export const expirationDate = (c: Pick<CardSummary, 'expMonth' | 'expYear'>): string => `${String(c.expMonth).padStart(2, '0')}/${c.expYear}`;
