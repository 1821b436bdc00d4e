import { en, type Texts } from '../../lambdas/checkout-page/texts/en';
import { PAGE_LANGUAGES, acceptedLanguages, pageTexts } from '../../lambdas/checkout-page/texts';
import { isLanguageCode } from '../../lambdas/domain/contact';
import { displayAmount, monthOfYear } from '../../lambdas/checkout-page/render';

/**
 * The page's languages: one file each, every file with exactly English's keys (a key missing, or
 * one English no longer has, fails here even where the type would let a cast through), every text
 * non-empty, every text function answering with its arguments in it.
 */
type Shape = string | { readonly [k: string]: Shape };

/** The key tree of a texts object: strings for leaves ("string", "function/2"), objects for groups. */
function shapeOf(value: unknown): Shape {
  if (typeof value === 'function') return `function/${value.length}`;
  if (typeof value === 'string') return 'string';
  if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, shapeOf((value as Record<string, unknown>)[k])]));
  return typeof value;
}

/** Every leaf of a texts object with its path, functions called with recognizable arguments. */
function leaves(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'function') {
    const args = Array.from({ length: value.length }, (_, i) => (path.endsWith('attemptsLeft') || path.endsWith('wrongCode') ? 2 : `ARG${i}`));
    const out = String((value as (...a: unknown[]) => unknown)(...args));
    return [[path, out]];
  }
  if (typeof value === 'string') return [[path, value]];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
}

const languages = Object.entries(PAGE_LANGUAGES) as [string, Texts][];

describe('the page languages', () => {
  it('are at least English, Spanish, French, German, Russian, Ukrainian, Turkish and Arabic', () => {
    expect(Object.keys(PAGE_LANGUAGES).sort()).toEqual(['ar', 'de', 'en', 'es', 'fr', 'ru', 'tr', 'uk']);
  });

  it.each(languages)('%s has exactly the keys of English, each of the same kind', (code, texts) => {
    expect(shapeOf(texts)).toEqual(shapeOf(en));
    expect(texts.lang).toBe(code);
  });

  it('fails on a language that misses a key (the check itself)', () => {
    const { backToShop: _dropped, ...missing } = PAGE_LANGUAGES.de as Texts;
    expect(shapeOf(missing)).not.toEqual(shapeOf(en));
  });

  it.each(languages)('%s has no empty text, and every text function puts its arguments in', (_code, texts) => {
    for (const [path, text] of leaves(texts)) {
      expect([path, text.trim().length > 0]).toEqual([path, true]);
    }
    expect(texts.payButton('AMOUNT')).toContain('AMOUNT');
    expect(texts.title('SHOP')).toContain('SHOP');
    expect(texts.successBody('SHOP', 'AMOUNT')).toEqual(expect.stringContaining('SHOP'));
    expect(texts.challenge.payment('SHOP', 'AMOUNT', '4242')).toEqual(expect.stringMatching(/SHOP.*AMOUNT.*4242|4242.*SHOP/s));
    expect(Object.keys(texts.declines).sort()).toEqual(['authentication', 'expired', 'funds', 'generic']);
  });

  /** Texts a language rightly writes as English does (French says "E-mail" too). */
  const SAME_AS_ENGLISH: Record<string, readonly string[]> = { fr: ['email'], de: ['receipt.shop'] };
  it.each(languages.filter(([code]) => code !== 'en'))('%s is translated, not a copy of English', (code, texts) => {
    const allowed = ['lang', 'dir', ...(SAME_AS_ENGLISH[code] ?? [])];
    const same = leaves(texts).filter(([path, text]) => !allowed.includes(path) && leaves(en).some(([p, t]) => p === path && t === text));
    expect(same).toEqual([]);
  });

  it('reads right to left in Arabic only', () => {
    expect(languages.filter(([, t]) => t.dir === 'rtl').map(([code]) => code)).toEqual(['ar']);
  });

  it.each([
    ['Russian', 'ru', [1, 2, 5, 21], ['Осталось 1 попытка.', 'Осталось 2 попытки.', 'Осталось 5 попыток.', 'Осталось 21 попытка.']],
    ['Ukrainian', 'uk', [1, 3, 11], ['Залишилось 1 спроба.', 'Залишилось 3 спроби.', 'Залишилось 11 спроб.']],
  ])('counts attempts with %s plural forms', (_name, code, counts, texts) => {
    expect(counts.map((n) => PAGE_LANGUAGES[code]!.attemptsLeft(n))).toEqual(texts);
  });
});

