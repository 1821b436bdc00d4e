import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { cards, payWith, screenshot } from '../support/browser';
import { startCallbackReceiver, verifiesWith, type CallbackReceiver } from '../support/callback-receiver';
import { createCheckout } from '../support/merchant-site';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { statusOf } from '../support/payments';
import { browserForFile } from '../support/suites';

/**
 * What widely used shop modules send, paid on the page in a real browser: a session without a
 * customer (the page asks for the e-mail; the cardholder becomes the customer's name), and orders
 * written as shops write them (`INV/2026/00001-12`, descriptions with `#`, URLs and HTML-looking
 * text) — found again by order_id and shown as text, never as markup.
 */
const { service, site, page, landOn } = browserForFile();
let shop: MerchantCredentials;
let receiver: CallbackReceiver;
beforeAll(async () => {
  receiver = await startCallbackReceiver();
  shop = await service.createMerchant({ name: 'Module Shop', settings: { returnParams: true, notificationUrl: receiver.url } });
});
afterAll(() => receiver?.close());

const landOnSuccess = () => landOn('/success');

it.each([
  ['no customer at all', undefined],
  ['"customer": null', null],
  ['"customer": {}', {}],
])('a session with %s is paid on the page: it asks for the e-mail, the cardholder becomes the customer', async (_what, customer) => {
  const link = await createCheckout(service, shop, { ...site.urls(), customer, billing_address: { country: 'DE' } });
  await page.goto(link.url);
  expect(await page.getByLabel('E-mail').count()).toBe(1);
  await payWith(page, { ...cards.approved, holder: 'Maria Schmidt' }, { email: 'maria@example.com' });
  await landOnSuccess();
  const status = await statusOf(service, shop, link.paymentId);
  expect(status).toMatchObject({ status: 'settled', customer: { name: 'Maria Schmidt', email: 'maria@example.com' } });
});

it('a session with only an e-mail does not ask for it again', async () => {
  const link = await createCheckout(service, shop, { ...site.urls(), customer: { email: 'only@example.com' }, billing_address: { country: 'DE' } });
  await page.goto(link.url);
  expect(await page.getByLabel('E-mail').count()).toBe(0);
  await payWith(page, { ...cards.approved, holder: 'Ana Lima' });
  await landOnSuccess();
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ customer: { name: 'Ana Lima', email: 'only@example.com' } });
});

it('an order as a shop writes it: shown as text on the page, found by order_id, echoed exactly to the shop', async () => {
  const number = `INV/2026/${Date.now() % 100000}-12#A`;
  const description = 'Payment Order # S00042-1 in the store http://localhost:8069/ <script>alert(1)</script> & "quotes" \'x\' <img src=x onerror=alert(2)>';
  const link = await createCheckout(service, shop, { ...site.urls(), order: { number, amount: '12.00', currency: 'EUR', description } });
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(link.url);
  // Shown as text: the paragraph reads it literally, and no element came out of it.
  expect(await page.locator('header p.muted').textContent()).toContain(description);
  expect(await page.evaluate(() => [...document.querySelectorAll('script')].some((s) => s.textContent?.includes('alert(1)')))).toBe(false);
  expect(await page.locator('header p.muted img').count()).toBe(0);
  await screenshot(page, 'shop-order-description');
  await payWith(page, cards.approved);
  await landOnSuccess();
  expect(dialogs).toEqual([]);
  // The return parameters carry the order number exactly (URL-encoded on the way).
  expect(new URL(page.url()).searchParams.get('order_id')).toBe(number);

  const byOrder = await service.signedPost<{ payment_id: string; order: { number: string; description: string } }>(
    '/api/v1/payment/status',
    { merchant_key: shop.merchant_key, order_id: number },
    shop.password,
  );
  expect(byOrder.status).toBe(200);
  expect(byOrder.json).toMatchObject({ payment_id: link.paymentId, order: { number, description } });

  await runCallbackJob(service.deps);
  await receiver.waitFor(1);
  const callback = receiver.received.find((c) => c.fields.id === link.paymentId);
  expect(callback!.fields).toMatchObject({ order_number: number, order_description: description, type: 'sale', status: 'success' });
  expect(verifiesWith(callback!, shop.password)).toBe(true);
});
