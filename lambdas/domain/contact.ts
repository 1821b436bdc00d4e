import { iso31661 } from 'iso-3166';

/** Customer contact rules shared by the API and the checkout page. */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;
const COUNTRIES: ReadonlyMap<string, string> = new Map(iso31661.map((c) => [c.alpha2, c.name]));

export const isEmail = (s: string): boolean => s.length <= 255 && EMAIL_PATTERN.test(s);
export const isCountryCode = (s: string): boolean => COUNTRIES.has(s);
/** ISO 3166-1 alpha-2 codes with their English short names, for the page's country list. */
export const countryList = (): readonly [string, string][] => [...COUNTRIES.entries()].sort((a, b) => a[1].localeCompare(b[1]));