describe('choosing the language', () => {
  it.each([
    ['the session language', 'es', 'de-DE,de;q=0.9', 'es'],
    ['the session language in capitals', 'FR', undefined, 'fr'],
    ['Accept-Language when the session has none', undefined, 'de-DE,de;q=0.9,en;q=0.8', 'de'],
    ['Accept-Language when the page lacks the session language', 'it', 'it-IT,uk;q=0.8', 'uk'],
    ['the best q-value first', undefined, 'en;q=0.2, ar;q=0.9, tr;q=0.5', 'ar'],
    ['the first of equal q-values', undefined, 'tr, ru', 'tr'],
    ['English when nothing matches', 'it', 'ja,zh-CN;q=0.5', 'en'],
    ['English with no header', undefined, undefined, 'en'],
    ['English for q=0 only', undefined, 'fr;q=0', 'en'],
    ['English for a malformed header', undefined, ';;;,,q=x,*', 'en'],
    ['English for a prototype name', 'constructor', '__proto__', 'en'],
  ])('takes %s', (_case, session, header, expected) => {
    expect(pageTexts(session, header).lang).toBe(expected);
  });

  it('reads the languages of an Accept-Language header in order of preference', () => {
    expect(acceptedLanguages('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5')).toEqual(['fr', 'fr', 'en', 'de']);
  });
});

describe('the session `language` field (ISO 639-1)', () => {
  it.each(['en', 'es', 'ar', 'uk', 'it', 'ja', 'ZU', 'Fr'])('accepts %s', (code) => expect(isLanguageCode(code)).toBe(true));
  it.each(['', 'e', 'eng', 'en-US', 'xx', 'qq', '12', 'e1', ' en', 'é1', 'İn'])('refuses %j', (code) => expect(isLanguageCode(code)).toBe(false));

  it('accepts exactly the two-letter codes ICU names, as it did when it asked ICU at run time', () => {
    const icu = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const named = [...letters].flatMap((a) => [...letters].map((b) => a + b)).filter((code) => icu.of(code) !== undefined);
    const accepted = [...letters].flatMap((a) => [...letters].map((b) => a + b)).filter(isLanguageCode);
    expect(accepted).toEqual(named);
    for (const old of ['iw', 'in', 'ji']) expect(isLanguageCode(old.toUpperCase())).toBe(true);
  });
});

describe('amounts and dates in the language (Intl)', () => {
  it.each([
    ['en', 2500, 'USD', '$25.00'],
    ['de', 2500, 'EUR', '25,00\u00a0€'],
    ['fr', 123456, 'EUR', '1\u202f234,56\u00a0€'],
    ['es', 1500, 'JPY', '1500\u00a0JPY'],
    ['tr', 2500, 'TRY', '₺25,00'],
  ])('%s writes %d minor units of %s as %s', (lang, minor, currency, shown) => {
    expect(displayAmount(minor, currency, lang).replace(/JP¥|￥/, 'JPY')).toBe(shown);
  });

  it('writes a card expiry month the way each language does', () => {
    expect(monthOfYear(1, 2038, 'en')).toBe('01/38');
    expect(monthOfYear(12, 2040, 'fr')).toBe('12/40');
    expect(monthOfYear(3, 2039, 'ar')).toMatch(/^03\u200f?\/39$/);
  });
});
