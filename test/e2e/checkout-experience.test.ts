import type { Page } from 'playwright-core';
import { cards, fillCard, screenshot } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';
import { statusOf } from '../support/merchant-site';

/**
 * The rough edges of the hosted page a customer hits first, in a real browser: expiry dates typed
 * as MM/YY, MM/YYYY or M/YY (with and without JavaScript), and a click on Pay that must land where
 * the pointer is even when leaving the last field shows an error.
 */
const h = checkoutHarness({ shop: { name: 'Corner Shop' } });
const { open, checkout, landOn } = h;

describe('expiry dates (docs/sandbox.md: MM/YY or MM/YYYY)', () => {
  it.each([
    ['MM/YYYY typed key by key', '01/2038', '01/2038'],
    ['MM/YY typed key by key', '01/38', '01/38'],
    ['a one-digit month with its slash', '1/38', '1/38'],
    ['digits only, four of them', '0138', '01/38'],
    ['digits only, six of them', '012038', '01/2038'],
    ['a month above 1 alone', '538', '05/38'],
  ])('keeps %s (%s → %s) and pays with it', async (_case, typed, shown) => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    await fillCard(page, { ...cards.approved, expiry: '' });
    await page.locator('#card_expiry').pressSequentially(typed);
    expect(await page.locator('#card_expiry').inputValue()).toBe(shown);
    await page.locator('#card_cvv').focus();
    expect(await page.locator('#card_expiry-error').textContent()).toBe('');
    await page.locator('#pay-button').click();
    // 05/38 is the sandbox's 3-D Secure card: it asks for the code before paying.
    if (shown === '05/38') {
      await page.locator('#code').fill('123456');
      await page.locator('#confirm').click();
    }
    await landOn(page, '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('keeps a pasted 01/2038 as it is', async () => {
    const page = await open();
    await page.goto((await checkout()).url);
    await page.locator('#card_expiry').fill('01/2038');
    expect(await page.locator('#card_expiry').inputValue()).toBe('01/2038');
  });

  it('lets the slash be deleted and typed again', async () => {
    const page = await open();
    await page.goto((await checkout()).url);
    await page.locator('#card_expiry').pressSequentially('01');
    expect(await page.locator('#card_expiry').inputValue()).toBe('01/');
    await page.keyboard.press('Backspace');
    expect(await page.locator('#card_expiry').inputValue()).toBe('01');
    await page.keyboard.type('/2038');
    expect(await page.locator('#card_expiry').inputValue()).toBe('01/2038');
  });

  it.each(['01/2038', '1/38'])('pays with %s without JavaScript (the server reads both forms)', async (expiry) => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    await page.goto(link.url);
    await fillCard(page, { ...cards.approved, expiry });
    await page.locator('#pay-button').click();
    await landOn(page, '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('still refuses an expired MM/YYYY (01/2020) live and on the server', async () => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    await fillCard(page, { ...cards.approved, expiry: '01/2020' });
    await page.locator('#card_cvv').focus();
    expect(await page.locator('#card_expiry-error').textContent()).toBe('The expiration date of card is expired and not valid.');
    const off = await open({ javaScriptEnabled: false });
    await off.goto(link.url);
    await fillCard(off, { ...cards.approved, expiry: '01/2020' });
    await off.locator('#pay-button').click();
    await off.locator('#card_expiry-error').filter({ hasText: 'expired' }).waitFor();
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });
  });
});

describe('no layout shift under the pointer', () => {
  const payButtonBox = async (page: Page) => {
    const box = await page.locator('#pay-button').boundingBox();
    if (!box) throw new Error('the Pay button is not shown');
    return box;
  };

  it.each([
    ['a desktop window', { width: 1280, height: 900 }],
    ['a 390 px phone', { width: 390, height: 844 }],
  ])('keeps the Pay button where it is when leaving an invalid last field by pressing Pay (%s)', async (_case, viewport) => {
    const page = await open({ viewport });
    const link = await checkout();
    await page.goto(link.url);
    await fillCard(page, { ...cards.approved, holder: 'J' });
    await page.locator('#card_holder').focus();
    const before = await payButtonBox(page);
    await page.mouse.move(before.x + before.width / 2, before.y + before.height / 2);
    await page.mouse.down();
    // The field has lost focus to the press: the button has not moved, nothing above it grew.
    expect(await page.evaluate(() => document.activeElement?.id)).not.toBe('card_holder');
    expect(await payButtonBox(page)).toEqual(before);
    await page.mouse.up();
    // The click landed on the button: the submit checked the form and names the field.
    await page.locator('#card_holder-error').filter({ hasText: /./ }).waitFor();
    expect(await page.locator('#error-summary').isVisible()).toBe(true);
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });
  });

  it('reserves the line of every field error: a one-line error leaves the button where it was', async () => {
    const page = await open({ viewport: { width: 1280, height: 900 } });
    await page.goto((await checkout()).url);
    await fillCard(page, { ...cards.approved, holder: 'J' });
    const before = await payButtonBox(page);
    await page.locator('#card_holder').press('Tab');
    await page.locator('#card_holder-error').filter({ hasText: /./ }).waitFor();
    expect(await page.locator('#card_holder-error').evaluate((e) => e.getBoundingClientRect().height)).toBeLessThanOrEqual(21);
    expect(await payButtonBox(page)).toEqual(before);
    await screenshot(page, 'form-holder-error');
  });
});
