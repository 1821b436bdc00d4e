import type { CallbackTransport, PostResult } from '../../ports/callbacks';

/** What of a receiver's failure is kept in the delivery log: the kind, never a body. */
const MAX_ERROR_LENGTH = 200;

/**
 * Posts a callback with fetch. Redirects are not followed (a 3xx is not a 2xx), the answer's body
 * is discarded, and the whole exchange must finish within the timeout.
 */
export const fetchTransport: CallbackTransport = {
  async post(url: string, body: string, timeoutMs: number, headers: Readonly<Record<string, string>> = {}): Promise<PostResult> {
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', 'user-agent': 'checkout-callbacks/1' },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel().catch(() => undefined);
      return { kind: 'answered', httpStatus: response.status, latencyMs: latency() };
    } catch (e) {
      const error = e as Error & { cause?: { code?: string; message?: string } };
      if (error.name === 'TimeoutError' || error.name === 'AbortError') return { kind: 'timeout', latencyMs: latency() };
      const detail = error.cause?.code ?? error.cause?.message ?? error.message;
      return { kind: 'failed', error: `${error.name}: ${detail}`.slice(0, MAX_ERROR_LENGTH), latencyMs: latency() };
    }
  },
};
