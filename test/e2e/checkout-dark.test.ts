import type { Page } from 'playwright-core';
import { cards, fillCard, seriousA11yViolations } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';

/**
 * The hosted page in a browser set to dark (prefers-color-scheme): dark surfaces, light text, and
 * axe's contrast checks clean on the form with its errors, on a decline, and on the receipt; the
 * merchant's colour still fills the Pay button. Light stays as it was.
 */
const h = checkoutHarness({ shop: { name: 'Night Shop', settings: { branding: { primaryColor: '#0b5cad' } } } });
const { checkout } = h;

/** Relative luminance of a computed `rgb(...)` colour (WCAG). */
const luminance = (rgb: string): number => {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((v) => {
    const c = Number(v) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
};
const colours = (page: Page) =>
  page.evaluate(() => ({
    body: getComputedStyle(document.body).backgroundColor,
    panel: getComputedStyle(document.querySelector('.panel')!).backgroundColor,
    text: getComputedStyle(document.body).color,
    pay: document.querySelector('#pay-button') ? getComputedStyle(document.querySelector('#pay-button')!).backgroundColor : undefined,
  }));

describe('dark', () => {
  it('the form: dark surfaces, light text, the merchant\'s colour on Pay; axe-clean with errors shown and after a decline', async () => {
    const page = await h.audited({ colorScheme: 'dark', viewport: { width: 390, height: 844 } });
    await page.goto((await checkout()).url);
    const c = await colours(page);
    expect(luminance(c.body)).toBeLessThan(0.05);
    expect(luminance(c.panel)).toBeLessThan(0.05);
    expect(luminance(c.text)).toBeGreaterThan(0.6);
    expect(c.pay).toBe('rgb(11, 92, 173)');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await page.locator('#card_number').fill(cards.luhnFails.number);
    await page.locator('#pay-button').click();
    expect(await seriousA11yViolations(page)).toEqual([]);
    await fillCard(page, cards.declined);
    await page.locator('#pay-button').click();
    await page.getByRole('alert').filter({ hasText: 'declined' }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('the receipt after paying: axe-clean in dark', async () => {
    const page = await h.audited({ colorScheme: 'dark' });
    const link = await checkout({ url_target: '_blank' });
    await page.goto(link.url);
    await fillCard(page, cards.approved);
    const [shop] = await Promise.all([page.waitForEvent('popup'), page.locator('#pay-button').click()]);
    await shop.waitForURL((url) => url.pathname === '/success');
    await page.locator('.receipt').waitFor();
    expect(luminance((await colours(page)).panel)).toBeLessThan(0.05);
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('light stays light', async () => {
    const page = await h.audited({ colorScheme: 'light' });
    await page.goto((await checkout()).url);
    const c = await colours(page);
    expect(c.panel).toBe('rgb(255, 255, 255)');
    expect(luminance(c.text)).toBeLessThan(0.05);
  });
});
