import type { Page } from 'playwright-core';
import { cards, fillCard, payWith, screenshot, seriousA11yViolations } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';
import { statusOf } from '../support/merchant-site';

/**
 * What makes the page trustworthy and clear to a customer, in Chromium: the accepted brands' marks
 * and the typed card's brand, Amex grouped as printed, no brand beside an invalid number; the shop,
 * amount and last four on the 3-D Secure and bank pages, a mistyped code asked again; a success
 * screen when the shop opens in a new window; the way back from a paid link; the name and contact
 * details kept (and still editable) after a decline, never the card; a broken logo not shown.
 */
const h = checkoutHarness({ shop: { name: 'Corner Shop', settings: { returnParams: true } } });
const { open, checkout, landOn: onSite } = h;
const lit = (page: Page) => page.locator('#brand-marks li[data-on] svg').getAttribute('aria-label');

describe('card brands', () => {
  it('shows the accepted brands\' marks, labelled, and lights the brand of the number typed', async () => {
    const page = await open();
    await page.goto((await checkout()).url);
    const marks = page.getByRole('list', { name: 'Cards accepted' });
    expect(await marks.getByRole('img').evaluateAll((imgs) => imgs.map((i) => i.getAttribute('aria-label')))).toEqual(['Visa', 'Mastercard', 'Maestro', 'American Express', 'Mir', 'UnionPay', 'Discover', 'JCB', 'Diners Club']);
    expect(await page.locator('#brand-marks li[data-on]').count()).toBe(0);
    await page.locator('#card_number').pressSequentially('5555 5555');
    expect(await lit(page)).toBe('Mastercard');
    await page.locator('#card_number').fill('');
    await page.locator('#card_number').pressSequentially('4111');
    expect(await lit(page)).toBe('Visa');
    expect(await page.locator('#card-brand').textContent()).toBe('Card type: VISA');
    // Nothing is fetched for the marks: they are part of the page.
    expect(await page.locator('#brand-marks img, #brand-marks [href]').count()).toBe(0);
  });

  it.each([
    ['Discover', '6011 1111 1111 1117', 'DISCOVER'],
    ['JCB', '3530 1113 3330 0000', 'JCB'],
    ['Diners Club', '3056 930902 5904', 'DINERS'],
  ])('a %s number (%s) lights its own mark, the others dimmed, and names the type', async (mark, number, type) => {
    const page = await open();
    await page.goto((await checkout()).url);
    await page.locator('#card_number').pressSequentially(number.replace(/ /g, ''));
    expect(await lit(page)).toBe(mark);
    expect(await page.locator('#brand-marks li[data-on]').count()).toBe(1);
    // The lit mark stays at full strength; every other is dimmed.
    const opacities = await page.locator('#brand-marks li').evaluateAll((lis) => lis.map((li) => [li.querySelector('svg')!.getAttribute('aria-label'), getComputedStyle(li).opacity]));
    for (const [label, opacity] of opacities) expect(opacity).toBe(label === mark ? '1' : '0.3');
    expect(await page.locator('#card-brand').textContent()).toBe(`Card type: ${type}`);
  });

  it('groups an American Express number 4-6-5 as printed on the card', async () => {
    const page = await open();
    await page.goto((await checkout()).url);
    await page.locator('#card_number').pressSequentially('378282246310005');
    expect(await page.locator('#card_number').inputValue()).toBe('3782 822463 10005');
    expect(await lit(page)).toBe('American Express');
    await page.locator('#card_expiry').focus();
    expect(await page.locator('#card_number-error').textContent()).toBe('');
  });

  it('does not name a brand beside "Invalid card number"', async () => {
    const page = await open();
    await page.goto((await checkout()).url);
    await page.locator('#card_number').fill('4111 1111 1111 1112');
    await page.locator('#card_expiry').focus();
    expect(await page.locator('#card_number-error').textContent()).toBe('Invalid card number');
    expect(await page.locator('#card-brand').textContent()).toBe('');
    // Corrected, the brand is named again.
    await page.locator('#card_number').fill(cards.approved.number);
    expect(await page.locator('#card_number-error').textContent()).toBe('');
    expect(await page.locator('#card-brand').textContent()).toBe('Card type: VISA');
  });
});

