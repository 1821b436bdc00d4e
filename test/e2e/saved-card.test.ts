import { cards, payWith, screenshot } from '../support/browser';
import { createCheckout } from '../support/merchant-site';
import { statusOf, storedPayment } from '../support/payments';
import { browserForFile } from '../support/suites';

/**
 * A returning customer pays with the card saved on an earlier payment (req_token → card_token),
 * in a real browser: the saved card is offered masked, chosen, and paid without typing a number
 * (protocol.md §6: a chosen saved card takes priority over the form).
 */
const { service, site, page, landOn, merchants: [shop] } = browserForFile({ merchants: [{ name: 'Gift Shop' }] });

it('pays a second session with the saved card: chosen from the list, no card number typed', async () => {
  // First visit: the customer pays with 01/38 and the merchant asked to keep the card.
  const first = await createCheckout(service, shop, { ...site.urls(), req_token: true });
  await page.goto(first.url);
  await payWith(page, cards.approved);
  await landOn('/success');
  const token = (await statusOf(service, shop, first.paymentId)).card_token;
  expect(token).toMatch(/^[A-Za-z0-9]{64}$/);

  // Second visit: the merchant offers the saved card.
  const second = await createCheckout(service, shop, { ...site.urls(), card_token: [token] });
  await page.goto(second.url);
  const saved = page.getByRole('radio', { name: 'VISA ending in 1111, expires 01/38' });
  const newCard = page.getByRole('radio', { name: 'Use another card' });

  // The card form is there for a new card, and hidden again when the saved card is chosen.
  await newCard.check();
  await page.locator('#card_number').waitFor({ state: 'visible' });
  await saved.check();
  await page.locator('#card-fields').waitFor({ state: 'hidden' });
  expect(await saved.isChecked()).toBe(true);
  expect(await page.locator('#card_number').inputValue()).toBe('');
  await screenshot(page, 'saved-card');

  const posted = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === new URL(second.url).pathname);
  await page.locator('#pay-button').click();
  const form = new URLSearchParams((await posted).postData() ?? '');
  expect(form.get('saved_card')).toBe(token);
  expect(form.get('card_number')).toBe('');
  await landOn('/success');

  expect(await page.locator('h1').textContent()).toBe('Thank you for your order');
  await expect(statusOf(service, shop, second.paymentId)).resolves.toMatchObject({ status: 'settled' });
  expect((await storedPayment(service, second.paymentId)).card).toMatchObject({ mask: '411111****1111', expMonth: 1, expYear: 2038 });
});
