import type { Page } from 'playwright-core';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import { displayAmount } from '../../lambdas/checkout-page/render';
import { cards, fillCard, seriousA11yViolations } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';

/**
 * A receipt on the success page a url_target other than _self shows (_self goes straight to the
 * shop's success_url, unchanged for integrations), and on the link opened again once paid: the shop, the amount, when, the order, our reference and the card's last
 * four, in the customer's language (Chromium; without scripts the success page stays, as a slow
 * or blocked redirect leaves it).
 */
const h = checkoutHarness({ shop: { name: 'Receipt Shop' } });
const { open, checkout, landOn } = h;

const receiptRows = (page: Page) =>
  page.getByRole('region', { name: /Receipt|إيصال|Квитанция/ }).locator('dt, dd').allTextContents();

const expectReceipt = async (page: Page, link: { paymentId: string }, orderNumber: string, lang = 'en') => {
  const t = PAGE_LANGUAGES[lang]!.receipt;
  const rows = await receiptRows(page);
  const pairs = Object.fromEntries(rows.flatMap((v, i, all) => (i % 2 === 0 ? [[v, all[i + 1]]] : [])));
  expect(pairs[t.shop]).toBe('Receipt Shop');
  expect(pairs[t.amount]).toBe(displayAmount(2500, 'USD', lang));
  expect(pairs[t.date]).toMatch(/UTC$/);
  expect(pairs[t.order]).toBe(orderNumber);
  expect(pairs[t.reference]).toBe(link.paymentId);
  expect(pairs[t.card]).toBe(`VISA ${t.cardEnding('1111')}`);
};

/** Opens the link and pays it with the approved test card. */
async function pay(page: Page, link: { url: string }): Promise<void> {
  await page.goto(link.url);
  await fillCard(page, cards.approved);
  await page.locator('#pay-button').click();
}

describe('the receipt after paying', () => {
  it.each(['_top', '_parent', '_blank'])('url_target %s: the success page shows it (without scripts, where it stays)', async (target) => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout({ url_target: target });
    await pay(page, link);
    await page.locator('h1#title[data-state="success"]').waitFor();
    await expectReceipt(page, link, link.order.number);
    expect(await page.getByRole('link', { name: 'Continue' }).count()).toBe(1);
  });

  it('with scripts and url_target _blank, the page left behind shows it, axe-clean', async () => {
    const page = await h.audited();
    const link = await checkout({ url_target: '_blank' });
    await page.goto(link.url);
    await fillCard(page, cards.approved);
    const [shopWindow] = await Promise.all([page.waitForEvent('popup'), page.locator('#pay-button').click()]);
    await shopWindow.waitForURL((url) => url.pathname === '/success');
    await page.locator('h1#title[data-state="success"]').waitFor();
    await expectReceipt(page, link, link.order.number);
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('url_target _self (the default) still goes straight to the shop\'s success_url, as integrations expect; the link shows the receipt after', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    await pay(page, link);
    await landOn(page, '/success');
    await page.goto(link.url);
    await expectReceipt(page, link, link.order.number);
  });

  it('the link opened again once paid shows it too', async () => {
    const page = await open();
    const link = await checkout();
    await pay(page, link);
    await landOn(page, '/success');
    await page.goto(link.url);
    expect(await page.locator('h1#title').textContent()).toBe('This order is already paid');
    await expectReceipt(page, link, link.order.number);
  });

  it('in Arabic, on a phone: the labels in Arabic, the order and reference left to right', async () => {
    const page = await open({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false });
    const link = await checkout({ language: 'ar', url_target: '_top' });
    await pay(page, link);
    await page.locator('h1#title[data-state="success"]').waitFor();
    await expectReceipt(page, link, link.order.number, 'ar');
    expect(await page.locator('.receipt dd[dir="ltr"]').allTextContents()).toEqual([link.order.number, link.paymentId]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });
});
