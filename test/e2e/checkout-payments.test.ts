import { signFields } from '../../lambdas/domain/hash';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { cards, fillCard, payWith, screenshot } from '../support/browser';
import { createCheckout, startMerchantSite, statusOf, type CheckoutLink } from '../support/merchant-site';
import { browserForFile } from '../support/suites';

/**
 * A customer pays on the hosted page in a real browser, with the sandbox acquirer's test cards,
 * and lands back on the merchant's site (seed spec: hosted checkout; protocol.md §4, §5).
 */
const { service, site, page, landOn, merchants: [shop, strictShop] } = browserForFile({
  merchants: [
    /** Return parameters on, as most integrations run. */
    { name: 'Gift Shop', settings: { returnParams: true } },
    /** Two declines allowed per link. */
    { name: 'Strict Shop', settings: { returnParams: true, maxDeclines: 2 } },
  ],
});

const checkout = (merchant: MerchantCredentials = shop) => createCheckout(service, merchant, site.urls());

/** The return parameters on the URL the browser landed on, with the signature checked (protocol.md §1, §4). */
function expectSignedReturn(landed: string, link: CheckoutLink, merchant: MerchantCredentials): URLSearchParams {
  const query = new URL(landed).searchParams;
  expect(query.get('payment_id')).toBe(link.paymentId);
  expect(query.get('order_id')).toBe(link.order.number);
  expect(query.get('trans_id')).toMatch(/^[0-9a-f-]{36}$/);
  const { number, amount, currency, description } = link.order;
  expect(query.get('hash')).toBe(signFields([link.paymentId, number, amount, currency, description], merchant.password));
  return query;
}


