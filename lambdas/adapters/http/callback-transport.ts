import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { addressAllowed, notificationUrlProblem, type DestinationPolicy } from '../../domain/notification-url';
import type { CallbackTransport, PostResult } from '../../ports/callbacks';

/** What of a receiver's failure is kept in the delivery log: the kind, never a body. */
const MAX_ERROR_LENGTH = 200;

export const REFUSED_DESTINATION = 'Not sent: the notification URL points to a private, loopback or reserved address.';

/** Refused before connecting: recorded without latency or status, so it cannot probe the network. */
class DestinationRefused extends Error {
  override readonly name = 'DestinationRefused';
}

/**
 * Resolves the host itself and lets the connection use only an address the policy allows: the
 * check and the connection see the same address (no DNS rebinding between them), while the Host
 * header and TLS SNI stay the URL's name.
 */
export type Resolver = (hostname: string, options: { all: true; family?: number }, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

function pinnedLookup(policy: DestinationPolicy, resolve: Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { all: true, family: options.family as number | undefined }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 4);
      const list = Array.isArray(addresses) ? addresses : [];
      if (!list.length || !list.every((a) => addressAllowed(a.address, policy))) return callback(new DestinationRefused(REFUSED_DESTINATION), '', 4);
      const chosen = list[0]!;
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, chosen.address, chosen.family);
    });
  };
}

/**
 * Posts callbacks over node:http(s). The URL is checked against the policy, its name resolved and
 * every address checked, and the connection pinned to them; redirects are not followed (a 3xx is
 * not a 2xx), the answer's body is discarded, and the whole exchange must finish within the timeout.
 */
export function createCallbackTransport(policy: DestinationPolicy, resolve: Resolver = dnsLookup as unknown as Resolver): CallbackTransport {
  const lookup = pinnedLookup(policy, resolve);
  return {
    post(url: string, body: string, timeoutMs: number, headers: Readonly<Record<string, string>> = {}): Promise<PostResult> {
      const started = performance.now();
      const latency = () => Math.round(performance.now() - started);
      if (notificationUrlProblem(url, policy)) return Promise.resolve({ kind: 'failed', error: REFUSED_DESTINATION, latencyMs: 0 });
      const target = new URL(url);
      const options: RequestOptions = {
        method: 'POST',
        lookup,
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', 'user-agent': 'checkout-callbacks/1', 'content-length': Buffer.byteLength(body) },
        signal: AbortSignal.timeout(timeoutMs),
      };
      return new Promise<PostResult>((resolve) => {
        const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, options, (res) => {
          res.resume();
          res.on('end', () => resolve({ kind: 'answered', httpStatus: res.statusCode ?? 0, latencyMs: latency() }));
          res.on('error', () => resolve({ kind: 'answered', httpStatus: res.statusCode ?? 0, latencyMs: latency() }));
        });
        req.on('error', (e: Error & { code?: string; cause?: Error }) => {
          if (e instanceof DestinationRefused || e.cause instanceof DestinationRefused) return resolve({ kind: 'failed', error: REFUSED_DESTINATION, latencyMs: 0 });
          if (e.name === 'TimeoutError' || e.name === 'AbortError') return resolve({ kind: 'timeout', latencyMs: latency() });
          resolve({ kind: 'failed', error: `${e.name}: ${e.code ?? e.message}`.slice(0, MAX_ERROR_LENGTH), latencyMs: latency() });
        });
        req.end(body);
      });
    },
  };
}
