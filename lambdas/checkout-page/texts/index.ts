import { ar } from './ar';
import { de } from './de';
import { en, type Texts } from './en';
import { es } from './es';
import { fr } from './fr';
import { ru } from './ru';
import { tr } from './tr';
import { uk } from './uk';

export type { Texts };

/** The page's languages, by ISO 639-1 code; one file each. */
export const PAGE_LANGUAGES: Readonly<Record<string, Texts>> = { en, es, fr, de, ru, uk, tr, ar };

/** The languages an Accept-Language header asks for, best first (q-values; "*" and malformed entries dropped). */
export function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 512)
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { primary: tag.trim().toLowerCase().split('-')[0] ?? '', q: q === undefined ? 1 : Number(q), i };
    })
    .filter((l) => /^[a-z]{2,3}$/.test(l.primary) && l.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((l) => l.primary);
}

/**
 * The texts of the page: the session's `language` when the page has it, else the first language of
 * the browser's Accept-Language the page has, else English.
 */
export function pageTexts(sessionLanguage: string | undefined, acceptLanguage: string | undefined): Texts {
  for (const code of [sessionLanguage?.toLowerCase(), ...acceptedLanguages(acceptLanguage)]) {
    const texts = code && Object.hasOwn(PAGE_LANGUAGES, code) ? PAGE_LANGUAGES[code] : undefined;
    if (texts) return texts;
  }
  return en;
}
