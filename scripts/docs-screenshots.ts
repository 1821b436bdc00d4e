import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { ManualClock } from '../lambdas/ports/clock';
import { seedOperator } from '../test/support/admin';
import { launchBrowser } from '../test/support/browser';
import { openSession } from '../test/support/payments';
import { quietServiceLogs } from '../test/support/quiet-logs';
import { startTestService } from '../test/support/service';
import { PAGE_SHOTS, PORTAL_SHOT_SCHEMES, SHOT_MERCHANT, SHOT_ORDER, VIEWPORTS, expectedShots, shotFile, type Device, type Scheme, type ShotText } from './docs-screenshots-plan';

/**
 * Takes the screenshots of docs/screenshots/ (`npm run docs:screenshots`): the checkout page in
 * English, Spanish and Arabic on a desktop window and in English dark, in Arabic and Russian on a
 * 390 px phone in light and dark, and the portal's payments list on a phone in light and dark,
 * against a throwaway local service in Chromium. It writes manifest.json with what each page showed
 * (its language, direction, the scheme its background is in, its texts);
 * test/unit/docs-screenshots.test.ts checks that manifest against the page's current texts.
 */
const OUT = resolve(__dirname, '../docs/screenshots');

/** The scheme a page is drawn in: dark when its body's background is darker than mid-grey (relative luminance). */
const schemeOf = (page: Page): Promise<Scheme> =>
  page.evaluate(() => {
    const rgb = (getComputedStyle(document.body).backgroundColor.match(/[\d.]+/g) ?? ['255', '255', '255']).slice(0, 3).map(Number);
    const [r, g, b] = rgb.map((c) => {
      const v = c / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5 ? 'dark' : 'light';
  });

async function readShot(page: Page, file: string, device: Device, selectors: readonly string[]): Promise<ShotText> {
  const [lang, dir] = await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir || 'ltr']);
  const texts: string[] = [];
  for (const s of selectors) texts.push(...(await page.locator(s).allTextContents()).map((x) => x.trim()));
  await page.screenshot({ path: join(OUT, file), fullPage: true });
  return { file, lang: lang ?? '', dir: dir ?? '', scheme: await schemeOf(page), device, texts };
}

async function main(): Promise<void> {
  quietServiceLogs();
  mkdirSync(OUT, { recursive: true });
  const clock = new ManualClock(new Date('2030-03-14T10:30:00.000Z'));
  const [service, browser] = await Promise.all([startTestService({ clock }), launchBrowser()]);
  try {
    const shop = await service.createMerchant({ name: SHOT_MERCHANT, settings: { branding: { primaryColor: '#5b2a86' } } });
    const shots: ShotText[] = [];
    for (const [i, { lang, device, scheme }] of PAGE_SHOTS.entries()) {
      const session = await openSession(service, shop, { order: { number: `DOC-${lang.toUpperCase()}-${1001 + i}`, ...SHOT_ORDER }, extra: { language: lang } });
      const context = await browser.newContext({ viewport: VIEWPORTS[device], locale: 'en-US', timezoneId: 'UTC', colorScheme: scheme, ...(device === 'phone' ? { isMobile: true, hasTouch: true } : {}) });
      const page = await context.newPage();
      await page.goto(session.redirectUrl);
      shots.push(await readShot(page, shotFile(`checkout-${lang}`, device, scheme), device, ['h1', '#pay-button', '#card-fields legend']));
      await context.close();
    }
    // A few payments for the list, then the portal on a phone.
    for (const [i, amount] of ['19.90', '240.00', '7.50'].entries()) {
      clock.set(new Date(Date.parse('2030-03-14T09:00:00.000Z') + i * 600_000));
      await openSession(service, shop, { order: { number: `DOC-${2001 + i}`, amount, currency: 'EUR', description: 'Tea sampler' } });
    }
    clock.set(new Date('2030-03-14T10:30:00.000Z'));
    const operator = await seedOperator(service, 'docs', 'docs-screenshot-password');
    for (const scheme of PORTAL_SHOT_SCHEMES) {
      const context = await browser.newContext({ viewport: VIEWPORTS.phone, locale: 'en-US', timezoneId: 'UTC', colorScheme: scheme, isMobile: true, hasTouch: true });
      const page = await context.newPage();
      await page.goto(`${service.baseUrl}/admin`);
      await page.getByLabel('User name').fill(operator.username);
      await page.getByLabel('Password').fill(operator.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('#result-count').waitFor();
      shots.push(await readShot(page, shotFile('portal-payments-phone', 'phone', scheme), 'phone', ['h1', 'thead th']));
      await context.close();
    }
    writeFileSync(join(OUT, 'manifest.json'), `${JSON.stringify(shots, null, 2)}\n`);
    const expected = JSON.stringify(expectedShots());
    if (JSON.stringify(shots) !== expected) throw new Error(`the pages did not show what the plan expects:\n${JSON.stringify(shots, null, 2)}`);
    console.log(`wrote ${shots.length} screenshots and manifest.json to docs/screenshots/`);
  } finally {
    await browser.close();
    await service.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
