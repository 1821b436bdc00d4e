import { request } from 'node:http';

export interface HttpAnswer<T = unknown> {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The parsed body, or undefined when it is not JSON. */
  readonly json: T;
}

export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  /** Exactly these headers are sent (plus host and content-length): no default content type. */
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * One HTTP request with full control of the bytes and headers, which fetch does not give (it
 * adds a content type, refuses invalid UTF-8 in strings, and so on).
 */
export function rawRequest<T = unknown>(baseUrl: string, r: RawRequest): Promise<HttpAnswer<T>> {
  const url = new URL(r.path, baseUrl);
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: r.method ?? 'POST',
        headers: { ...r.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parse(text) as T });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs a JSON body. */
export function postJson<T = unknown>(baseUrl: string, path: string, body: unknown): Promise<HttpAnswer<T>> {
  return rawRequest<T>(baseUrl, { path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}
