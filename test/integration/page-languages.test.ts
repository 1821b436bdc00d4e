import { brotliCompressSync, gzipSync } from 'node:zlib';
import { PAGE_LANGUAGES } from '../../lambdas/checkout-page/texts';
import { displayAmount } from '../../lambdas/checkout-page/render';
import { validSessionBody, type Json } from '../support/fixtures';
import { paymentIdOf } from '../support/links';
import { storedPayment } from '../support/payments';
import { serviceForFile } from '../support/suites';
import { invalidRequest } from '../support/payments';

/**
 * The page's language over HTTP: the session's `language` (ISO 639-1, validated, stored lower case),
 * else the browser's Accept-Language, else English; <html lang dir>, texts and amounts in the
 * language; and every language's heaviest page (the form asking e-mail and country) under the
 * page's 30 KB compressed budget.
 */
const { service, merchants: [shop, walletShop] } = serviceForFile({
  merchants: [{ name: 'Atelier' }, { name: 'Wallet Atelier', settings: { wallets: ['applepay', 'googlepay'], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' } }],
});

async function session(overrides: Json = {}, merchant = shop): Promise<{ path: string; paymentId: string }> {
  const res = await service.signedPost<{ redirect_url: string }>('/api/v1/session', validSessionBody(merchant.merchant_key, { order: { number: 'lang-1', amount: '1234.50', currency: 'EUR', description: 'Teapot' }, ...overrides }), merchant.password);
  if (res.status !== 200) throw new Error(`session refused: ${res.status} ${res.text}`);
  return { path: new URL(res.json.redirect_url).pathname, paymentId: paymentIdOf(res.json.redirect_url) };
}

async function page(path: string, acceptLanguage?: string): Promise<string> {
  const res = await service.request({ method: 'GET', path, headers: acceptLanguage ? { 'accept-language': acceptLanguage } : {} });
  expect(res.status).toBe(200);
  return res.text;
}

const htmlTag = (html: string) => /<html [^>]*>/.exec(html)?.[0];

describe('the session field `language`', () => {
  it.each([
    ['an unknown code', 'xx'],
    ['a locale, not a language', 'en-US'],
    ['a three-letter code', 'eng'],
    ['a number', 7, 'This value should be of type string.'],
  ])('refuses %s with 400 and the documented envelope', async (_case, language, rule = 'This value is not valid.') => {
    const res = await service.signedPost('/api/v1/session', validSessionBody(shop.merchant_key, { language }), shop.password);
    expect([res.status, res.json]).toEqual([400, invalidRequest(`language: ${rule}`)]);
  });

  it.each([
    ['"" (a shop module\'s empty field)', '', undefined],
    ['null', null, undefined],
    ['capitals', 'ES', 'es'],
    ['a language the page does not have yet', 'it', 'it'],
  ])('takes %s', async (_case, language, stored) => {
    const { paymentId } = await session({ language });
    expect((await storedPayment(service, paymentId)).checkout?.language).toBe(stored);
  });
});

describe('the page in the customer\'s language', () => {
  it.each(Object.values(PAGE_LANGUAGES).map((t) => [t.lang, t] as const))('%s: <html lang dir>, its texts and the amount written by Intl', async (lang, t) => {
    const { path } = await session({ language: lang });
    const html = await page(path, 'en');
    expect(htmlTag(html)).toBe(`<html lang="${lang}" dir="${t.dir}">`);
    const amount = displayAmount(123450, 'EUR', lang);
    expect(html).toContain(`>${t.payButton(amount).replace(/&/g, '&amp;')}</button>`);
    expect(html).toContain(t.cardLegend);
  });

  it.each([
    ['the browser\'s language when the session has none', undefined, 'de-CH,de;q=0.9,en;q=0.5', 'de'],
    ['the browser\'s language when the page lacks the session\'s', 'it', 'it,fr;q=0.8', 'fr'],
    ['English when neither is there', 'it', 'ja', 'en'],
    ['the session\'s language over the browser\'s', 'uk', 'ru', 'uk'],
  ])('takes %s', async (_case, language, header, expected) => {
    const { path } = await session(language ? { language } : {});
    expect(htmlTag(await page(path, header))).toContain(`lang="${expected}"`);
  });

  it('keeps the card digits left to right on the Arabic page', async () => {
    const { path } = await session({ language: 'ar' });
    const html = await page(path);
    for (const id of ['card_number', 'card_expiry', 'card_cvv']) expect(html).toMatch(new RegExp(`id="${id}"[^>]* dir="ltr"`));
  });

  it('names the countries in the language', async () => {
    const { path } = await session({ language: 'de', customer: { name: 'John Doe' }, billing_address: undefined });
    const html = await page(path);
    expect(html).toContain('<option value="DE">Deutschland</option>');
  });

  it('answers a link that does not exist in the browser\'s language', async () => {
    const res = await service.request({ method: 'GET', path: '/auth/nope', headers: { 'accept-language': 'es' } });
    expect(res.status).toBe(404);
    expect(res.text).toContain(PAGE_LANGUAGES.es!.notFoundTitle);
  });
});

describe('page weight in every language (target: under 30 KB compressed)', () => {
  const BUDGET = 30 * 1024;
  it.each(Object.keys(PAGE_LANGUAGES))('%s: the form asking e-mail and country, gzip and brotli', async (lang) => {
    const { path } = await session({ language: lang, customer: { name: 'John Doe' }, billing_address: undefined });
    const html = await page(path);
    expect(html).toContain('id="country"');
    const bytes = Buffer.from(html, 'utf8');
    expect(gzipSync(bytes).length).toBeLessThan(BUDGET);
    expect(brotliCompressSync(bytes).length).toBeLessThan(BUDGET);
  });

  it.each(Object.keys(PAGE_LANGUAGES))('%s: the same with both wallets on (their buttons, request data and script)', async (lang) => {
    const { path } = await session({ language: lang, customer: { name: 'John Doe' }, billing_address: undefined }, walletShop);
    const html = await page(path);
    expect(html).toContain('id="googlepay-button"');
    const bytes = Buffer.from(html, 'utf8');
    expect(gzipSync(bytes).length).toBeLessThan(BUDGET);
    expect(brotliCompressSync(bytes).length).toBeLessThan(BUDGET);
  });
});
