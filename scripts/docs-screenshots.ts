import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { ManualClock } from '../lambdas/ports/clock';
import { seedOperator } from '../test/support/admin';
import { launchBrowser } from '../test/support/browser';
import { openSession } from '../test/support/payments';
import { startTestService } from '../test/support/service';
import { PAGE_SHOT_LANGUAGES, SHOT_MERCHANT, SHOT_ORDER, expectedShots, type ShotText } from './docs-screenshots-plan';

/**
 * Takes the screenshots of docs/screenshots/ (`npm run docs:screenshots`): the checkout page in
 * English, Spanish and Arabic on a desktop window, and the portal's payments list on a 390 px phone,
 * against a throwaway local service in Chromium. It writes manifest.json with what each page showed;
 * test/unit/docs-screenshots.test.ts checks that manifest against the page's current texts.
 */
const OUT = resolve(__dirname, '../docs/screenshots');

async function readShot(page: Page, file: string, selectors: readonly string[]): Promise<ShotText> {
  const [lang, dir] = await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir || 'ltr']);
  const texts: string[] = [];
  for (const s of selectors) texts.push(...(await page.locator(s).allTextContents()).map((x) => x.trim()));
  await page.screenshot({ path: join(OUT, file), fullPage: true });
  return { file, lang: lang ?? '', dir: dir ?? '', texts };
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const clock = new ManualClock(new Date('2030-03-14T10:30:00.000Z'));
  const [service, browser] = await Promise.all([startTestService({ clock }), launchBrowser()]);
  try {
    const shop = await service.createMerchant({ name: SHOT_MERCHANT, settings: { branding: { primaryColor: '#5b2a86' } } });
    const shots: ShotText[] = [];
    for (const lang of PAGE_SHOT_LANGUAGES) {
      const session = await openSession(service, shop, { order: { number: `DOC-${lang.toUpperCase()}-1001`, ...SHOT_ORDER }, extra: { language: lang } });
      const context = await browser.newContext({ viewport: { width: 1000, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
      const page = await context.newPage();
      await page.goto(session.redirectUrl);
      shots.push(await readShot(page, `checkout-${lang}.png`, ['h1', '#pay-button', '#card-fields legend']));
      await context.close();
    }
    // A few payments for the list, then the portal on a phone.
    for (const [i, amount] of ['19.90', '240.00', '7.50'].entries()) {
      clock.set(new Date(Date.parse('2030-03-14T09:00:00.000Z') + i * 600_000));
      await openSession(service, shop, { order: { number: `DOC-${2001 + i}`, amount, currency: 'EUR', description: 'Tea sampler' } });
    }
    clock.set(new Date('2030-03-14T10:30:00.000Z'));
    const operator = await seedOperator(service, 'docs', 'docs-screenshot-password');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-US', timezoneId: 'UTC' });
    const page = await context.newPage();
    await page.goto(`${service.baseUrl}/admin`);
    await page.getByLabel('User name').fill(operator.username);
    await page.getByLabel('Password').fill(operator.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#result-count').waitFor();
    shots.push(await readShot(page, 'portal-payments-phone.png', ['h1', 'thead th']));
    await context.close();
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
