import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { openSession } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * The pages on the wire (lambdas/middleware/compress-pages.ts): the checkout page, the portal and
 * the sandbox's pages answer brotli or gzip as the client's Accept-Encoding asks, the page itself
 * when it asks for neither, always with Vary: Accept-Encoding; the JSON API is left alone.
 */
let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

/** A GET with exactly these headers; the body as the bytes that came. */
function get(path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, service.baseUrl), { method: 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const pagePath = async (): Promise<string> => {
  const shop = await service.createMerchant({ name: 'Wire Shop' });
  const s = await openSession(service, shop);
  return s.path;
};

describe('the checkout page and the portal on the wire', () => {
  it.each([
    ['br', 'gzip, deflate, br', (b: Buffer) => brotliDecompressSync(b)],
    ['gzip', 'gzip, deflate', (b: Buffer) => gunzipSync(b)],
    ['gzip', 'br;q=0.2, gzip;q=0.8', (b: Buffer) => gunzipSync(b)],
  ] as const)('answers %s for Accept-Encoding "%s", the same page as unencoded, much smaller', async (encoding, accept, decode) => {
    const path = await pagePath();
    const plain = await get(path, {});
    const encoded = await get(path, { 'accept-encoding': accept });
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(encoded.status).toBe(200);
    expect(encoded.headers).toMatchObject({ 'content-encoding': encoding, vary: 'Accept-Encoding', 'content-type': 'text/html; charset=utf-8' });
    const html = decode(encoded.body).toString('utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    // Each answer has its own CSP nonce and the link's time left as the server saw it: the same page otherwise.
    const normalized = (h: string) => h.replace(/nonce-[^'"]+|nonce="[^"]+"/g, 'nonce').replace(/"inMs":\d+/g, '"inMs":0');
    expect(normalized(html)).toBe(normalized(plain.body.toString('utf8')));
    expect(encoded.body.length).toBeLessThan(plain.body.length / 2.5);
    // The page's own headers travel unchanged beside the encoding.
    expect(encoded.headers['content-security-policy']).toMatch(/script-src 'nonce-/);
    expect(encoded.headers['cache-control']).toBe('no-store');
  });

  it.each([['identity'], ['br;q=0, gzip;q=0'], ['*;q=0'], ['compress, deflate']])('answers the page unencoded for Accept-Encoding "%s"', async (accept) => {
    const path = await pagePath();
    const answer = await get(path, { 'accept-encoding': accept });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.body.toString('utf8')).toMatch(/^<!doctype html>/i);
  });

  it('the portal page and a page the link no longer serves are encoded too; the JSON API is not', async () => {
    const portal = await get('/admin', { 'accept-encoding': 'br' });
    expect(portal.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(portal.body).toString('utf8')).toContain('Checkout operations');
    const gone = await get('/auth/not-a-real-link-token', { 'accept-encoding': 'gzip' });
    expect(gone.status).toBeGreaterThanOrEqual(400);
    expect(gone.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gone.body).toString('utf8')).toMatch(/<html/i);
    const api = await get('/api/v1/nowhere', { 'accept-encoding': 'br' });
    expect(api.headers['content-encoding']).toBeUndefined();
  });
});
