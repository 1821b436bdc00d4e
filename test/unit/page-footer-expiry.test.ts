import { en } from '../../lambdas/checkout-page/texts/en';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import { EXPIRY_WARNING_MINUTES, linkExpiry, validUntilText } from '../../lambdas/checkout-page/link-expiry';
import { pageProviderOf } from '../../lambdas/checkout-page/provider';
import { providerEnvironment } from '../../lib/stage-settings';

/**
 * The checkout page's footer ("Payments by <provider>", terms, privacy) and its word on the link's
 * expiry, in each of the page's 8 languages: every language has its own words, naming what it is
 * given; the plural forms of Russian, Ukrainian and Arabic.
 */
const languages = Object.values(PAGE_LANGUAGES).map((t) => [t.lang, t] as const);

describe('the texts in every language', () => {
  it('are the 8 languages of the page', () => {
    expect(languages.map(([lang]) => lang).sort()).toEqual(['ar', 'de', 'en', 'es', 'fr', 'ru', 'tr', 'uk']);
  });

  it.each(languages)('%s: the footer names the provider, and says terms and privacy in its own words', (lang, t) => {
    expect(t.footer.paymentsBy('Example Payments')).toContain('Example Payments');
    expect(t.footer.terms.trim()).not.toBe('');
    expect(t.footer.privacy.trim()).not.toBe('');
    expect(t.footer.terms).not.toBe(t.footer.privacy);
    if (lang !== 'en') expect([t.footer.paymentsBy('X'), t.footer.terms, t.footer.privacy]).not.toEqual([en.footer.paymentsBy('X'), en.footer.terms, en.footer.privacy]);
  });

  it.each(languages)('%s: the link is valid until a time, and expires in 1 to %s minutes, each said differently', (lang, t) => {
    expect(t.linkExpiry.validUntil('14:05 UTC')).toContain('14:05 UTC');
    const warnings = Array.from({ length: EXPIRY_WARNING_MINUTES }, (_, i) => t.linkExpiry.endsSoon(i + 1));
    expect(new Set(warnings).size).toBe(EXPIRY_WARNING_MINUTES);
    // A number is written out, or as the word the language uses for one or two.
    warnings.slice(2).forEach((w, i) => expect(w).toContain(String(i + 3)));
    if (lang !== 'en') expect(t.linkExpiry.endsSoon(5)).not.toBe(en.linkExpiry.endsSoon(5));
  });

  it.each([
    ['ru', ['1 минуту', '2 минуты', '5 минут']],
    ['uk', ['1 хвилину', '2 хвилини', '5 хвилин']],
    ['ar', ['دقيقة واحدة', 'دقيقتين', '5 دقائق']],
    ['en', ['1 minute.', '2 minutes.', '5 minutes.']],
  ])('%s: plural forms', (lang, forms) => {
    const t = PAGE_LANGUAGES[lang]!;
    expect([1, 2, 5].map((n, i) => t.linkExpiry.endsSoon(n).includes(forms[i]!))).toEqual([true, true, true]);
  });
});

describe('the time the link is valid until', () => {
  const now = new Date('2026-03-02T09:00:00Z');
  it('is the time alone on the same day, in UTC, named', () => {
    expect(validUntilText(new Date('2026-03-02T10:00:00Z'), now, 'en')).toBe('10:00 AM UTC');
    expect(validUntilText(new Date('2026-03-02T10:00:00Z'), now, 'de')).toBe('10:00 UTC');
  });
  it('has the date when the link ends on another day (session_expiry up to 12 hours)', () => {
    expect(validUntilText(new Date('2026-03-03T01:30:00Z'), now, 'en')).toBe('Mar 3, 2026, 1:30 AM UTC');
  });

  it("hands the script the time left as the server saw it, and every language's words", () => {
    const { validUntil, warning, script } = linkExpiry('2026-03-02T10:00:00Z', now, PAGE_LANGUAGES.fr!);
    const data = JSON.parse(/<script type="application\/json" id="expiry">(.*)<\/script>/.exec(validUntil)![1]!) as Record<string, unknown>;
    expect(data).toEqual({
      at: Date.parse('2026-03-02T10:00:00Z'),
      inMs: 3_600_000,
      warnMinutes: EXPIRY_WARNING_MINUTES,
      until: PAGE_LANGUAGES.fr!.linkExpiry.validUntil('%s'),
      soon: [1, 2, 3, 4, 5].map((n) => PAGE_LANGUAGES.fr!.linkExpiry.endsSoon(n)),
      over: `${PAGE_LANGUAGES.fr!.expiredTitle}. ${PAGE_LANGUAGES.fr!.expiredBody}`,
    });
    expect(validUntil).toContain(`>${PAGE_LANGUAGES.fr!.linkExpiry.validUntil('10:00 UTC')}</p>`);
    expect(warning).toBe('<p class="expiry-warning" id="expiry-warning" role="status" aria-live="polite"></p>');
    expect(script).not.toMatch(/<\//);
  });

  it('says nothing for a payment without a link expiry', () => {
    expect(linkExpiry(undefined, now, en)).toEqual({ validUntil: '', warning: '', script: '' });
  });
});

describe('the provider', () => {
  it('is named by the stage (PROVIDER_*), or not at all', () => {
    expect(pageProviderOf({})).toBeUndefined();
    expect(pageProviderOf({ PROVIDER_NAME: 'Example Payments', PROVIDER_TERMS_URL: 'https://p.example/terms', PROVIDER_PRIVACY_URL: 'https://p.example/privacy' })).toEqual({
      name: 'Example Payments',
      termsUrl: 'https://p.example/terms',
      privacyUrl: 'https://p.example/privacy',
    });
    expect(providerEnvironment({ name: 'Example Payments', termsUrl: 'https://p.example/terms', privacyUrl: 'https://p.example/privacy' })).toEqual({
      PROVIDER_NAME: 'Example Payments',
      PROVIDER_TERMS_URL: 'https://p.example/terms',
      PROVIDER_PRIVACY_URL: 'https://p.example/privacy',
    });
    expect(providerEnvironment(undefined)).toEqual({});
  });
});
