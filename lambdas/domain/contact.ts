import { COUNTRY_CODES, LANGUAGE_CODES } from './generated/iso-data';

/** Customer contact rules shared by the API and the checkout page. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;
const COUNTRIES: ReadonlySet<string> = new Set(COUNTRY_CODES);

export const isEmail = (s: string): boolean => s.length <= 255 && EMAIL_PATTERN.test(s);
export const isCountryCode = (s: string): boolean => COUNTRIES.has(s);

const LANGUAGES: ReadonlySet<string> = new Set(LANGUAGE_CODES);
/** An ISO 639-1 code, two letters in any case (a generated table: no ICU data built at load). */
export const isLanguageCode = (code: string): boolean => code.length === 2 && LANGUAGES.has(code.toLowerCase());

/**
 * ISO 3166-1 alpha-2 codes with their names in the page's language, sorted by name. Names come from
 * the runtime's ICU data (Intl.DisplayNames), so no name table is bundled and a second language
 * gets its own names for free.
 */
export function countryList(locale = 'en'): readonly [string, string][] {
  const names = new Intl.DisplayNames([locale], { type: 'region', fallback: 'code' });
  return COUNTRY_CODES.map((code): [string, string] => [code, names.of(code) ?? code]).sort((a, b) => a[1].localeCompare(b[1], locale));
}
