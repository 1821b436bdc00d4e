import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type FrameLocator, type Page, type Response } from 'playwright-core';
import { launchOptions, sharedBrowserEndpoint } from './shared-browser';

/** Where the e2e tests keep full-page screenshots (gitignored; CI keeps them as artifacts). */
export const SCREENSHOT_DIR = resolve(__dirname, '../e2e/__screenshots__');

/**
 * Chromium, headless, without background traffic: CHROMIUM_PATH, else a system Chromium, else the
 * one shipped in an npm package (test/support/chromium.ts; CHECKOUT_TEST_BROWSER=bundled forces it).
 * Under Jest it is the run's one browser (shared-browser.ts), connected to: close() then closes this
 * suite's contexts and disconnects, and the browser stays for the next suite. Elsewhere (a script)
 * it is launched for the caller.
 */
export async function launchBrowser(): Promise<Browser> {
  const shared = await sharedBrowserEndpoint();
  return shared ? chromium.connect(shared) : chromium.launch(launchOptions());
}

/**
 * What every page of ours answers with: a Content-Security-Policy whose script and style nonce is
 * the one on the page's own `<script>` and `<style>`, nothing else allowed by default, no framing,
 * no caching. Resolves with the policy and its nonce for the page's own checks.
 */
export async function expectStrictPage(answer: Response | null): Promise<{ csp: string; nonce: string }> {
  const csp = answer?.headers()['content-security-policy'] ?? '';
  const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
  expect(nonce).toBeDefined();
  expect(csp).toContain(`style-src 'nonce-${nonce}'`);
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(answer?.headers()['x-frame-options']).toBe('DENY');
  expect(answer?.headers()['cache-control']).toBe('no-store');
  const html = (await answer?.text()) ?? '';
  expect(html).toContain(`<script nonce="${nonce}">`);
  expect(html).toContain(`<style nonce="${nonce}">`);
  return { csp, nonce: nonce as string };
}

export const newPage = async (browser: Browser, options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> => {
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'Europe/Berlin', ...options });
  const page = await context.newPage();
  return { context, page };
};

/** A full-page screenshot of the current page, named for what it shows. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

export interface TestCard {
  readonly number: string;
  readonly expiry: string;
  readonly cvv: string;
  readonly holder: string;
}

/** The sandbox's test cards (docs/sandbox.md). */
export const cards = {
  approved: { number: '4111 1111 1111 1111', expiry: '01/38', cvv: '123', holder: 'John Doe' },
  declined: { number: '4111 1111 1111 1111', expiry: '02/38', cvv: '123', holder: 'John Doe' },
  threeDsPasses: { number: '4111 1111 1111 1111', expiry: '05/38', cvv: '123', holder: 'John Doe' },
  threeDsFails: { number: '4111 1111 1111 1111', expiry: '06/38', cvv: '123', holder: 'John Doe' },
  noAnswer: { number: '4111 1111 1111 1111', expiry: '08/38', cvv: '123', holder: 'John Doe' },
  redirect: { number: '4111 1111 1111 1111', expiry: '12/38', cvv: '123', holder: 'John Doe' },
  luhnFails: { number: '1111 2222 3333 4444', expiry: '01/38', cvv: '123', holder: 'John Doe' },
} as const satisfies Record<string, TestCard>;

/** Fills the card form as a customer would (the page formats number and expiry as they type). */
export async function fillCard(where: Page | FrameLocator, card: TestCard, extra: { email?: string; country?: string } = {}): Promise<void> {
  await where.locator('#card_number').fill(card.number);
  await where.locator('#card_expiry').fill(card.expiry);
  await where.locator('#card_cvv').fill(card.cvv);
  await where.locator('#card_holder').fill(card.holder);
  if (extra.email !== undefined) await where.locator('#email').fill(extra.email);
  if (extra.country !== undefined) await where.locator('#country').selectOption(extra.country);
}

/** Fills the form and presses the Pay button. */
export async function payWith(where: Page | FrameLocator, card: TestCard, extra: { email?: string; country?: string } = {}): Promise<void> {
  await fillCard(where, card, extra);
  await where.locator('#pay-button').click();
}

let axeSource: string | undefined;

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly unknown[]; readonly failureSummary?: string }[];
}

/**
 * A context for accessibility audits only. axe-core has to be injected as a script, which the
 * page's strict CSP (script-src 'nonce-…') rightly refuses, so these contexts bypass CSP. No other
 * test uses them: every behaviour test runs under the real policy.
 */
export const auditContext = (browser: Browser, options: BrowserContextOptions = {}): Promise<BrowserContext> =>
  browser.newContext({ locale: 'en-US', ...options, bypassCSP: true });

/** Runs axe-core on the page and returns the serious and critical violations. */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
