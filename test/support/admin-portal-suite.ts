import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { ManualClock } from '../../lambdas/ports/clock';
import { updateMerchantSettings, type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { seedOperator, type OperatorCredentials } from './admin';
import { launchBrowser, newPage } from './browser';
import { paidPayment, type PaidPayment } from './payments';
import { startTestService, type TestService } from './service';
import { startAll } from './lifecycle';

/**
 * What the operators' portal's browser files (test/e2e/admin-portal*.test.ts) share: one service,
 * browser and clock per file, the operator olivia (admin) and two merchants, and the steps of the
 * portal every test takes. A file calls `usePortalSuite()` once, at its top, and then reads the
 * bindings below, which hold that file's service and browser once its `beforeAll` has run.
 */
export const T0 = new Date('2030-06-03T09:00:00.000Z');
export const clock = new ManualClock(T0);

export let browser: Browser;
export let service: TestService;
export let operator: OperatorCredentials;
/** Two-stage payments, manual capture: its authorizations wait in the capture queue. */
export let dmsShop: MerchantCredentials;
/** One-stage; the settings test turns DMS on for it. */
export let plainShop: MerchantCredentials;

const contexts: BrowserContext[] = [];

/** Starts the file's browser and service before its tests and stops them after; each test starts at T0, its tabs closed after it. */
export function usePortalSuite(): void {
  beforeAll(async () => {
    [browser, service] = await startAll([launchBrowser(), startTestService({ clock })]);
    operator = await seedOperator(service, 'olivia', 'olivia-long-password');
    [dmsShop, plainShop] = await Promise.all([service.createMerchant({ name: 'Queue Shop' }), service.createMerchant({ name: 'Plain Shop' })]);
    await updateMerchantSettings(service.deps, dmsShop.merchant_key, { dms: true });
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });
  beforeEach(() => clock.set(T0));
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });
}

/** A tab in a context of its own, closed after the test. */
export async function open(options: BrowserContextOptions = {}): Promise<Page> {
  // The portal writes times in the browser's time zone: UTC unless a test picks another.
  const { context, page } = await newPage(browser, { timezoneId: 'UTC', ...options });
  contexts.push(context);
  page.setDefaultTimeout(10_000);
  return page;
}

export const portal = () => `${service.baseUrl}/admin`;
export const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });
export const statusLine = (page: Page) => page.getByRole('status');
/** The table row that shows this order number. */
export const rowOf = (page: Page, orderNumber: string) => page.locator('tbody tr', { has: page.getByRole('cell', { name: orderNumber, exact: true }) });

/** Signs in through the form, with the mouse. */
export async function signIn(page: Page, who: OperatorCredentials = operator): Promise<void> {
  await page.goto(portal());
  await heading(page, 'Sign in').waitFor();
  await page.getByLabel('User name').fill(who.username);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Payments').waitFor();
}

/** Opens a portal page of a signed-in tab (a full load: the token stays in the tab's session storage). */
export async function visit(page: Page, route: string, title: string): Promise<void> {
  await page.goto(`${portal()}${route}`);
  await heading(page, title).waitFor();
}

/** An authorization of the two-stage merchant, waiting in the capture queue. */
export async function authorization(amount = '25.00', card?: string): Promise<PaidPayment> {
  const paid = await paidPayment(service, dmsShop, { order: { amount }, ...(card ? { card } : {}) });
  expect(paid.status.status).toBe('pending');
  return paid;
}

/** Whether the page is wider than the window (a table that does not scroll on its own). */
export const pageOverflows = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
