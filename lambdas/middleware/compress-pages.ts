import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/**
 * The pages compressed for the wire, as the client asks (`Accept-Encoding`): the HTTP API passes a
 * function's body through as it is and compresses nothing, so a 20 KB page would cross a phone's
 * network whole. Brotli when the client takes it, else gzip, else the page as it is; always with
 * `Vary: Accept-Encoding`, so no cache hands one client's encoding to another. (Middy's own
 * http-content-encoding has no release for the Middy major the service runs.)
 */

export type Encoding = 'br' | 'gzip' | 'identity';

/** Smaller bodies gain less than the encoding's own overhead. */
export const COMPRESS_MIN_BYTES = 1024;
/**
 * Brotli's quality 5: within a few per cent of its best ratio on these pages at a fraction of its
 * CPU (a 20 KB page in about a millisecond).
 */
const BROTLI_QUALITY = 5;

/**
 * The encoding a client takes (RFC 9110 §12.5.3): the best of br and gzip with a non-zero weight,
 * br on a tie; identity when neither is taken (no header, `identity`, `*;q=0`, or only unknown codings).
 */
export function preferredEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name && Number.isFinite(weight)) weights.set(name, Math.min(1, Math.max(0, weight)));
  }
  const of = (name: 'br' | 'gzip') => weights.get(name) ?? weights.get('*') ?? 0;
  const br = of('br');
  const gzip = of('gzip');
  if (br <= 0 && gzip <= 0) return 'identity';
  return br >= gzip ? 'br' : 'gzip';
}

const compressible = (type: string | undefined): boolean => /^(text\/|application\/(json|javascript))/i.test(type ?? '');

/** The response encoded for the client, or as it was (already encoded, binary, small or not asked for). */
export function compressResponse(response: APIGatewayProxyStructuredResultV2, acceptEncoding: string | undefined): APIGatewayProxyStructuredResultV2 {
  const headers = Object.fromEntries(Object.entries(response.headers ?? {}));
  const type = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  if (typeof response.body !== 'string' || response.isBase64Encoded || !compressible(String(type ?? ''))) return response;
  if (Object.keys(headers).some((k) => k.toLowerCase() === 'content-encoding')) return response;
  const vary = { ...headers, vary: 'Accept-Encoding' };
  const raw = Buffer.from(response.body, 'utf8');
  const encoding = preferredEncoding(acceptEncoding);
  if (encoding === 'identity' || raw.length < COMPRESS_MIN_BYTES) return { ...response, headers: vary };
  const encoded =
    encoding === 'br'
      ? brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } })
      : gzipSync(raw);
  return { ...response, headers: { ...vary, 'content-encoding': encoding }, body: encoded.toString('base64'), isBase64Encoded: true };
}

/** The middleware: every answer of the chain, the error page included, encoded for its client. */
export function compressPages(): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  const encode = async (request: middy.Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>): Promise<void> => {
    if (request.response && typeof request.response === 'object') request.response = compressResponse(request.response, request.event?.headers?.['accept-encoding']);
  };
  return { after: encode, onError: encode };
}
