import type { Browser, Page } from 'playwright-core';
import { seedOperator, type OperatorCredentials } from '../support/admin';
import { launchBrowser, seriousA11yViolations } from '../support/browser';
import { portalHeading, portalTabs } from '../support/portal';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { startTestService, type TestService } from '../support/service';
import { startAll } from '../support/lifecycle';

/**
 * The portal's Accounts view in a real browser: an admin adds a merchant's own acquirer account
 * (the password typed once, stored in the secret store, never shown), rotates its password, links a
 * merchant to it in the merchant's settings, and finds both in the list and the audit log; a viewer
 * sees the accounts without the forms.
 */
let browser: Browser;
let service: TestService;
let admin: OperatorCredentials;
let viewer: OperatorCredentials;
let shop: MerchantCredentials;

beforeAll(async () => {
  [browser, service] = await startAll([launchBrowser(), startTestService()]);
  admin = await seedOperator(service, 'ada', 'ada-long-password', 'admin');
  viewer = await seedOperator(service, 'vic', 'vic-long-password', 'viewer');
  shop = await service.createMerchant({ name: 'Linked Shop' });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await service?.close();
});

const tabs = portalTabs(() => browser, () => service.baseUrl);
const signedIn = (who: OperatorCredentials, audited = false) => tabs.signedIn(who, audited);
afterEach(() => tabs.closeAll());
const heading = portalHeading;
const accountRow = (page: Page, id: string) => page.locator('table tbody tr', { has: page.getByRole('cell', { name: id, exact: true }) });

it('an admin adds an account, rotates its password and links a merchant; the list and the audit log show it, never the password', async () => {
  const page = await signedIn(admin);
  await page.getByRole('link', { name: 'Accounts' }).click();
  await heading(page, 'Acquirer accounts').waitFor();
  const form = page.locator('section', { has: page.getByRole('heading', { name: 'New account' }) });
  await form.getByLabel('Account id').fill('eu-retail-1');
  await form.getByLabel('Gateway URL').fill('https://gateway.example/post');
  await form.getByLabel('Client key').fill('5b6492f0-key');
  await form.getByLabel('Password').fill('first-secret-password');
  await form.getByLabel('Currencies').fill('eur, usd');
  await form.getByLabel('Descriptor').fill('RETAIL EU');
  await form.getByLabel('Google Pay gateway id').fill('accountgateway');
  await form.getByLabel('Google Pay gateway merchant id').fill('RETAIL-EU-1');
  await form.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('status').filter({ hasText: 'Account eu-retail-1 created.' }).waitFor();
  // The list is read again after the answer: its row comes with it.
  await accountRow(page, 'eu-retail-1').waitFor();
  expect(await accountRow(page, 'eu-retail-1').locator('td').allInnerTexts()).toEqual([
    'eu-retail-1', 'https://gateway.example/post', '5b6492f0-key', 'EUR, USD', 'RETAIL EU', 'accountgateway / RETAIL-EU-1', '—', expect.stringMatching(/ UTC$/), expect.stringMatching(/ UTC$/),
  ]);
  expect(await service.deps.accounts.find('eu-retail-1')).toMatchObject({ googlePayGateway: 'accountgateway', googlePayGatewayMerchantId: 'RETAIL-EU-1' });
  expect(await page.content()).not.toContain('first-secret-password');
  expect(await service.deps.accountSecrets.passwordOf('eu-retail-1', true)).toBe('first-secret-password');

  // A refused field is said on the status line, nothing is created.
  await form.getByLabel('Account id').fill('eu-retail-1');
  await form.getByLabel('Gateway URL').fill('https://gateway.example/post');
  await form.getByLabel('Client key').fill('x');
  await form.getByLabel('Password').fill('another-password');
  await form.getByLabel('Currencies').fill('EUR');
  await form.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('status').filter({ hasText: 'Acquirer account eu-retail-1 already exists.' }).waitFor();

  // Rotation: the change form's new password.
  await page.getByText('Change eu-retail-1').click();
  const change = page.locator('details', { hasText: 'Change eu-retail-1' });
  await change.getByLabel('New password').fill('second-secret-password');
  await change.getByRole('button', { name: 'Save account' }).click();
  await page.getByRole('status').filter({ hasText: 'Account eu-retail-1 saved; its password was rotated.' }).waitFor();
  expect(await service.deps.accountSecrets.passwordOf('eu-retail-1', true)).toBe('second-secret-password');

  // Google Pay's parameters: a wrong gateway id is refused on its field; emptying the merchant id clears it.
  await page.getByText('Change eu-retail-1').click();
  expect(await change.getByLabel('Google Pay gateway id').inputValue()).toBe('accountgateway');
  await change.getByLabel('Google Pay gateway id').fill('Account Gateway');
  await change.getByRole('button', { name: 'Save account' }).click();
  await page.getByRole('status').filter({ hasText: "google_pay_gateway: Give the gateway's id at Google Pay" }).waitFor();
  await change.getByLabel('Google Pay gateway id').fill('accountgateway');
  await change.getByLabel('Google Pay gateway merchant id').fill('');
  await change.getByRole('button', { name: 'Save account' }).click();
  await page.getByRole('status').filter({ hasText: 'Account eu-retail-1 saved.' }).waitFor();
  await accountRow(page, 'eu-retail-1').getByRole('cell', { name: 'accountgateway / —' }).waitFor();
  expect(await service.deps.accounts.find('eu-retail-1')).not.toHaveProperty('googlePayGatewayMerchantId');

  // The merchant's settings link it; the list names the merchant.
  await page.goto(`${service.baseUrl}/admin#/merchants/${shop.merchant_key}`);
  await heading(page, 'Merchant Linked Shop').waitFor();
  await page.getByLabel('Acquirer account').fill('eu-retail-1');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
  expect(await page.getByLabel('Acquirer account').inputValue()).toBe('eu-retail-1');
  await page.getByLabel('Acquirer account').fill('no-such-account');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByRole('status').filter({ hasText: 'acquirer account no-such-account does not exist' }).waitFor();
  await page.goto(`${service.baseUrl}/admin#/accounts`);
  await accountRow(page, 'eu-retail-1').getByRole('link', { name: shop.merchant_key }).waitFor();

  // The audit log: created and rotated, the password only said to be set.
  await page.goto(`${service.baseUrl}/admin#/audit?target=account%3Aeu-retail-1`);
  await heading(page, 'Audit log').waitFor();
  const rows = page.locator('table tbody tr');
  await rows.first().waitFor();
  expect(await rows.locator('td:nth-child(4)').allInnerTexts()).toEqual(['account.update', 'account.rotate-password', 'account.create']);
  expect(await page.content()).not.toMatch(/(first|second)-secret-password/);
});

it('a viewer sees the accounts without the forms', async () => {
  const page = await signedIn(viewer);
  await page.goto(`${service.baseUrl}/admin#/accounts`);
  await heading(page, 'Acquirer accounts').waitFor();
  await page.getByText('Only an admin can add or change accounts.').waitFor();
  expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
  expect(await page.locator('details').count()).toBe(0);
});

it('has no serious accessibility violations (axe-core; its context bypasses the CSP to inject axe)', async () => {
  const page = await signedIn(admin, true);
  await page.goto(`${service.baseUrl}/admin#/accounts`);
  await heading(page, 'Acquirer accounts').waitFor();
  await page.locator('table').first().waitFor();
  expect(await seriousA11yViolations(page)).toEqual([]);
});
