import type { Page } from 'playwright-core';
import { ManualClock } from '../../lambdas/ports/clock';
import { cards, expectStrictPage, fillCard, payWith, screenshot, seriousA11yViolations } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';
import { statusOf } from '../support/merchant-site';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import { validUntilText } from '../../lambdas/checkout-page/link-expiry';

/**
 * The hosted page's rules in a real browser: field rules (protocol.md §6) live and on the server,
 * the fields asked only when the session lacks them, expiry, paid links, small screens, security
 * headers and accessibility.
 */
/** The service's clock: the expiry tests move it instead of waiting. */
const clock = new ManualClock(new Date());
/** Who the footer names: the stage's provider (PROVIDER_*). */
const PROVIDER = { PROVIDER_NAME: 'Example Payments', PROVIDER_TERMS_URL: 'https://payments.example/terms', PROVIDER_PRIVACY_URL: 'https://payments.example/privacy' };
/** Sessions without expiry_url, so an expired link shows its own page. */
const h = checkoutHarness({ shop: { name: 'Gift Shop', settings: { returnParams: true } }, service: { clock, env: PROVIDER }, session: { expiry_url: undefined } });
const { open, checkout, landOn } = h;
const stateTitle = (page: Page) => page.locator('h1#title').textContent();

describe('card number check', () => {
  it('refuses the Luhn-failing 1111 2222 3333 4444 live, before anything is sent', async () => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url());
    });

    await page.locator('#card_number').fill(cards.luhnFails.number);
    await page.keyboard.press('Tab');
    expect(await page.locator('#card_number-error').textContent()).toBe('Invalid card number');
    expect(await page.locator('#card_number').getAttribute('aria-invalid')).toBe('true');

    await fillCard(page, cards.luhnFails);
    await page.locator('#pay-button').click();
    expect(await page.locator('#error-summary').textContent()).toBe('Please correct the highlighted fields.');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('card_number');
    expect(posts).toEqual([]);
    await screenshot(page, 'form-errors-live');

    // Corrected in place, the same form pays.
    await page.locator('#card_number').fill(cards.approved.number);
    await page.locator('#pay-button').click();
    await landOn(page, '/success');
  });

  it('is refused by the server too when JavaScript is off, without echoing the card back', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    await page.goto(link.url);
    await fillCard(page, { ...cards.luhnFails, cvv: '987' });
    const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.locator('#pay-button').click()]);

    expect(response.status()).toBe(400);
    await page.waitForLoadState();
    expect(await page.locator('#card_number-error').textContent()).toBe('Invalid card number');
    expect(await page.locator('#card_number').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#error-summary').textContent()).toBe('Please correct the highlighted fields.');
    const html = await response.text();
    expect(html).not.toMatch(/1111\s?2222\s?3333\s?4444/);
    expect(html).not.toContain('987');
    expect(await page.locator('#card_number').inputValue()).toBe('');
    await screenshot(page, 'form-errors-server');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });
  });

  it('pays without JavaScript: the form posts and the browser follows the redirect to success_url', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.approved);
    await landOn(page, '/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
  });

  it('passes 3-D Secure without JavaScript', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.threeDsPasses);
    await page.locator('#code').fill('123456');
    await page.locator('#confirm').click();
    await landOn(page, '/success');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });
});

describe('customer details', () => {
  it('asks for the e-mail and billing country when the session has neither, and stores them', async () => {
    const page = await open();
    const link = await checkout({ customer: { name: 'John Doe' }, billing_address: undefined });
    await page.goto(link.url);
    expect(await page.locator('#email').count()).toBe(1);
    expect(await page.locator('#country').count()).toBe(1);
    await screenshot(page, 'form-with-contact-fields');

    await fillCard(page, cards.approved);
    await page.locator('#pay-button').click();
    expect(await page.locator('#email-error').textContent()).toBe('Enter a valid e-mail address');
    expect(await page.locator('#country-error').textContent()).toBe('Select your billing country');

    await page.locator('#email').fill('jane@example.com');
    await page.locator('#country').selectOption('DE');
    await page.locator('#pay-button').click();
    await landOn(page, '/success');
    const status = (await statusOf(h.service, h.shop, link.paymentId)) as { status: string; customer?: { email?: string } };
    expect(status).toMatchObject({ status: 'settled', customer: { email: 'jane@example.com' } });
    const stored = await h.service.deps.store.findPayment(link.paymentId);
    expect(stored?.billingAddress?.country).toBe('DE');
  });

  it('does not ask for what the session already gave', async () => {
    const page = await open();
    const link = await checkout({ customer: { name: 'John Doe', email: 'john@example.com' }, billing_address: { country: 'US' } });
    await page.goto(link.url);
    expect(await page.locator('#email').count()).toBe(0);
    expect(await page.locator('#country').count()).toBe(0);
    await screenshot(page, 'form');
  });

  it('asks only for the country when the e-mail was given', async () => {
    const page = await open();
    const link = await checkout({ customer: { name: 'John Doe', email: 'john@example.com' }, billing_address: undefined });
    await page.goto(link.url);
    expect(await page.locator('#email').count()).toBe(0);
    expect(await page.locator('#country').count()).toBe(1);
  });

  it('refuses a missing e-mail on the server when JavaScript is off', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout({ customer: { name: 'John Doe' } });
    await page.goto(link.url);
    await payWith(page, cards.approved);
    await page.locator('#email-error').waitFor();
    expect(await page.locator('#email-error').textContent()).toBe('Enter a valid e-mail address');
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });
  });
});

