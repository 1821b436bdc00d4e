import { CURRENCY_EXPONENTS } from './generated/iso-data';

/**
 * Money is integer minor units plus an ISO 4217 currency. The merchant's literal amount string is
 * kept beside it because signatures and echoes use the literal exactly as sent.
 */
export interface Money {
  readonly amountMinor: number;
  readonly currency: string;
}

export interface MerchantAmount extends Money {
  /** The amount exactly as the merchant wrote it, e.g. "10.250". */
  readonly literal: string;
}

/** ISO 4217 exponents of monetary currencies (generated from the currency-codes package). */
const EXPONENTS: ReadonlyMap<string, number> = new Map(Object.entries(CURRENCY_EXPONENTS));

/** The ISO 4217 minor-unit exponent, or undefined for an unknown or non-monetary code. */
export const currencyExponent = (currency: string): number | undefined => EXPONENTS.get(currency);

export const isKnownCurrency = (currency: string): boolean => EXPONENTS.has(currency);

/** Largest amount we accept in minor units: keeps every sum exactly representable. */
export const MAX_AMOUNT_MINOR = 1e13;

export type AmountProblem = 'blank' | 'not-positive' | 'format';

/**
 * Reads a merchant amount. Strings must carry exactly as many decimals as the currency's exponent
 * ("0.19" USD, "1500" JPY, "10.250" KWD). A JSON number carries no trailing zeros, so its literal
 * is the number written with the currency's exponent.
 */
export function parseAmount(input: string | number, currency: string): MerchantAmount | AmountProblem {
  const exponent = currencyExponent(currency);
  if (exponent === undefined) return 'format';
  let literal: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) return 'format';
    if (input <= 0) return 'not-positive';
    literal = input.toFixed(exponent);
    if (Number(literal) !== input) return 'format';
  } else {
    literal = input;
    if (literal.trim() === '') return 'blank';
    if (/^-/.test(literal) && /^-\d+(\.\d+)?$/.test(literal)) return 'not-positive';
    // Zero in any writing ("0", "0.0") is not positive, whatever the currency's decimals.
    if (/^\d+(\.\d+)?$/.test(literal) && Number(literal) === 0) return 'not-positive';
  }
  const pattern = exponent === 0 ? /^(\d{1,15})$/ : new RegExp(`^(\\d{1,15})\\.(\\d{${exponent}})$`);
  const m = pattern.exec(literal);
  if (!m) return 'format';
  const whole = m[1] ?? '0';
  const fraction = m[2] ?? '';
  const amountMinor = Number(whole) * 10 ** exponent + Number(fraction || '0');
  if (amountMinor <= 0) return 'not-positive';
  if (amountMinor > MAX_AMOUNT_MINOR) return 'format';
  return { literal, amountMinor, currency };
}

/** The exponents ISO 4217 uses (0, 2, 3 …), for reading an amount whose currency is not known yet. */
export const CURRENCY_EXPONENT_SET: readonly number[] = [...new Set(EXPONENTS.values())].sort((a, b) => a - b);

/**
 * The renderings a client may have signed for an amount sent as a JSON number: the number's own
 * shortest form, or the number written in some currency's format — and only those that keep its
 * value (10.49 is never accepted as a signature over "10").
 */
export function signedAmountRenderings(amount: string | number): string[] {
  if (typeof amount === 'string') return [amount];
  if (!Number.isFinite(amount)) return [String(amount)];
  const own = String(amount);
  return [...new Set([own, ...CURRENCY_EXPONENT_SET.map((e) => amount.toFixed(e)).filter((l) => Number(l) === amount)])];
}

/** Writes minor units in the currency's format, e.g. 1025 KWD -> "1.025". */
export function formatMinor(amountMinor: number, currency: string): string {
  const exponent = currencyExponent(currency) ?? 2;
  if (!Number.isSafeInteger(amountMinor) || amountMinor < 0) throw new RangeError(`bad amount ${amountMinor}`);
  if (exponent === 0) return String(amountMinor);
  const s = String(amountMinor).padStart(exponent + 1, '0');
  return `${s.slice(0, -exponent)}.${s.slice(-exponent)}`;
}

/**
 * An amount as an operator types it in the portal ("100", "12.5", "12,50": a comma or a point, up
 * to the currency's decimals), written as the merchant API's literal ("100.00", "12.50"); undefined
 * when it is not one. The admin API reads typed amounts with it and the portal's script shows the
 * amount it is about to send with it, so the confirmation names what the API will read.
 */
export function operatorAmountLiteral(typed: string, currency: string): string | undefined {
  const exponent = currencyExponent(currency) ?? 2;
  const m = /^\s*(\d{1,15})(?:[.,](\d*))?\s*$/.exec(typed);
  if (!m || (m[2] ?? '').length > exponent || (exponent === 0 && m[2] !== undefined)) return undefined;
  const whole = String(Number(m[1]));
  return exponent === 0 ? whole : `${whole}.${(m[2] ?? '').padEnd(exponent, '0')}`;
}
