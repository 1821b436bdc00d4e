import { request as httpRequest } from 'node:http';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { respond } from '../../lambdas/checkout-page/respond';
import { openLink } from '../../lambdas/use-cases/checkout';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import type { RouteDefinition } from '../../lib/routes';
import { openSession, type SessionOptions } from '../support/payments';
import type { TestService } from '../support/service';
import { lambdaContext } from '../../local/lambda-context';
import { apiEvent } from './bundle-check';
import { projectPath } from './bundles';
import { median, minimum, percentile } from './stats';

export interface Timing {
  readonly samples: number;
  readonly medianMs: number;
  readonly p99Ms: number;
  readonly minMs: number;
  readonly maxMs: number;
}

/** The figures of a set of samples, as the page's rows report them. */
export const timing = (samples: readonly number[]): Timing => ({
  samples: samples.length,
  medianMs: median(samples),
  p99Ms: percentile(samples, 99),
  minMs: minimum(samples),
  maxMs: Math.max(...samples),
});

export interface RenderTimings {
  /** The CheckoutPage handler called in this process with an API Gateway event (its two DynamoDB reads included). */
  readonly handler: Timing;
  /** respond() on a view already loaded: HTML, nonce and headers only, no I/O. */
  readonly htmlOnly: Timing;
  /** GET /auth/{token} through the local runner over a keep-alive connection. */
  readonly http: Timing;
}

export const RENDER_PLAN = { samples: 200, warmup: 20 } as const;

type Handler = (event: unknown, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const tokenOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/**
 * Renders one fresh link's checkout page `samples` times by each method, the three methods taking
 * turns so that a burst of other work on the machine hits all of them alike.
 */
export async function measureRender(service: TestService, merchant: MerchantCredentials, route: RouteDefinition, plan = RENDER_PLAN): Promise<RenderTimings> {
  const link = await openSession(service, merchant);
  const token = tokenOf(link.path);
  const { handler } = (await import(projectPath(route.entry))) as { handler: Handler };
  const view = await openLink(service.deps, token);
  if (view.kind !== 'form') throw new Error(`render: the link shows ${view.kind}, not the form`);
  const respondContext = { secrets: service.deps.secrets, action: `/auth/${encodeURIComponent(token)}`, sandbox: true, now: service.deps.clock.now() };
  const url = `${service.baseUrl}${link.path}`;

  const methods: readonly (() => Promise<void>)[] = [
    async () => {
      const result = await handler(apiEvent(route, { pathParameters: { token } }), lambdaContext(`bench-${route.id}`, 10));
      if (result.statusCode !== 200) throw new Error(`render: handler answered ${result.statusCode}`);
    },
    async () => {
      const result = await respond(view, respondContext);
      if (result.statusCode !== 200) throw new Error(`render: respond() answered ${result.statusCode}`);
    },
    async () => {
      const res = await fetch(url);
      await res.text();
      if (res.status !== 200) throw new Error(`render: GET ${link.path} answered ${res.status}`);
    },
  ];
  const samples: number[][] = methods.map(() => []);
  for (let i = 0; i < plan.warmup + plan.samples; i++) {
    for (const [m, run] of methods.entries()) {
      const started = performance.now();
      await run();
      if (i >= plan.warmup) samples[m]?.push(performance.now() - started);
    }
  }
  const [handlerMs = [], htmlMs = [], httpMs = []] = samples;
  return { handler: timing(handlerMs), htmlOnly: timing(htmlMs), http: timing(httpMs) };
}

export interface Bytes {
  readonly raw: number;
  readonly gzip: number;
  readonly brotli: number;
}

export interface PageWeight {
  readonly page: string;
  readonly request: string;
  /** Held to the issue's page-weight target (the checkout page is; the operators' portal is not). */
  readonly heldToTarget: boolean;
  readonly total: Bytes;
  /** Contents of the <style> elements. */
  readonly style: Bytes;
  /** Contents of the executable <script> elements (not JSON data blocks). */
  readonly script: Bytes;
  /** Everything else: markup, text, data blocks. */
  readonly markup: Bytes;
  /** What crossed the wire for a browser's `Accept-Encoding: gzip, deflate, br`: the body's bytes and its encoding. */
  readonly wire: { readonly bytes: number; readonly encoding: string };
}

/** zlib's defaults: gzip level 6, brotli quality 11. */
const bytesOf = (text: string): Bytes => {
  const buf = Buffer.from(text, 'utf8');
  return { raw: buf.length, gzip: gzipSync(buf).length, brotli: brotliCompressSync(buf).length };
};

const STYLE = /<style\b[^>]*>([\s\S]*?)<\/style>/gi;
const SCRIPT = /<script\b([^>]*)>([\s\S]*?)<\/script>/gi;
const isExecutable = (attributes: string) => {
  const type = /\btype\s*=\s*["']?([^"'\s>]+)/i.exec(attributes)?.[1];
  return type === undefined || /^(module|text\/javascript|application\/javascript)$/i.test(type);
};

/** Splits a page we render ourselves (so a regular expression reads it reliably) into its parts. */
export function weigh(page: string, request: string, heldToTarget: boolean, html: string, wire: PageWeight['wire']): PageWeight {
  const styles = [...html.matchAll(STYLE)].map((m) => m[1] ?? '');
  const scripts = [...html.matchAll(SCRIPT)].filter((m) => isExecutable(m[1] ?? '')).map((m) => m[2] ?? '');
  const markup = html.replace(STYLE, (m, body: string) => m.replace(body, '')).replace(SCRIPT, (m, attributes: string, body: string) => (isExecutable(attributes) ? m.replace(body, '') : m));
  return { page, request, heldToTarget, total: bytesOf(html), style: bytesOf(styles.join('\n')), script: bytesOf(scripts.join('\n')), markup: bytesOf(markup), wire };
}

/** The page as a browser gets it: the bytes of the body as sent (compressed as it asked) and their encoding. */
function onTheWire(service: TestService, path: string): Promise<PageWeight['wire']> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, service.baseUrl), { method: 'GET', headers: { 'accept-encoding': 'gzip, deflate, br' }, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ bytes, encoding: String(res.headers['content-encoding'] ?? 'identity') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function pageHtml(service: TestService, path: string): Promise<string> {
  const res = await service.request({ method: 'GET', path });
  if (res.status !== 200) throw new Error(`page weight: GET ${path} answered ${res.status}`);
  return res.text;
}

/** The session of the bench's merchants gives e-mail and country; without them the form asks for both. */
const ASKING: SessionOptions = { extra: { customer: { name: 'John Doe' }, billing_address: undefined } };

export async function measurePageWeights(service: TestService, merchant: MerchantCredentials): Promise<PageWeight[]> {
  const known = await openSession(service, merchant);
  const asking = await openSession(service, merchant, ASKING);
  const askingHtml = await pageHtml(service, asking.path);
  if (!askingHtml.includes('id="country"')) throw new Error('page weight: the form of a session without billing country does not ask for it');
  return [
    weigh('checkout form, e-mail and country known', 'GET /auth/{token}', true, await pageHtml(service, known.path), await onTheWire(service, known.path)),
    weigh('checkout form asking e-mail and country', 'GET /auth/{token}', true, askingHtml, await onTheWire(service, asking.path)),
    weigh('admin portal', 'GET /admin', false, await pageHtml(service, '/admin'), await onTheWire(service, '/admin')),
  ];
}