describe('links that cannot take a payment', () => {
  it('shows the expired page once session_expiry has passed', async () => {
    const page = await open();
    const link = await checkout({ session_expiry: 1 });
    clock.advance(61_000);
    const response = await page.goto(link.url);
    expect(response?.status()).toBe(410);
    expect(await stateTitle(page)).toBe('This payment link has expired');
    expect(await page.locator('form').count()).toBe(0);
    await screenshot(page, 'expired');
  });

  it('sends an expired link to expiry_url', async () => {
    const page = await open();
    const link = await checkout({ session_expiry: 1, expiry_url: h.site.urls().expiry_url });
    clock.advance(61_000);
    await page.goto(link.url);
    await landOn(page, '/expired');
  });

  it('sends a form submitted after expiry to expiry_url, without charging', async () => {
    const page = await open();
    const link = await checkout({ session_expiry: 1, expiry_url: h.site.urls().expiry_url });
    await page.goto(link.url);
    clock.advance(61_000);
    await payWith(page, cards.approved);
    await landOn(page, '/expired');
    const stored = await h.service.deps.store.findPayment(link.paymentId);
    expect(stored?.transactions).toEqual([]);
  });

  it('shows "already paid" and no form on a paid link', async () => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.approved);
    await landOn(page, '/success');

    await page.goto(link.url);
    expect(await stateTitle(page)).toBe('This order is already paid');
    expect(await page.locator('form').count()).toBe(0);
    expect(await page.locator('input').count()).toBe(0);
    await screenshot(page, 'paid');
  });
});

