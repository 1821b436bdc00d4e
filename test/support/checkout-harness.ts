import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import type { MerchantSettings } from '../../lambdas/ports/merchants';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { auditContext, launchBrowser, newPage } from './browser';
import { startAll } from './lifecycle';
import { createCheckout, startMerchantSite, type MerchantSite } from './merchant-site';
import { startTestService, type TestService, type TestServiceOptions } from './service';

/** What a browser test of the hosted page works with; each field is set once `beforeAll` has run. */
export interface CheckoutHarness {
  readonly browser: Browser;
  readonly service: TestService;
  readonly site: MerchantSite;
  readonly shop: MerchantCredentials;
  /** A page in a fresh context, closed after the test. */
  open(options?: BrowserContextOptions): Promise<Page>;
  /** A page whose context bypasses CSP, only so that axe-core can be injected; closed after the test. */
  audited(options?: BrowserContextOptions): Promise<Page>;
  /** A signed session of `merchant` (the shop by default) returning to the merchant site. */
  checkout(overrides?: Record<string, unknown>, merchant?: MerchantCredentials): ReturnType<typeof createCheckout>;
  /** Waits until the page is back on the merchant site at `path`. */
  landOn(page: Page, path: string): Promise<void>;
}

/**
 * The set-up every browser test of the hosted page shares: a browser, a test service and a merchant
 * site started together (all stopped when one fails), one shop, and the pages a test opens closed
 * after it. Registers its Jest hooks; call it at the top of a test file.
 */
export function checkoutHarness(options: {
  readonly shop: { readonly name: string; readonly settings?: Partial<MerchantSettings> };
  readonly service?: TestServiceOptions;
  /** Session fields of every checkout (a function for values made per checkout); overrides win. */
  readonly session?: Record<string, unknown> | (() => Record<string, unknown>);
}): CheckoutHarness {
  const state = {} as { browser: Browser; service: TestService; site: MerchantSite; shop: MerchantCredentials };
  const contexts: BrowserContext[] = [];
  const keep = (context: BrowserContext) => (contexts.push(context), context);
  const ready = (page: Page) => (page.setDefaultTimeout(10_000), page);

  beforeAll(async () => {
    [state.browser, state.service, state.site] = await startAll([launchBrowser(), startTestService(options.service), startMerchantSite()]);
    state.shop = await state.service.createMerchant(options.shop);
  });
  afterAll(async () => {
    await Promise.all([state.browser?.close(), state.site?.close()]);
    await state.service?.close();
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
  });

  return {
    get browser() {
      return state.browser;
    },
    get service() {
      return state.service;
    },
    get site() {
      return state.site;
    },
    get shop() {
      return state.shop;
    },
    async open(contextOptions = {}) {
      const { context, page } = await newPage(state.browser, contextOptions);
      keep(context);
      return ready(page);
    },
    async audited(contextOptions = {}) {
      return ready(await keep(await auditContext(state.browser, contextOptions)).newPage());
    },
    checkout(overrides = {}, merchant = state.shop) {
      const session = typeof options.session === 'function' ? options.session() : (options.session ?? {});
      return createCheckout(state.service, merchant, { ...state.site.urls(), ...session, ...overrides });
    },
    async landOn(page, path) {
      await page.waitForURL((url) => url.origin === state.site.origin && url.pathname === path);
    },
  };
}
