import type { Browser, Page } from 'playwright-core';
import { ManualClock } from '../../lambdas/ports/clock';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { DISPUTE_COLUMNS } from '../../lambdas/protocol/admin/disputes';
import { seedOperator, type OperatorCredentials } from '../support/admin';
import { launchBrowser, seriousA11yViolations } from '../support/browser';
import { portalHeading, portalTabs } from '../support/portal';
import { openSession, submitPage } from '../support/payments';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { startTestService, type TestService } from '../support/service';
import { startAll } from '../support/lifecycle';

/**
 * The portal's disputes view in a real browser: a month's chargebacks with their reason codes,
 * dates and amounts, filtered and exported as CSV; each merchant's chargeback rate of the month
 * and the one before, those at or over the threshold marked and named in an alert; and the payment
 * page's "Charged back" row.
 */
const T0 = new Date('2030-09-10T09:00:00.000Z');
const clock = new ManualClock(T0);

let browser: Browser;
let service: TestService;
let operator: OperatorCredentials;
let risky: MerchantCredentials;
let calm: MerchantCredentials;
const charged: string[] = [];

const pay = async (shop: MerchantCredentials, amount: string): Promise<string> => {
  const s = await openSession(service, shop, { order: { amount, currency: 'EUR' } });
  expect((await submitPage(service, s, { card: '01/38' })).status).toBeLessThan(400);
  return s.paymentId;
};

beforeAll(async () => {
  // A month counts from its second settled payment, and alarms at 25 %.
  [browser, service] = await startAll([launchBrowser(), startTestService({ clock, env: { CHARGEBACK_RATE_MIN_SETTLED: '2', CHARGEBACK_RATE_ALARM_PERCENT: '25' } })]);
  operator = await seedOperator(service, 'dora', 'dora-long-password', 'viewer');
  [risky, calm] = await Promise.all([service.createMerchant({ name: 'Risky Shop' }), service.createMerchant({ name: 'Calm Shop' })]);
  // Risky: 3 settled, 2 charged back (66.67 %); Calm: 4 settled, 1 charged back (25 %, at the threshold).
  const riskyPaid = [await pay(risky, '10.00'), await pay(risky, '20.00'), await pay(risky, '30.00')];
  const calmPaid = [await pay(calm, '40.00'), await pay(calm, '40.00'), await pay(calm, '40.00'), await pay(calm, '40.00')];
  await service.deps.sandbox.raiseChargeback(riskyPaid[0]!, 400, '10.4');
  await service.deps.sandbox.raiseChargeback(riskyPaid[1]!, undefined, '4837');
  await service.deps.sandbox.raiseChargeback(calmPaid[0]!, 1000, '13.1');
  charged.push(riskyPaid[0]!, riskyPaid[1]!, calmPaid[0]!);
  await reconcileDue(service.deps);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const tabs = portalTabs(() => browser, () => service.baseUrl);
const signedIn = (audited = false) => tabs.signedIn(operator, audited);
afterEach(() => tabs.closeAll());
const heading = portalHeading;
const rowsOf = (page: Page, caption: string) => page.locator('table', { has: page.locator('caption', { hasText: caption }) }).locator('tbody tr');

it('lists the month\'s chargebacks and rates each merchant, marking those at or over the threshold', async () => {
  const page = await signedIn();
  await page.getByRole('link', { name: 'Disputes' }).click();
  await heading(page, 'Disputes').waitFor();
  await page.locator('#result-count').filter({ hasText: '3 chargebacks in 2030-09.' }).waitFor();
  await page.getByRole('alert').filter({ hasText: '2 merchants are at or over the chargeback rate threshold of 25 % in 2030-09: ' }).waitFor();
  const alert = (await page.getByRole('alert').textContent()) ?? '';
  expect(alert).toContain('Risky Shop');
  expect(alert).toContain('Calm Shop');

  const rates = rowsOf(page, 'Chargeback rates, 2030-09');
  const risk = rates.filter({ hasText: 'Risky Shop' });
  expect(await risk.locator('td').allInnerTexts()).toEqual(['Risky Shop', '3', '2', '66.67 % over threshold', '60.00 EUR', '24.00 EUR', '40.00 %']);
  expect(await risk.getAttribute('data-over')).toBe('true');
  expect(await rates.filter({ hasText: 'Calm Shop' }).locator('td').allInnerTexts()).toEqual(['Calm Shop', '4', '1', '25.00 % over threshold', '160.00 EUR', '10.00 EUR', '6.25 %']);
  // The month before had nothing.
  await rowsOf(page, 'Chargeback rates, 2030-08').filter({ hasText: 'Nothing to show.' }).waitFor();

  const list = rowsOf(page, 'Chargebacks, 2030-09, newest first');
  expect(await list.count()).toBe(3);
  const first = list.filter({ hasText: charged[1]! });
  expect(await first.locator('td').allInnerTexts()).toEqual(['2030-09-10', '2030-09-10', expect.stringMatching(/^2030-09-10 09:00:00 UTC$/), charged[1], 'Risky Shop', '20.00 EUR', '4837', 'recorded']);

  // A payment's page from the list: its "Charged back" row.
  await first.getByRole('link', { name: charged[1]! }).click();
  await page.locator('dl.facts').waitFor();
  expect(await page.locator('dl.facts dt', { hasText: 'Charged back' }).locator('xpath=following-sibling::dd[1]').innerText()).toBe('20.00');
  expect(await page.locator('dl.facts dt', { hasText: 'Status' }).locator('xpath=following-sibling::dd[1]').innerText()).toBe('Charged back (chargeback)');
});

it('filters by merchant, reason code and month, and exports what it shows as CSV', async () => {
  const page = await signedIn();
  await page.goto(`${service.baseUrl}/admin#/disputes`);
  await heading(page, 'Disputes').waitFor();
  await page.getByLabel('Reason code').fill('10.4');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('#result-count').filter({ hasText: '1 chargeback in 2030-09.' }).waitFor();
  expect(page.url()).toContain('#/disputes?reason=10.4');
  expect(await rowsOf(page, 'Chargebacks, 2030-09').locator('td:nth-child(7)').allInnerTexts()).toEqual(['10.4']);

  await page.getByLabel('Reason code').fill('');
  await page.getByLabel('Merchant', { exact: false }).fill('calm');
  await page.getByRole('button', { name: 'Show' }).click();
  await rowsOf(page, 'Chargebacks, 2030-09').filter({ hasText: charged[2]! }).waitFor();
  await page.locator('#result-count').filter({ hasText: '1 chargeback in 2030-09.' }).waitFor();
  // The rates follow the merchant filter.
  expect(await rowsOf(page, 'Chargeback rates, 2030-09').locator('td:first-child').allInnerTexts()).toEqual(['Calm Shop']);

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  expect(download.suggestedFilename()).toBe('chargebacks-2030-09.csv');
  await page.getByRole('status').filter({ hasText: 'Exported 1 chargeback to chargebacks-2030-09.csv.' }).waitFor();
  const chunks: Buffer[] = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
  const lines = Buffer.concat(chunks).toString('utf8').replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
  expect(lines[0]).toBe(DISPUTE_COLUMNS.join(','));
  expect(lines.slice(1)).toEqual([`2030-09-10,2030-09-10,${T0.toISOString()},${charged[2]}.cb1,${charged[2]},${calm.merchant_key},Calm Shop,10.00,EUR,13.1,recorded,`]);

  // Another month: nothing charged back then; a month the form cannot send is refused with a message.
  await page.goto(`${service.baseUrl}/admin#/disputes?month=2030-08`);
  await page.locator('#result-count').filter({ hasText: 'No chargebacks in 2030-08 match.' }).waitFor();
  expect(await page.getByRole('button', { name: 'Download CSV' }).count()).toBe(0);
  await page.goto(`${service.baseUrl}/admin#/disputes?month=2030-13`);
  await page.getByRole('status').filter({ hasText: 'YYYY-MM' }).waitFor();
});

it('has no serious accessibility violations (axe-core; its context bypasses the CSP to inject axe, as the portal\'s other audits do)', async () => {
  const page = await signedIn(true);
  await page.goto(`${service.baseUrl}/admin#/disputes`);
  await page.locator('#result-count').waitFor();
  expect(await seriousA11yViolations(page)).toEqual([]);
});