describe('the footer and the link\'s expiry', () => {
  const expiresAt = async (paymentId: string) => new Date((await h.service.deps.store.findPayment(paymentId))!.checkout!.expiresAt);

  it('names the provider with its terms and privacy, and the time the link is valid until, without scripts', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    await page.goto(link.url);
    const footer = page.locator('footer');
    expect(await footer.locator('.provider').textContent()).toBe('Payments by Example Payments · Terms · Privacy');
    expect(await footer.getByRole('link', { name: 'Terms' }).getAttribute('href')).toBe(PROVIDER.PROVIDER_TERMS_URL);
    expect(await footer.getByRole('link', { name: 'Privacy' }).getAttribute('href')).toBe(PROVIDER.PROVIDER_PRIVACY_URL);
    const until = validUntilText(await expiresAt(link.paymentId), clock.now(), 'en');
    expect(await page.locator('#link-expiry').textContent()).toBe(`This payment link is valid until ${until}.`);
    expect(await page.locator('#expiry-warning').textContent()).toBe('');
  });

  it('with scripts, says the time in the customer\'s zone and warns politely 5 minutes before the end, axe-clean', async () => {
    const page = await h.audited({ timezoneId: 'Asia/Tokyo' });
    const link = await checkout({ session_expiry: 6 });
    // A minute gone less a moment: the warning is due 1.5 s after the page opens.
    clock.advance(60_000 - 1_500);
    await page.goto(link.url);
    const warning = page.locator('#expiry-warning');
    expect([await warning.getAttribute('role'), await warning.getAttribute('aria-live')]).toEqual(['status', 'polite']);
    await warning.filter({ hasText: 'This payment link expires in 5 minutes. Please complete your payment before then.' }).waitFor();
    const tokyo = new Intl.DateTimeFormat('en', { hour: 'numeric', minute: '2-digit', timeZone: 'Asia/Tokyo' }).format(await expiresAt(link.paymentId));
    // The time alone, or with the date when the link ends on another day there.
    expect(await page.locator('#link-expiry').textContent()).toMatch(new RegExp(`^This payment link is valid until (.+, )?${tokyo}\\.$`));
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('in Arabic, right to left: the footer, the time and the warning in Arabic', async () => {
    const ar = PAGE_LANGUAGES.ar!;
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout({ language: 'ar', session_expiry: 5 });
    await page.goto(link.url);
    expect(await page.locator('html').getAttribute('dir')).toBe('rtl');
    expect(await page.locator('footer .provider').textContent()).toBe(`${ar.footer.paymentsBy('Example Payments')} · ${ar.footer.terms} · ${ar.footer.privacy}`);
    expect(await page.locator('footer bdi').textContent()).toBe('Example Payments');
    expect(await page.locator('#link-expiry').textContent()).toBe(ar.linkExpiry.validUntil(validUntilText(await expiresAt(link.paymentId), clock.now(), 'ar')));

    // With scripts: five minutes left, so the warning is there at once.
    const scripted = await open();
    await scripted.goto(link.url);
    await scripted.locator('#expiry-warning').filter({ hasText: ar.linkExpiry.endsSoon(5) }).waitFor();
  });
});

describe('small screens', () => {
  const noHorizontalScroll = (page: Page) => page.evaluate(() => (document.scrollingElement?.scrollWidth ?? Infinity) <= 320);

  it('fits 320 px without horizontal scrolling, with every field, errors and a decline shown', async () => {
    const page = await open({ viewport: { width: 320, height: 640 } });
    const link = await checkout({ customer: { name: 'John Doe' }, billing_address: undefined, order: { number: 'narrow-1', amount: '123456.78', currency: 'USD', description: 'A rather long order description that has to wrap on a phone' } });
    await page.goto(link.url);
    expect(await noHorizontalScroll(page)).toBe(true);
    await screenshot(page, 'form-320px');

    await page.locator('#pay-button').click();
    expect(await noHorizontalScroll(page)).toBe(true);
    await screenshot(page, 'form-errors-320px');

    await payWith(page, cards.declined, { email: 'john@example.com', country: 'GB' });
    await page.getByRole('alert').filter({ hasText: 'declined' }).waitFor();
    expect(await noHorizontalScroll(page)).toBe(true);
    await screenshot(page, 'form-declined-320px');
  });
});

describe('security headers', () => {
  it('sends a CSP whose nonce is the one on the page\'s style and script, and forbids framing', async () => {
    const page = await open();
    const link = await checkout();
    const { csp, nonce } = await expectStrictPage(await page.goto(link.url));
    expect(csp).toContain(`form-action 'self' ${h.site.origin}`);
    // The page script ran under that policy: it collected the browser data.
    expect(await page.locator('#browser_screen_width').inputValue()).toMatch(/^\d+$/);

    const second = await page.request.get(link.url);
    expect(second.headers()['content-security-policy']).not.toContain(nonce);
  });
});

describe('accessibility (axe-core: no serious or critical violations)', () => {
  // Audit pages run in a context that bypasses CSP, only so that axe-core can be injected.
  let page: Page;
  beforeEach(async () => {
    page = await h.audited();
  });
  const expectAccessible = async () => expect(await seriousA11yViolations(page)).toEqual([]);
  /** A new checkout of the shop, open on the page. */
  const opened = async (overrides?: Record<string, unknown>) => {
    const link = await checkout(overrides);
    await page.goto(link.url);
    return link;
  };

  it('the form page, with every field', async () => {
    await opened({ customer: { name: 'John Doe' }, billing_address: undefined });
    await expectAccessible();
  });

  it('the form with errors, found live and by the server', async () => {
    const link = await opened({ customer: { name: 'John Doe' }, billing_address: undefined });
    await page.locator('#card_number').fill(cards.luhnFails.number);
    await page.locator('#pay-button').click();
    await expectAccessible();

    // form.submit() skips the page script: the server's own error page.
    await Promise.all([page.waitForURL(link.url), page.evaluate(() => (document.getElementById('pay-form') as HTMLFormElement).submit())]);
    await page.locator('#card_number-error').filter({ hasText: 'Invalid card number' }).waitFor();
    await expectAccessible();
  });

  it('the form after a decline', async () => {
    await opened();
    await payWith(page, cards.declined);
    await page.getByRole('alert').filter({ hasText: 'declined' }).waitFor();
    await expectAccessible();
  });

  it('the paid page', async () => {
    const link = await opened();
    await payWith(page, cards.approved);
    await landOn(page, '/success');
    await page.goto(link.url);
    expect(await stateTitle(page)).toBe('This order is already paid');
    await expectAccessible();
  });

  it('the expired page', async () => {
    const link = await checkout({ session_expiry: 1 });
    clock.advance(61_000);
    await page.goto(link.url);
    expect(await stateTitle(page)).toBe('This payment link has expired');
    await expectAccessible();
  });

  it('the 3-D Secure page', async () => {
    await opened();
    await payWith(page, cards.threeDsPasses);
    await page.waitForURL('**/sandbox/challenge/**');
    await expectAccessible();
  });
});