describe('paying on the hosted page', () => {
  it('pays with 4111 1111 1111 1111 01/38 and lands on success_url with signed return parameters', async () => {
    const link = await checkout();
    await page.goto(link.url);
    expect(await page.locator('h1').textContent()).toBe('Gift Shop');
    await fillCard(page, cards.approved);
    expect(await page.locator('#card_number').inputValue()).toBe('4111 1111 1111 1111');
    expect(await page.locator('#card-brand').textContent()).toBe('Card type: VISA');
    await screenshot(page, 'form-filled');
    await page.locator('#pay-button').click();
    await landOn('/success');

    expectSignedReturn(page.url(), link, shop);
    expect(await page.locator('h1').textContent()).toBe('Thank you for your order');
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('shows a decline (announced as an alert) and then takes another card on the same link', async () => {
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.declined);

    const alert = page.getByRole('alert');
    await alert.waitFor();
    // What the customer can do, not the acquirer's words ("Declined by processing.").
    expect(await alert.textContent()).toContain('Your bank declined the payment. Check the card details and try again, use another card, or contact your bank.');
    expect(await alert.textContent()).not.toContain('processing');
    expect(await alert.textContent()).toContain('You can try 2 more times.');
    expect(await alert.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(new URL(page.url()).pathname).toBe(new URL(link.url).pathname);
    await screenshot(page, 'form-declined');
    // Not final while the customer may try again on the link: the status reads prepare, without a reason.
    const between = await statusOf(service, shop, link.paymentId);
    expect([between.status, between.reason]).toEqual(['prepare', undefined]);

    await payWith(page, cards.approved);
    await landOn('/success');
    expectSignedReturn(page.url(), link, shop);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('passes 3-D Secure with 05/38 and the code 123456 (status 3ds while the challenge is open)', async () => {
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.threeDsPasses);

    await page.waitForURL('**/sandbox/challenge/**');
    expect(await page.locator('h1').textContent()).toBe('3-D Secure verification');
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: '3ds' });
    await screenshot(page, 'challenge-3ds');

    await page.locator('#code').fill('123456');
    await page.locator('#confirm').click();
    await landOn('/success');
    expectSignedReturn(page.url(), link, shop);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('declines 06/38 after the 3-D Secure challenge and lets the customer try again', async () => {
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.threeDsFails);
    await page.waitForURL('**/sandbox/challenge/**');
    await page.locator('#code').fill('123456');
    await page.locator('#confirm').click();

    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Your bank could not confirm it was you. Try again, or use another card.');
    expect(await page.locator('#pay-form').count()).toBe(1);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });

    // Close makes the decline final: to cancel_url with the return parameters, and the status says why.
    await page.getByRole('button', { name: 'Close' }).click();
    await landOn('/cancel');
    expectSignedReturn(page.url(), link, shop);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'decline', reason: '3-D Secure authentication failed.' });
    await page.goto(link.url);
    expect(await page.locator('h1#title').textContent()).toBe('This payment link can no longer be used');
  });

  it('pays 12/38 through the bank redirect (status redirect while the customer is at the bank)', async () => {
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.redirect);

    await page.waitForURL('**/sandbox/challenge/**');
    expect(await page.locator('h1').textContent()).toBe('Sandbox bank');
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'redirect' });
    await screenshot(page, 'challenge-redirect');

    await page.locator('#confirm').click();
    await landOn('/success');
    expectSignedReturn(page.url(), link, shop);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('can be paid with the keyboard alone (Tab, typing and Enter)', async () => {
    const link = await checkout();
    await page.goto(link.url);
    const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
    const tabTo = async (id: string) => {
      for (let i = 0; i < 10 && (await focused()) !== id; i++) await page.keyboard.press('Tab');
      expect(await focused()).toBe(id);
    };

    await tabTo('card_number');
    await page.keyboard.type('4111111111111111');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('card_expiry');
    await page.keyboard.type('0138');
    expect(await page.locator('#card_expiry').inputValue()).toBe('01/38');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('card_cvv');
    await page.keyboard.type('123');
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('card_holder');
    await page.keyboard.type('John Doe');
    await page.keyboard.press('Enter');

    await landOn('/success');
    expectSignedReturn(page.url(), link, shop);
  });

  it('sends the customer to cancel_url, with signed return parameters, after the last allowed decline', async () => {
    const link = await checkout(strictShop);
    await page.goto(link.url);
    await payWith(page, cards.declined);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('You can try once more.');

    await payWith(page, cards.declined);
    await landOn('/cancel');
    expectSignedReturn(page.url(), link, strictShop);
    await expect(statusOf(service, strictShop, link.paymentId)).resolves.toMatchObject({ status: 'decline' });

    await page.goto(link.url);
    expect(await page.locator('h1#title').textContent()).toBe('This payment link can no longer be used');
    expect(await page.locator('form').count()).toBe(0);
    await screenshot(page, 'link-closed');
  });

  it('closes to cancel_url without return parameters when nothing was attempted', async () => {
    const link = await checkout();
    await page.goto(link.url);
    await page.getByRole('button', { name: 'Close' }).click();
    await landOn('/cancel');
    expect([...new URL(page.url()).searchParams.keys()]).toEqual([]);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });
  });

  it('keeps the customer on the processing page when the acquirer does not answer (08/38)', async () => {
    const link = await checkout();
    const before = site.visits.length;
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await page.locator('h1#title[data-state="processing"]').waitFor();
    expect(site.visits.slice(before)).toEqual([]);

    await page.goto(link.url);
    expect(await page.locator('h1#title').textContent()).toBe('Your payment is being processed');
    expect(await page.locator('form').count()).toBe(0);
    await screenshot(page, 'processing');
  });
});

describe('the sandbox test cards of other brands (docs/sandbox.md)', () => {
  it.each([
    ['Mastercard', '5555 5555 5555 4444', '123'],
    ['American Express', '3782 822463 10005', '1234'],
  ])('%s: 02/38 is declined, 05/38 asks for 3-D Secure and pays', async (_brand, number, cvv) => {
    const declined = await checkout();
    await page.goto(declined.url);
    await payWith(page, { number, expiry: '02/38', cvv, holder: 'John Doe' });
    await page.getByRole('alert').waitFor();
    await expect(statusOf(service, shop, declined.paymentId)).resolves.toMatchObject({ status: 'prepare' });

    const challenged = await checkout();
    await page.goto(challenged.url);
    await payWith(page, { number, expiry: '05/38', cvv, holder: 'John Doe' });
    await page.locator('#code').fill('123456');
    await page.locator('#confirm').click();
    await landOn('/success');
    await expect(statusOf(service, shop, challenged.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });
});
