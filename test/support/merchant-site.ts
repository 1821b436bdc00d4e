import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { validSessionBody, type Json } from './fixtures';
import { paymentIdOf } from './links';
import type { TestService } from './service';

/** One request the merchant site received: where the customer's browser landed. */
export interface Visit {
  readonly path: string;
  readonly query: URLSearchParams;
}

/**
 * A tiny merchant web site for the checkout to send customers back to. Its success, cancel, expiry
 * and error pages answer with a heading naming the page; /shop?link=<checkout link> is a shop page
 * that shows the checkout in an iframe.
 */
export interface MerchantSite {
  /** http://localhost:<port>: another site than the checkout service (127.0.0.1), as in real life. */
  readonly origin: string;
  readonly visits: readonly Visit[];
  /** success_url, cancel_url, expiry_url and error_url on this site. */
  urls(): { success_url: string; cancel_url: string; expiry_url: string; error_url: string };
  close(): Promise<void>;
}

export const MERCHANT_PAGES: Readonly<Record<string, string>> = {
  '/success': 'Thank you for your order',
  '/cancel': 'Payment cancelled',
  '/expired': 'Your checkout expired',
  '/error': 'We could not confirm your payment',
};

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export async function startMerchantSite(): Promise<MerchantSite> {
  const visits: Visit[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/favicon.ico') {
      res.writeHead(404).end();
      return;
    }
    visits.push({ path: url.pathname, query: url.searchParams });
    const page = (title: string, body: string) =>
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
    if (url.pathname === '/shop') {
      const link = url.searchParams.get('link') ?? '';
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(page('Gift Shop checkout', `<iframe id="checkout" title="Payment" src="${escapeAttr(link)}" style="width:100%;height:1000px;border:0"></iframe>`));
      return;
    }
    const title = MERCHANT_PAGES[url.pathname];
    res.writeHead(title ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page(title ?? 'Not found', ''));
  });
  // Listening on every interface: browsers may resolve localhost to ::1 or to 127.0.0.1.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, () => resolve());
  });
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    visits,
    urls: () => ({
      success_url: `${origin}/success`,
      cancel_url: `${origin}/cancel`,
      expiry_url: `${origin}/expired`,
      error_url: `${origin}/error`,
    }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface CheckoutLink {
  /** The redirect_url the merchant received: the link the customer opens. */
  readonly url: string;
  readonly paymentId: string;
  readonly order: { number: string; amount: string; currency: string; description: string };
}

/**
 * Creates a checkout session the way a merchant does (signed POST /api/v1/session) and returns the
 * customer's link. Every session gets its own order number.
 */
export async function createCheckout(service: TestService, merchant: MerchantCredentials, overrides: Json = {}): Promise<CheckoutLink> {
  const order = { number: `order-${randomUUID().slice(0, 8)}`, amount: '25.00', currency: 'USD', description: 'Gift box' };
  const body = validSessionBody(merchant.merchant_key, { order, ...overrides });
  const res = await service.signedPost<{ redirect_url: string }>('/api/v1/session', body, merchant.password);
  if (res.status !== 200) throw new Error(`session refused: ${res.status} ${res.text}`);
  return { url: res.json.redirect_url, paymentId: paymentIdOf(res.json.redirect_url), order: body.order as CheckoutLink['order'] };
}

/** POST /api/v1/payment/status by payment_id, signed: what the merchant's server sees. */
export async function statusOf(service: TestService, merchant: MerchantCredentials, paymentId: string): Promise<{ status: string; reason?: string }> {
  const res = await service.signedPost<{ status: string; reason?: string }>(
    '/api/v1/payment/status',
    { merchant_key: merchant.merchant_key, payment_id: paymentId },
    merchant.password,
  );
  if (res.status !== 200) throw new Error(`status refused: ${res.status} ${res.text}`);
  return res.json;
}
