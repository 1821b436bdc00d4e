import type { Page } from 'playwright-core';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import { displayAmount } from '../../lambdas/checkout-page/render';
import { cards, fillCard, payWith, seriousA11yViolations } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';
import { statusOf } from '../support/merchant-site';

/**
 * The page in the customer's language, in Chromium: every language with its <html lang dir>, its
 * texts (server-rendered and the script's live messages) and amounts written by Intl, axe-clean
 * on the form with its errors shown; Arabic laid out right to left with the card digits left to
 * right; the browser's language used when the session names none; the sandbox's 3-D Secure page
 * in the session's language too.
 */
const ORDER = { number: 'lang-order', amount: '1234.50', currency: 'EUR', description: 'Teapot' };
const h = checkoutHarness({ shop: { name: 'Atelier Lumière' }, session: () => ({ order: { ...ORDER, number: `lang-${Math.random().toString(36).slice(2, 10)}` } }) });
const { open, checkout } = h;
/** A page whose context bypasses CSP, only so that axe-core can be injected. */
const audited = (locale?: string) => h.audited(locale ? { locale } : {});
const htmlAttributes = (page: Page) => page.evaluate(() => [document.documentElement.lang, document.documentElement.dir]);

describe.each(Object.values(PAGE_LANGUAGES).map((t) => [t.lang, t] as const))('the page in %s', (lang, t) => {
  it('has <html lang dir>, its texts and the amount in the language; axe finds nothing, with errors shown too', async () => {
    const page = await audited();
    const link = await checkout({ language: lang, customer: { name: 'John Doe' }, billing_address: undefined });
    await page.goto(link.url);
    expect(await htmlAttributes(page)).toEqual([lang, t.dir]);
    const amount = displayAmount(123450, 'EUR', lang);
    expect(await page.locator('#pay-button').textContent()).toBe(t.payButton(amount));
    expect(await page.getByLabel(t.cardNumber).count()).toBe(1);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The script's live messages are the language's too.
    await page.locator('#card_number').fill(cards.luhnFails.number);
    await page.locator('#pay-button').click();
    expect(await page.locator('#card_number-error').textContent()).toBe(t.errors.number);
    expect(await page.locator('#error-summary').textContent()).toBe(t.errors.summary);
    expect(await seriousA11yViolations(page)).toEqual([]);
  });
});

describe('right to left (Arabic)', () => {
  it('lays the page out right to left, keeps card digits left to right, and pays', async () => {
    const page = await open({ viewport: { width: 390, height: 844 } });
    const link = await checkout({ language: 'ar' });
    await page.goto(link.url);
    expect(await page.evaluate(() => getComputedStyle(document.body).direction)).toBe('rtl');
    // Labels start at the right edge of the form: their right sides line up with the inputs'.
    const label = await page.locator('label[for="card_holder"]').boundingBox();
    const input = await page.locator('#card_holder').boundingBox();
    expect(Math.abs((label!.x + label!.width) - (input!.x + input!.width))).toBeLessThan(2);
    expect(await page.locator('#card_number').evaluate((e) => getComputedStyle(e).direction)).toBe('ltr');
    await fillCard(page, cards.approved);
    expect(await page.locator('#card_number').inputValue()).toBe('4111 1111 1111 1111');
    await page.locator('#pay-button').click();
    await page.waitForURL((url) => url.origin === h.site.origin && url.pathname === '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });
});

describe('the browser\'s language', () => {
  it('is used when the session names none (Accept-Language from the browser\'s locale)', async () => {
    const page = await open({ locale: 'tr-TR' });
    await page.goto((await checkout()).url);
    expect(await htmlAttributes(page)).toEqual(['tr', 'ltr']);
    expect(await page.locator('#pay-button').textContent()).toBe(PAGE_LANGUAGES.tr!.payButton(displayAmount(123450, 'EUR', 'tr')));
  });

  it('gives way to the session\'s language', async () => {
    const page = await open({ locale: 'tr-TR' });
    await page.goto((await checkout({ language: 'fr' })).url);
    expect(await htmlAttributes(page)).toEqual(['fr', 'ltr']);
  });

  it('falls back to English when the page has neither', async () => {
    const page = await open({ locale: 'ja-JP' });
    await page.goto((await checkout({ language: 'it' })).url);
    expect(await htmlAttributes(page)).toEqual(['en', 'ltr']);
  });
});

describe('the sandbox pages', () => {
  it.each(['es', 'ar'])('shows the 3-D Secure page in the session\'s language (%s), axe-clean', async (lang) => {
    const t = PAGE_LANGUAGES[lang]!;
    const page = await audited();
    const link = await checkout({ language: lang });
    await page.goto(link.url);
    await payWith(page, cards.threeDsPasses);
    await page.waitForURL('**/sandbox/challenge/**');
    expect(await htmlAttributes(page)).toEqual([lang, t.dir]);
    expect(await page.locator('h1').textContent()).toBe(t.challenge.title3ds);
    expect(await page.getByLabel(t.challenge.code).count()).toBe(1);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.locator('#code').fill('123456');
    await page.locator('#confirm').click();
    await page.waitForURL((url) => url.origin === h.site.origin && url.pathname === '/success');
  });
});

describe('amounts in a right-to-left page (Arabic), on a phone', () => {
  /** The on-screen left edge of each character of an element's text, as Chromium laid it out. */
  const charXs = (page: Page, selector: string) =>
    page.locator(selector).evaluate((element) => {
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      const out: { ch: string; x: number }[] = [];
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (let i = 0; i < (node.textContent ?? '').length; i++) {
          const range = document.createRange();
          range.setStart(node, i);
          range.setEnd(node, i + 1);
          const rect = range.getBoundingClientRect();
          if (rect.width > 0) out.push({ ch: node.textContent![i]!, x: rect.left });
        }
      }
      return out;
    });
  const x = (chars: { ch: string; x: number }[], ch: string) => chars.find((c) => c.ch === ch)!.x;

  it.each([
    ['USD', 'US$', '10.00'],
    ['JPY', 'JP¥', '1500'],
  ])('%s: "%s" reads as written, left of the number, in the amount and the Pay button; the title isolates it too', async (currency, symbol, amount) => {
    const page = await open({ viewport: { width: 390, height: 844 } });
    const link = await checkout({ language: 'ar', order: { number: `rtl-${currency}-${Math.random().toString(36).slice(2, 8)}`, amount, currency, description: 'Teapot' } });
    await page.goto(link.url);
    for (const selector of ['.amount', '#pay-button']) {
      const chars = await charXs(page, selector);
      // "US$" left to right: the letters first, the sign after them, all left of the number.
      expect(x(chars, symbol[0]!)).toBeLessThan(x(chars, symbol[1]!));
      expect(x(chars, symbol[1]!)).toBeLessThan(x(chars, symbol[2]!));
      expect(x(chars, symbol[2]!)).toBeLessThan(x(chars, '1'));
    }
    expect(await page.title()).toContain(`\u2066${symbol}\u2069`);
  });
});
