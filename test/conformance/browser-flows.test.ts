import { signFields } from '../../lambdas/domain/hash';
import { receivingMerchants, verifiesWith } from '../support/callback-receiver';
import { cards, payWith } from '../support/browser';
import { createCheckout, startMerchantSite, statusOf, type CheckoutLink } from '../support/merchant-site';
import { callbacksOf, outcome, outcomeOf, relay } from './conformance';
import { browserForFile } from '../support/suites';

/**
 * The callback sequences of protocol.md §7 once more, with the customer in real Chromium on the
 * hosted page (its script, the sandbox's challenge page, the Close button) and the merchant's
 * receiver and web site on real sockets: what the merchant's server receives, and where the
 * customer lands, for the flows whose steps the browser drives itself.
 */
const merchants = receivingMerchants(() => service, 'Browser Shop', { returnParams: true });
const { service, site, page, landOn } = browserForFile({ alsoClose: [merchants] });

/** The return parameters the browser arrived with, their hash checked (protocol.md §1). */
function signedReturn(link: CheckoutLink, password: string): URLSearchParams {
  const query = new URL(page.url()).searchParams;
  const { number, amount, currency, description } = link.order;
  expect(query.get('payment_id')).toBe(link.paymentId);
  expect(query.get('order_id')).toBe(number);
  expect(query.get('hash')).toBe(signFields([link.paymentId, number, amount, currency, description], password));
  return query;
}

it('3-D Secure approved (05/38, code 123456): 3ds/success/3ds when sent to the challenge, then sale/success/settled', async () => {
  const { shop, receiver } = await merchants.merchant();
  const link = await createCheckout(service, shop, site.urls());
  await page.goto(link.url);
  await payWith(page, cards.threeDsPasses);
  await page.waitForURL('**/sandbox/challenge/**');

  await relay(service);
  expect(callbacksOf(receiver, link.paymentId).map(outcomeOf)).toEqual([outcome('3ds/success/3ds')]);
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: '3ds' });

  await page.locator('#code').fill('123456');
  await page.locator('#confirm').click();
  await landOn('/success');
  signedReturn(link, shop.password);

  await relay(service);
  const received = callbacksOf(receiver, link.paymentId);
  expect(received.map(outcomeOf)).toEqual([outcome('3ds/success/3ds'), outcome('sale/success/settled')]);
  for (const cb of received) {
    expect(verifiesWith(cb, shop.password)).toBe(true);
    expect(cb.fields.customer_ip).toMatch(/^(127\.0\.0\.1|::1)$/);
  }
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
});

it('declined (02/38), then Close: no callback while the customer may try again, then one sale/fail/decline; cancel_url gets the return parameters', async () => {
  const { shop, receiver } = await merchants.merchant();
  const link = await createCheckout(service, shop, site.urls());
  await page.goto(link.url);
  await payWith(page, cards.declined);
  await page.getByRole('alert').waitFor();

  await relay(service);
  expect(callbacksOf(receiver, link.paymentId)).toEqual([]);
  const between = await statusOf(service, shop, link.paymentId);
  expect([between.status, between.reason]).toEqual(['prepare', undefined]);

  await page.getByRole('button', { name: 'Close' }).click();
  await landOn('/cancel');
  const query = signedReturn(link, shop.password);

  await relay(service);
  const received = callbacksOf(receiver, link.paymentId);
  expect(received.map(outcomeOf)).toEqual([outcome('sale/fail/decline', 'Declined by processing.')]);
  expect(query.get('trans_id')).toBe(received[0]!.fields.trans_id);
  expect(verifiesWith(received[0]!, shop.password)).toBe(true);
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'decline', reason: 'Declined by processing.' });
});

it('3-D Secure declined (06/38), then Close: 3ds/success/3ds, then sale/fail/decline with the challenge\'s reason', async () => {
  const { shop, receiver } = await merchants.merchant();
  const link = await createCheckout(service, shop, site.urls());
  await page.goto(link.url);
  await payWith(page, cards.threeDsFails);
  await page.waitForURL('**/sandbox/challenge/**');
  await page.locator('#code').fill('123456');
  await page.locator('#confirm').click();
  await page.getByRole('alert').waitFor();

  await relay(service);
  expect(callbacksOf(receiver, link.paymentId).map(outcomeOf)).toEqual([outcome('3ds/success/3ds')]);
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });

  await page.getByRole('button', { name: 'Close' }).click();
  await landOn('/cancel');
  signedReturn(link, shop.password);
  await relay(service);
  expect(callbacksOf(receiver, link.paymentId).map(outcomeOf)).toEqual([outcome('3ds/success/3ds'), outcome('sale/fail/decline', '3-D Secure authentication failed.')]);
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'decline', reason: '3-D Secure authentication failed.' });
});
