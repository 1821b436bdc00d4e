import type { Page } from 'playwright-core';
import { cards, launchBrowser, newPage, payWith, screenshot } from '../support/browser';
import { createCheckout, startMerchantSite, statusOf } from '../support/merchant-site';
import { browserForFile } from '../support/suites';

/**
 * The checkout embedded in the merchant's own page (an iframe, allowed by the merchant's
 * frameAncestors) with url_target=_top: the whole window, not the frame, goes back to the shop.
 */
const { browser, service, site, merchants: [shop] } = browserForFile({ page: false, merchants: (site) => [{ name: 'Framing Shop', settings: { returnParams: true, frameAncestors: [site.origin] } }] });

let page: Page;
afterEach(async () => {
  await page.context().close();
});

const shopPage = (checkoutUrl: string) => `${site.origin}/shop?link=${encodeURIComponent(checkoutUrl)}`;
const topLandsOn = (path: string) => page.waitForURL((url) => url.origin === site.origin && url.pathname === path);

describe('the checkout inside the merchant page', () => {
  beforeEach(async () => {
    ({ page } = await newPage(browser));
    page.setDefaultTimeout(10_000);
  });

  it('is allowed in the merchant frame and, after paying, takes the whole window to success_url', async () => {
    const link = await createCheckout(service, shop, { ...site.urls(), url_target: '_top' });
    const res = await page.request.get(link.url);
    expect(res.headers()['x-frame-options']).toBeUndefined();
    expect(res.headers()['content-security-policy']).toContain(`frame-ancestors ${site.origin}`);

    await page.goto(shopPage(link.url));
    const frame = page.frameLocator('#checkout');
    await frame.locator('#pay-form').waitFor();
    await screenshot(page, 'iframe-form');
    await payWith(frame, cards.approved);

    await topLandsOn('/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
    expect(page.frames()).toHaveLength(1);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('shows the 3-D Secure challenge inside the frame and then takes the whole window to success_url', async () => {
    const link = await createCheckout(service, shop, { ...site.urls(), url_target: '_top' });
    await page.goto(shopPage(link.url));
    const frame = page.frameLocator('#checkout');
    await payWith(frame, cards.threeDsPasses);
    await frame.locator('#code').fill('123456');
    await frame.locator('#confirm').click();

    await topLandsOn('/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
  });

  it('is refused in a frame when the merchant allows no framing', async () => {
    const other = await service.createMerchant({ name: 'Unframed Shop' });
    const link = await createCheckout(service, other, site.urls());
    const res = await page.request.get(link.url);
    expect(res.headers()['x-frame-options']).toBe('DENY');
    expect(res.headers()['content-security-policy']).toContain("frame-ancestors 'none'");

    // The shop page's load event waits for its frame, refused or not.
    await page.goto(shopPage(link.url), { waitUntil: 'load' });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    expect(await frame?.locator('#pay-form').count()).toBe(0);
  });
});

describe('without JavaScript', () => {
  beforeEach(async () => {
    ({ page } = await newPage(browser, { javaScriptEnabled: false }));
    page.setDefaultTimeout(10_000);
  });

  it('offers a Continue link when the merchant asked for another browsing context', async () => {
    const link = await createCheckout(service, shop, { ...site.urls(), url_target: '_top' });
    await page.goto(link.url);
    await payWith(page, cards.approved);

    const go = page.getByRole('link', { name: 'Continue' });
    await go.waitFor();
    // Paid: the page says so before the customer goes on.
    expect(await page.locator('h1#title').textContent()).toBe('Payment successful');
    await page.getByText('If nothing happens, use the button below.').waitFor();
    await screenshot(page, 'navigation-no-js');
    await go.click();
    await topLandsOn('/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
  });

  it('pays inside the merchant frame and continues in the whole window', async () => {
    const link = await createCheckout(service, shop, { ...site.urls(), url_target: '_top' });
    await page.goto(shopPage(link.url));
    const frame = page.frameLocator('#checkout');
    await payWith(frame, cards.approved);
    await frame.getByRole('link', { name: 'Continue' }).click();
    await topLandsOn('/success');
  });
});
