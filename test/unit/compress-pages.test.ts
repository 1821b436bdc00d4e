import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { compressResponse, preferredEncoding, COMPRESS_MIN_BYTES } from '../../lambdas/middleware/compress-pages';

/** Accept-Encoding negotiation (RFC 9110 §12.5.3) and what is encoded. */
describe('preferredEncoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['br;q=0.5, gzip;q=0.9', 'gzip'],
    ['br;q=0.9, gzip;q=0.9', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['*;q=0', 'identity'],
    ['identity', 'identity'],
    ['deflate, compress', 'identity'],
    ['br;q=abc, gzip', 'gzip'],
  ] as const)('%j → %s', (header, expected) => {
    expect(preferredEncoding(header)).toBe(expected);
  });
});

describe('compressResponse', () => {
  const page = `<!doctype html><html><body>${'<p>Pay with card</p>'.repeat(200)}</body></html>`;
  const html = { statusCode: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, body: page };

  it('encodes a page as asked, base64 for the HTTP API, with Vary; the decoded bytes are the page', () => {
    const br = compressResponse(html, 'br');
    expect(br).toMatchObject({ isBase64Encoded: true, headers: { 'content-encoding': 'br', vary: 'Accept-Encoding', 'cache-control': 'no-store' } });
    expect(brotliDecompressSync(Buffer.from(br.body!, 'base64')).toString('utf8')).toBe(page);
    const gz = compressResponse(html, 'gzip');
    expect(gunzipSync(Buffer.from(gz.body!, 'base64')).toString('utf8')).toBe(page);
  });

  it('leaves small, binary, already encoded and non-text answers as they are (Vary on the text ones)', () => {
    const small = { ...html, body: 'x'.repeat(COMPRESS_MIN_BYTES - 1) };
    expect(compressResponse(small, 'br')).toEqual({ ...small, headers: { ...small.headers, vary: 'Accept-Encoding' } });
    const binary = { statusCode: 200, headers: { 'content-type': 'image/png' }, body: 'AAAA', isBase64Encoded: true };
    expect(compressResponse(binary, 'br')).toBe(binary);
    const done = { ...html, headers: { ...html.headers, 'Content-Encoding': 'gzip' } };
    expect(compressResponse(done, 'br')).toBe(done);
    const octets = { statusCode: 200, headers: { 'content-type': 'application/octet-stream' }, body: page };
    expect(compressResponse(octets, 'br')).toBe(octets);
  });
});
