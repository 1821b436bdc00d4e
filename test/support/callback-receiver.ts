import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyCallbackHash } from '../../lambdas/domain/callback';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';

/** How the receiver answers one callback: an HTTP status, or never (a timeout for the sender). */
export type Answer = number | 'hang';

export interface ReceivedCallback {
  readonly at: number;
  readonly contentType: string;
  /** The form's fields in the order they were sent. */
  readonly pairs: readonly [string, string][];
  readonly fields: Readonly<Record<string, string>>;
  /** What the receiver answered. */
  readonly answer: Answer;
  /** The body exactly as received, and its X-Checkout-Signature header. */
  readonly raw: string;
  readonly signature?: string;
}

export interface CallbackReceiver {
  /** http://127.0.0.1:<port>/callbacks */
  readonly url: string;
  readonly received: ReceivedCallback[];
  /** Answers for the next callbacks, in order; after them, `fallback` (200 unless changed). */
  script(...answers: Answer[]): void;
  fallback: Answer;
  /** Milliseconds every answer waits before it is sent (a slow endpoint); 0 unless changed. */
  delayMs: number;
  /** Resolves when `count` callbacks have arrived in all (polls; gives up after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedCallback[]>;
  close(): Promise<void>;
}

/**
 * A merchant's callback endpoint on loopback: a real HTTP server that records every form it gets and
 * answers as scripted. It checks nothing itself; tests verify the hash with `verifiesWith`.
 */
export async function startCallbackReceiver(port = 0): Promise<CallbackReceiver> {
  const received: ReceivedCallback[] = [];
  const answers: Answer[] = [];
  const hanging = new Set<ServerResponse>();
  const state = { fallback: 200 as Answer, delayMs: 0 };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const pairs = [...new URLSearchParams(body)] as [string, string][];
      const answer = answers.shift() ?? state.fallback;
      const signature = req.headers['x-checkout-signature'];
      received.push({
        at: Date.now(),
        contentType: String(req.headers['content-type']),
        pairs,
        fields: Object.fromEntries(pairs),
        answer,
        raw: body,
        ...(typeof signature === 'string' ? { signature } : {}),
      });
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      const reply = () => res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'OK' : 'nope');
      if (state.delayMs > 0) setTimeout(reply, state.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`;
  return {
    url,
    received,
    script: (...next) => answers.push(...next),
    get fallback() {
      return state.fallback;
    },
    set fallback(a: Answer) {
      state.fallback = a;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    async waitFor(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} callbacks, got ${received.length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return received.slice(0, count);
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The check a merchant's server makes (protocol.md §1): the hash of id and order fields. */
export const verifiesWith = (cb: ReceivedCallback, password: string): boolean => verifyCallbackHash(cb.fields, password);

/**
 * Merchants that each get a receiver of their own, so tests do not see each other's callbacks.
 * `merchant(settings)` creates one on the service (with its notification URL); `close()` (in
 * afterAll) stops every receiver made.
 */
export function receivingMerchants(service: () => { createMerchant(input: { name: string; settings: Record<string, unknown> }): Promise<MerchantCredentials> }, name: string, defaults: Record<string, unknown> = {}) {
  const receivers: CallbackReceiver[] = [];
  return {
    async merchant(settings: Record<string, unknown> = {}): Promise<{ shop: MerchantCredentials; receiver: CallbackReceiver }> {
      const receiver = await startCallbackReceiver();
      receivers.push(receiver);
      const shop = await service().createMerchant({ name, settings: { notificationUrl: receiver.url, ...defaults, ...settings } });
      return { shop, receiver };
    },
    close: () => Promise.all(receivers.map((r) => r.close())),
  };
}

/**
 * How the callback log (the portal's and the merchant CLI's `callbacks`) shows a sale's callback of
 * 25.00 USD that the receiver at `url` refused once with HTTP 500 and took on the next attempt.
 */
export const saleCallbackDeliveredSecondTime = (seen: { transId: unknown; url: string; failedAt: string; deliveredAt: string }) => ({
  index: 0,
  number: 1,
  trans_id: seen.transId,
  type: 'sale',
  status: 'success',
  amount: '25.00',
  currency: 'USD',
  order_status: 'settled',
  date: expect.any(String),
  state: 'delivered',
  attempt_count: 2,
  attempts: [
    { at: seen.failedAt, url: seen.url, httpStatus: 500, latencyMs: expect.any(Number), error: 'HTTP 500' },
    { at: seen.deliveredAt, url: seen.url, httpStatus: 200, latencyMs: expect.any(Number) },
  ],
  delivered_at: seen.deliveredAt,
  resendable: true,
});
