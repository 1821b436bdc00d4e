import type { Browser, Page } from 'playwright-core';
import { WALLET_SCRIPTS } from '../../lambdas/checkout-page/wallets';
import { timing, type Timing } from './checkout-page';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { createCheckout } from '../support/merchant-site';
import type { TestService } from '../support/service';

/**
 * The card form with the wallets on but their scripts blocked, against the card form without
 * wallets (issue 27: a blocked or slow wallet script never delays the card form). In Chromium
 * (headless, a phone's viewport), each sample a fresh link: the time from navigation until the card
 * number field takes typing and the page's script has formatted it. "Blocked" is refused at once
 * (`abort`), "hanging" a request never answered (a network that drops it). The three kinds take
 * turns, so other work on the machine hits them alike.
 */
export const WALLET_PAGE_PLAN = { samples: 30, warmup: 3 } as const;

export interface WalletPageTimings {
  readonly withoutWallets: Timing;
  readonly walletScriptsBlocked: Timing;
  readonly walletScriptsHanging: Timing;
}

/** Milliseconds from navigation until the card number takes typing and the page's script formats it. */
export async function cardFormReadyMs(page: Page, url: string): Promise<number> {
  const started = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator('#card_number').fill('4111111111111111');
  await page.waitForFunction(() => (document.getElementById('card_number') as HTMLInputElement).value === '4111 1111 1111 1111');
  return performance.now() - started;
}

/** The wallets' scripts never reach the page: refused (`abort`), or never answered (`hang`). */
export async function blockWalletScripts(page: Page, how: 'abort' | 'hang'): Promise<void> {
  for (const url of Object.values(WALLET_SCRIPTS)) {
    await page.route(url, (route) => (how === 'abort' ? route.abort('blockedbyclient') : new Promise<void>(() => undefined)));
  }
}

/**
 * `links.plain()` a fresh link whose page offers no wallet, `links.wallets()` one whose page offers
 * both (a merchant with wallets on). One page per kind, reused across samples, as a customer's tab.
 */
export async function measureWalletPage(browser: Browser, links: { plain(): Promise<string>; wallets(): Promise<string> }, plan: { samples: number; warmup: number } = WALLET_PAGE_PLAN): Promise<WalletPageTimings> {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  try {
    const [plain, blocked, hanging] = [await context.newPage(), await context.newPage(), await context.newPage()];
    await blockWalletScripts(blocked, 'abort');
    await blockWalletScripts(hanging, 'hang');
    const kinds = [
      { page: plain, link: links.plain, samples: [] as number[] },
      { page: blocked, link: links.wallets, samples: [] as number[] },
      { page: hanging, link: links.wallets, samples: [] as number[] },
    ];
    for (let round = 0; round < plan.warmup + plan.samples; round++) {
      for (const kind of kinds) {
        const ms = await cardFormReadyMs(kind.page, await kind.link());
        if (round >= plan.warmup) kind.samples.push(ms);
      }
    }
    return { withoutWallets: timing(kinds[0]!.samples), walletScriptsBlocked: timing(kinds[1]!.samples), walletScriptsHanging: timing(kinds[2]!.samples) };
  } finally {
    await context.close();
  }
}

/** The bench's row: two merchants of the bench's service (wallets off, wallets on) and the run's own Chromium. */
export async function measureWalletPageOf(service: TestService, plan: { samples: number; warmup: number } = WALLET_PAGE_PLAN): Promise<WalletPageTimings> {
  const { launchBrowser } = await import('../support/browser');
  const browser = await launchBrowser();
  try {
    const plain = await service.createMerchant({ name: 'Bench Card Shop' });
    const wallets = await service.createMerchant({ name: 'Bench Wallet Shop', settings: { wallets: ['applepay', 'googlepay'], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' } });
    const url = async (m: MerchantCredentials) => (await createCheckout(service, m)).url;
    return await measureWalletPage(browser, { plain: () => url(plain), wallets: () => url(wallets) }, plan);
  } finally {
    await browser.close();
  }
}
