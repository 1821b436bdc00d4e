import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { OperatorCredentials } from './admin';
import { auditContext, newPage } from './browser';

/**
 * Tabs of the operators' portal signed in through its form, each in a context of its own (UTC), closed
 * together after each test (`closeAll` in afterEach). `audited` tabs bypass the CSP so axe-core can be
 * injected (test/support/browser.ts auditContext); every behaviour test uses a plain one.
 */
export function portalTabs(browser: () => Browser, baseUrl: () => string) {
  const contexts: BrowserContext[] = [];
  return {
    async signedIn(who: OperatorCredentials, audited = false): Promise<Page> {
      const context = audited ? await auditContext(browser(), { timezoneId: 'UTC' }) : (await newPage(browser(), { timezoneId: 'UTC' })).context;
      contexts.push(context);
      const page = context.pages()[0] ?? (await context.newPage());
      page.setDefaultTimeout(10_000);
      await page.goto(`${baseUrl()}/admin`);
      await page.getByLabel('User name').fill(who.username);
      await page.getByLabel('Password').fill(who.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await portalHeading(page, 'Payments').waitFor();
      return page;
    },
    closeAll: () => Promise.all(contexts.splice(0).map((c) => c.close())),
  };
}

/** A portal view's heading. */
export const portalHeading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });
