import type { Page } from 'playwright-core';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import { cards, fillCard, seriousA11yViolations } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';
import { statusOf } from '../support/merchant-site';

/**
 * The card form as a customer on a phone (390 × 844) sees it, in Russian and Arabic (the longest
 * labels and the right-to-left page; English is the other files' language): nothing wider than the screen whatever the shop's
 * description, the amount in view above a long one, the expiry and security code boxes on one line,
 * nothing moving when the card type appears, a security code one can read while typing, the name
 * the shop gave already in, and an empty expiry asked for rather than called expired.
 */
const h = checkoutHarness({ shop: { name: 'Phone Shop' } });
const { open, checkout, landOn } = h;
const PHONE = { viewport: { width: 390, height: 844 } };
const order = (description: string) => ({ number: `phone-${Math.random().toString(36).slice(2, 10)}`, amount: '25.00', currency: 'EUR', description });
const widths = (page: Page) => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
const top = async (page: Page, selector: string) => (await page.locator(selector).boundingBox())!.y;

describe.each(['ru', 'ar'])('on a phone, in %s', (language) => {
  const t = PAGE_LANGUAGES[language]!;

  it('a 60-character word in the description breaks instead of widening the page', async () => {
    const page = await open(PHONE);
    await page.goto((await checkout({ language, order: order('X'.repeat(60)) })).url);
    const { scroll, client } = await widths(page);
    expect(client).toBeLessThanOrEqual(390);
    expect(scroll).toBeLessThanOrEqual(client);
  });

  it('a 1,024-character description folds under the amount, which stays at the top; the whole text opens on request, axe-clean', async () => {
    // A context that lets axe-core in (CSP bypassed for it alone); the layout is the page's own.
    const page = await h.audited(PHONE);
    const text = `${'Handmade ceramic teapot with matching cups, '.repeat(23)}end.`.slice(0, 1024);
    await page.goto((await checkout({ language, order: order(text) })).url);
    expect(await top(page, '.amount')).toBeLessThan(150);
    expect((await widths(page)).scroll).toBeLessThanOrEqual(390);
    // Folded: the card number is on the first screen.
    expect(await top(page, '#card_number')).toBeLessThan(844);
    await page.locator('.description summary').click();
    expect(await page.locator('.description p').textContent()).toBe(text);
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it.each([361, 390])('the expiry and security code boxes sit on one line at %i px, whatever their labels\' and hints\' length', async (width) => {
    const page = await open({ viewport: { width, height: 844 } });
    await page.goto((await checkout({ language })).url);
    const [expiry, cvv] = [await page.locator('#card_expiry').boundingBox(), await page.locator('#card_cvv').boundingBox()];
    expect(Math.abs(expiry!.y - cvv!.y)).toBeLessThan(1);
    expect(Math.abs(expiry!.height - cvv!.height)).toBeLessThan(1);
  });

  it('nothing below the number moves when the card type appears', async () => {
    const page = await open(PHONE);
    await page.goto((await checkout({ language })).url);
    const before = await top(page, '#card_holder');
    await page.locator('#card_number').fill(cards.approved.number);
    await expect(page.locator('#card-brand').textContent()).resolves.toBe(t.brandDetected('VISA'));
    expect(Math.abs((await top(page, '#card_holder')) - before)).toBeLessThan(0.5);
  });
});

describe('fields', () => {
  it('the security code shows what is typed (a typo can be seen), and is still a one-time card field', async () => {
    const page = await open(PHONE);
    await page.goto((await checkout()).url);
    const cvv = page.locator('#card_cvv');
    expect(await cvv.getAttribute('type')).toBe('text');
    expect(await cvv.getAttribute('autocomplete')).toBe('cc-csc');
    expect(await cvv.getAttribute('inputmode')).toBe('numeric');
    expect(await cvv.getAttribute('value')).toBeNull();
  });

  it('the name on card starts as the name the shop gave; the customer can change it, and pays', async () => {
    const page = await open(PHONE);
    const link = await checkout({ customer: { name: 'Maria Sanchez', email: 'maria@example.com' } });
    await page.goto(link.url);
    expect(await page.locator('#card_holder').inputValue()).toBe('Maria Sanchez');
    await fillCard(page, { ...cards.approved, holder: 'Maria S Sanchez' });
    await page.locator('#pay-button').click();
    await landOn(page, '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('a session without a name leaves the field empty', async () => {
    const page = await open(PHONE);
    await page.goto((await checkout({ customer: undefined })).url);
    expect(await page.locator('#card_holder').inputValue()).toBe('');
  });

  it.each([true, false])('an empty expiry is asked for, not called expired (JavaScript %s)', async (javaScriptEnabled) => {
    const page = await open({ ...PHONE, javaScriptEnabled });
    await page.goto((await checkout({ language: 'ru' })).url);
    const submit = async () => {
      await page.locator('#pay-button').click();
      // Without scripts the form goes to the server, which answers with the form and its errors.
      if (!javaScriptEnabled) await page.waitForLoadState('load');
      return page.locator('#card_expiry-error').textContent();
    };
    await fillCard(page, { ...cards.approved, expiry: '' });
    expect(await submit()).toBe(PAGE_LANGUAGES.ru!.errors.expiryMissing);
    // A wrong one is still called wrong.
    await fillCard(page, { ...cards.approved, expiry: '13/38' });
    expect(await submit()).toBe(PAGE_LANGUAGES.ru!.errors.expiry);
  });
});

describe.each(['ru', 'ar'])('a decline on a phone, in %s', (language) => {
  const t = PAGE_LANGUAGES[language]!;
  it.each([
    ['declined by the bank (02/38)', cards.declined, 'generic'],
    ['3-D Secure failed (06/38)', cards.threeDsFails, 'authentication'],
  ] as const)('%s: says what to do in the language, each sentence on its own line, no acquirer English', async (_what, card, kind) => {
    const page = await open(PHONE);
    await page.goto((await checkout({ language })).url);
    await fillCard(page, card);
    await page.locator('#pay-button').click();
    if (card === cards.threeDsFails) {
      await page.locator('#code').fill('123456');
      await page.locator('#confirm').click();
    }
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.locator('p').allTextContents()).toEqual([t.declines[kind], t.attemptsLeft(2)]);
    expect(await alert.textContent()).not.toMatch(/[A-Za-z]{3,}/);
    expect((await widths(page)).scroll).toBeLessThanOrEqual(390);
  });
});
