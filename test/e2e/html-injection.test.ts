import { jsonForScript } from '../../lambdas/checkout-page/html';
import { cards, payWith } from '../support/browser';
import { createCheckout, startMerchantSite, statusOf } from '../support/merchant-site';
import { browserForFile } from '../support/suites';

/**
 * Merchant-supplied text embedded in the page's scripts cannot break out of them: a success_url with
 * `</script>` (or `<!--`, U+2028) is carried by the navigation script as data, and the customer
 * lands exactly on it. Before, the inline script ended at the merchant's `</script>`: the page broke
 * (the CSP stopped the injected script, but the navigation never happened).
 */
const { service, site, page, merchants: [shop] } = browserForFile({ merchants: [{ name: 'Injection Shop' }] });

const payloads = [
  ['a closing script tag', '</script><script>document.title="pwned"</script>'],
  ['an HTML comment opener', '<!--<script>'],
] as const;

it.each(payloads)('a success_url with %s is followed exactly, in the whole window (url_target _top)', async (_what, payload) => {
  const success = `${site.origin}/success?next=${payload}`;
  const link = await createCheckout(service, shop, { ...site.urls(), success_url: success, url_target: '_top' });
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.goto(link.url);
  await payWith(page, cards.approved);
  await page.waitForURL((url) => url.origin === site.origin && url.pathname === '/success');
  expect(new URL(page.url()).searchParams.get('next')).toBe(new URL(success).searchParams.get('next'));
  expect(await page.title()).not.toBe('pwned');
  expect(dialogs).toEqual([]);
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
});

describe('jsonForScript', () => {
  const texts: readonly (readonly [string, string])[] = [...payloads, ['line separators', 'a\u2028b\u2029c'], ['an ampersand and a closing bracket', '&amp; > &lt;']];
  it.each(texts)('escapes %s and parses back to the same value', (_what, text) => {
    const value = { url: text, list: [text] };
    const json = jsonForScript(value);
    expect(json).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(json)).toEqual(value);
    // As a JavaScript literal too.
    expect(new Function(`return ${json};`)()).toEqual(value);
  });
});
