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

export type Scheme = 'light' | 'dark';
export type Device = 'desktop' | 'phone';

export interface ShotText {
  readonly file: string;
  /** <html lang> and dir of the page. */
  readonly lang: string;
  readonly dir: string;
  /** The colour scheme the browser asked for, and the one the page's background shows (read off it). */
  readonly scheme: Scheme;
  /** desktop: 1000 × 900; phone: 390 × 844. */
  readonly device: Device;
  /** Texts read off the page, in order. */
  readonly texts: readonly string[];
}

export const VIEWPORTS: Readonly<Record<Device, { width: number; height: number }>> = { desktop: { width: 1000, height: 900 }, phone: { width: 390, height: 844 } };

/** The checkout page's shots: three languages on a desktop, English in dark, Arabic and Russian on a phone in both schemes. */
export const PAGE_SHOTS: readonly { readonly lang: string; readonly device: Device; readonly scheme: Scheme }[] = [
  { lang: 'en', device: 'desktop', scheme: 'light' },
  { lang: 'es', device: 'desktop', scheme: 'light' },
  { lang: 'ar', device: 'desktop', scheme: 'light' },
  { lang: 'en', device: 'desktop', scheme: 'dark' },
  { lang: 'ar', device: 'phone', scheme: 'light' },
  { lang: 'ar', device: 'phone', scheme: 'dark' },
  { lang: 'ru', device: 'phone', scheme: 'light' },
  { lang: 'ru', device: 'phone', scheme: 'dark' },
];

/** The portal's payments list on a phone, in both schemes. */
export const PORTAL_SHOT_SCHEMES: readonly Scheme[] = ['light', 'dark'];

export const shotFile = (name: string, device: Device, scheme: Scheme): string => `${name}${device === 'phone' && !name.endsWith('-phone') ? '-phone' : ''}${scheme === 'dark' ? '-dark' : ''}.png`;

/** What each screenshot must show, derived from the page's current texts. */
export function expectedShots(): ShotText[] {
  const pages = PAGE_SHOTS.map(({ lang, device, scheme }): ShotText => {
    const t = PAGE_LANGUAGES[lang]!;
    return {
      file: shotFile(`checkout-${lang}`, device, scheme),
      lang,
      dir: t.dir,
      scheme,
      device,
      texts: [SHOT_MERCHANT, t.payButton(displayAmount(123450, SHOT_ORDER.currency, lang)), t.cardLegend],
    };
  });
  const portal = PORTAL_SHOT_SCHEMES.map(
    (scheme): ShotText => ({ file: shotFile('portal-payments-phone', 'phone', scheme), lang: 'en', dir: 'ltr', scheme, device: 'phone', texts: PORTAL_SHOT_TEXTS }),
  );
  return [...pages, ...portal];
}

/** What the portal's payments list shows on a phone: its heading and the first result's labels. */
export const PORTAL_SHOT_TEXTS: readonly string[] = ['Payments', 'Created', 'Payment id', 'Merchant', 'Order', 'Amount', 'Status', 'Reason'];
