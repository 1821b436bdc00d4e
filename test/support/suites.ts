import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import type { MerchantSettings } from '../../lambdas/ports/merchants';
import type { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { startAll, type Closable } from './lifecycle';
import { startMerchantSite, type MerchantSite } from './merchant-site';
import { paidPayment, type PaidPayment, type PaidPaymentOptions } from './payments';
import { startTestService, type TestService, type TestServiceOptions } from './service';

/** A merchant a suite starts with. */
export interface MerchantInput {
  readonly name?: string;
  readonly settings?: Partial<MerchantSettings>;
}

export interface FileServiceOptions extends TestServiceOptions {
  readonly clock?: ManualClock;
  /** Where the clock stands at the start of every test (set back before each one). */
  readonly clockAt?: Date;
  /** Merchants made once the service runs, in this order. */
  readonly merchants?: readonly MerchantInput[];
  /** What else the file started, stopped before the service after the file (receivers, sites). */
  readonly alsoClose?: readonly Closable[];
}

/**
 * A value a test file names at its top and makes in `beforeAll`: each use reads through to the value
 * once made (a use before that fails, naming it). The suites below hand these out, so a file reads
 * `const { service } = serviceForFile(…)` instead of a `let` and a hook assigning it.
 */
export function madeInBeforeAll<T extends object>(what: string, get: () => T | undefined): T {
  const value = (): T => {
    const made = get();
    if (made === undefined) throw new Error(`${what} is made in beforeAll and was used before it`);
    return made;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      const made = value();
      const property = Reflect.get(made, key);
      // Methods run on the value itself (a class's own state is not the stand-in's).
      return typeof property === 'function' ? property.bind(made) : property;
    },
    has: (_, key) => Reflect.has(value(), key),
    ownKeys: () => Reflect.ownKeys(value()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(value(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(value()),
  });
}

export interface FileService<M extends readonly MerchantInput[]> {
  readonly service: TestService;
  /** The merchants asked for, in their order. */
  readonly merchants: { readonly [K in keyof M]: MerchantCredentials };
}

/**
 * One test service for the whole file (its boot is the costly part of an integration test), its
 * merchants, and its stop after the file. Registers the Jest hooks.
 */
export function serviceForFile<const M extends readonly MerchantInput[] = []>(options: FileServiceOptions & { readonly merchants?: M } = {}): FileService<M> {
  const { clockAt, merchants = [], alsoClose = [], ...serviceOptions } = options;
  let service: TestService | undefined;
  let made: MerchantCredentials[] = [];
  beforeAll(async () => {
    service = await startTestService(serviceOptions);
    made = await Promise.all(merchants.map((m) => (service as TestService).createMerchant(m)));
  });
  afterAll(async () => {
    await Promise.all(alsoClose.map((c) => c.close()));
    await service?.close();
  });
  if (clockAt) {
    if (!options.clock) throw new Error('clockAt needs the clock it sets');
    const clock = options.clock;
    beforeEach(() => clock.set(clockAt));
  }
  return {
    service: madeInBeforeAll('the test service', () => service),
    merchants: merchants.map((m, i) => madeInBeforeAll(`merchant ${m.name ?? i}`, () => made[i])) as unknown as FileService<M>['merchants'],
  };
}

/** A page payment of `merchant` whose status is then `expected` (settled: a one-stage sale; pending: a two-stage authorization). */
export async function paidAs(service: TestService, merchant: MerchantCredentials, expected: 'settled' | 'pending', options: PaidPaymentOptions = {}): Promise<PaidPayment> {
  const paid = await paidPayment(service, merchant, options);
  expect(paid.status.status).toBe(expected);
  return paid;
}

export interface FileBrowserOptions<M extends readonly MerchantInput[]> {
  readonly service?: TestServiceOptions;
  /** Merchants made once everything runs; a function when their settings name the merchant site. */
  readonly merchants?: M | ((site: MerchantSite) => M);
  /** What else the file started, stopped with the browser and the site. */
  readonly alsoClose?: readonly Closable[];
  /** Options of each test's page context; false: the file opens its pages itself. */
  readonly page?: BrowserContextOptions | false;
}

export interface FileBrowser<M extends readonly MerchantInput[]> extends FileService<M> {
  readonly browser: Browser;
  readonly site: MerchantSite;
  /** The current test's page, in a context of its own (closed after the test). */
  readonly page: Page;
  /** Waits until the page is back on the merchant site at `path`. */
  landOn(path: string, page?: Page): Promise<void>;
}

/**
 * What a browser test of the hosted page starts for the whole file: the run's browser, a test
 * service and a merchant site (all stopped when one fails to start, and after the file), the
 * merchants, and a fresh page per test. Registers the Jest hooks.
 */
export function browserForFile<const M extends readonly MerchantInput[] = []>(options: FileBrowserOptions<M> = {}): FileBrowser<M> {
  let browser: Browser | undefined;
  let service: TestService | undefined;
  let site: MerchantSite | undefined;
  let made: MerchantCredentials[] = [];
  let page: Page | undefined;
  beforeAll(async () => {
    // The browser helpers (and playwright-core, a large module) load only in files that drive a browser.
    const { launchBrowser } = await import('./browser');
    [browser, service, site] = await startAll([launchBrowser(), startTestService(options.service), startMerchantSite()]);
    const merchants = typeof options.merchants === 'function' ? options.merchants(site) : (options.merchants ?? []);
    made = await Promise.all(merchants.map((m) => (service as TestService).createMerchant(m)));
  });
  afterAll(async () => {
    await Promise.all([browser?.close(), site?.close(), ...(options.alsoClose ?? []).map((c) => c.close())]);
    await service?.close();
  });
  if (options.page !== false) {
    const contextOptions = options.page ?? {};
    beforeEach(async () => {
      const { newPage } = await import('./browser');
      ({ page } = await newPage(browser as Browser, contextOptions));
      page.setDefaultTimeout(10_000);
    });
    afterEach(async () => {
      await page?.context().close();
      page = undefined;
    });
  }
  const merchantCount = typeof options.merchants === 'function' ? undefined : options.merchants?.length;
  return {
    browser: madeInBeforeAll('the browser', () => browser),
    service: madeInBeforeAll('the test service', () => service),
    site: madeInBeforeAll('the merchant site', () => site),
    page: madeInBeforeAll('the page', () => page),
    // A function of the site gives its merchants in beforeAll; a destructuring names as many as it asks for.
    merchants: Array.from({ length: merchantCount ?? 8 }, (_, i) => madeInBeforeAll(`merchant ${i}`, () => made[i])) as unknown as FileService<M>['merchants'],
    landOn: async (path, on = page) => {
      await (on as Page).waitForURL((url) => url.origin === (site as MerchantSite).origin && url.pathname === path);
    },
  };
}