describe('the 3-D Secure and bank pages', () => {
  it('name the shop, the amount and the card\'s last four; a mistyped code is asked again, then the right one pays', async () => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.threeDsPasses);
    await page.waitForURL('**/sandbox/challenge/**');
    expect(await page.locator('.amount-line').textContent()).toBe('Corner Shop: $25.00, card ending in 1111');
    await page.locator('#code').fill('654321');
    await page.locator('#confirm').click();
    await page.getByRole('alert').filter({ hasText: 'This code is not right. Check it and enter it again (2 tries left).' }).waitFor();
    expect(await page.locator('#code').getAttribute('aria-invalid')).toBe('true');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: '3ds' });
    await screenshot(page, 'challenge-wrong-code');
    await page.locator('#code').fill('123456');
    await page.locator('#confirm').click();
    await onSite(page, '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('the bank page names them too', async () => {
    const page = await open();
    await page.goto((await checkout()).url);
    await payWith(page, cards.redirect);
    await page.waitForURL('**/sandbox/challenge/**');
    expect(await page.locator('.amount-line').textContent()).toBe('Corner Shop: $25.00, card ending in 1111');
  });

  it('stay accessible with the wrong-code message shown', async () => {
    const page = await h.audited();
    await page.goto((await checkout()).url);
    await payWith(page, cards.threeDsPasses);
    await page.waitForURL('**/sandbox/challenge/**');
    await page.locator('#code').fill('000000');
    await page.locator('#confirm').click();
    await page.getByRole('alert').waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
  });
});

describe('after paying', () => {
  it('says the payment succeeded on the page left behind when the shop opens in a new window (url_target _blank)', async () => {
    const page = await open();
    const link = await checkout({ url_target: '_blank' });
    await page.goto(link.url);
    await fillCard(page, cards.approved);
    const [shopWindow] = await Promise.all([page.waitForEvent('popup'), page.locator('#pay-button').click()]);
    await shopWindow.waitForURL((url) => url.pathname === '/success');
    const title = page.locator('h1#title');
    await title.waitFor();
    expect(await title.textContent()).toBe('Payment successful');
    await page.getByText('You paid $25.00 to Corner Shop.').waitFor();
    await page.getByText('The shop opens in a new window. You can close this page.').waitFor();
    expect(await page.getByRole('link', { name: 'Continue' }).getAttribute('target')).toBe('_blank');
    await screenshot(page, 'success-new-window');
  });

  it('offers "Back to the shop" on an already paid link, to the success page with the return parameters', async () => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.approved);
    await onSite(page, '/success');
    await page.goto(link.url);
    expect(await page.locator('h1#title').textContent()).toBe('This order is already paid');
    await page.getByRole('link', { name: 'Back to the shop' }).click();
    await onSite(page, '/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
  });
});

describe('after a decline', () => {
  it('keeps the typed name, e-mail and country (never the card number or CVV), and lets the e-mail and country be changed', async () => {
    const page = await open();
    const link = await checkout({ customer: null, billing_address: undefined });
    await page.goto(link.url);
    await payWith(page, { ...cards.declined, holder: 'Ana Lima' }, { email: 'ana@example.com', country: 'PT' });
    await page.getByRole('alert').filter({ hasText: 'declined' }).waitFor();
    expect(await page.locator('#card_holder').inputValue()).toBe('Ana Lima');
    expect(await page.locator('#email').inputValue()).toBe('ana@example.com');
    expect(await page.locator('#country').inputValue()).toBe('PT');
    expect(await page.locator('#card_number').inputValue()).toBe('');
    expect(await page.locator('#card_cvv').inputValue()).toBe('');
    const html = await page.content();
    expect(html).not.toContain('4111 1111 1111 1111');
    expect(html).not.toContain('4111111111111111');

    await page.locator('#email').fill('ana.lima@example.com');
    await page.locator('#country').selectOption('ES');
    await page.locator('#card_holder').fill('Ana Lima Souza');
    await fillCard(page, { ...cards.approved, holder: 'Ana Lima Souza' });
    await page.locator('#pay-button').click();
    await onSite(page, '/success');
    const stored = await h.service.deps.store.findPayment(link.paymentId);
    expect(stored?.customer).toEqual({ name: 'Ana Lima Souza', email: 'ana.lima@example.com' });
    expect(stored?.billingAddress?.country).toBe('ES');
  });
});

describe('the merchant\'s logo', () => {
  it('is not shown, nor its alt text, when it fails to load; the name stays as the heading', async () => {
    const merchant = await h.service.createMerchant({ name: 'Logo Shop', settings: { branding: { logoUrl: 'https://logo.invalid/missing.png' } } });
    const page = await open();
    await page.goto((await checkout({}, merchant)).url);
    const logo = page.locator('header img');
    await page.waitForFunction(() => { const i = document.querySelector('header img') as HTMLImageElement | null; return Boolean(i && i.complete); });
    expect(await logo.getAttribute('alt')).toBe('');
    const area = await logo.evaluate((i) => { const r = i.getBoundingClientRect(); return r.width * r.height; });
    expect(area).toBe(0);
    expect(await page.locator('header').innerText()).toMatch(/^Logo Shop/);
  });
});
