import { displayAmount } from '../lambdas/checkout-page/render';
import { PAGE_LANGUAGES } from '../lambdas/checkout-page/texts';

/**
 * The screenshots in docs/screenshots/ and what each must show, shared by the script that takes
 * them (scripts/docs-screenshots.ts, `npm run docs:screenshots`) and the test that keeps them
 * current (test/unit/docs-screenshots.test.ts): the script writes manifest.json with the texts it
 * read on each page, the test compares the manifest with this plan. A change of the page's texts
 * or of this list fails the test until the screenshots are taken again.
 */
export const SHOT_MERCHANT = 'Atelier Lumière';
export const SHOT_ORDER = { amount: '1234.50', currency: 'EUR', description: 'Handmade teapot' } as const;

export interface ShotText {
  readonly file: string;
  /** <html lang> and dir of the page. */
  readonly lang: string;
  readonly dir: string;
  /** Texts read off the page, in order. */
  readonly texts: readonly string[];
}

export const PAGE_SHOT_LANGUAGES = ['en', 'es', 'ar'] as const;

/** What each screenshot must show, derived from the page's current texts. */
export function expectedShots(): ShotText[] {
  const pages = PAGE_SHOT_LANGUAGES.map((lang): ShotText => {
    const t = PAGE_LANGUAGES[lang]!;
    return {
      file: `checkout-${lang}.png`,
      lang,
      dir: t.dir,
      texts: [SHOT_MERCHANT, t.payButton(displayAmount(123450, SHOT_ORDER.currency, lang)), t.cardLegend],
    };
  });
  return [...pages, { file: 'portal-payments-phone.png', lang: 'en', dir: 'ltr', texts: ['Payments', 'Created', 'Payment id', 'Merchant', 'Order', 'Amount', 'Status', 'Reason'] }];
}
