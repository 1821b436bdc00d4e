import type { Deps } from '../container';
import { RetryLaterError } from '../domain/errors';

/**
 * The per-merchant limit of the merchant API (ADR 0025): once a request's hash has verified, its
 * merchant takes one of its requests for this second, counted across every instance. Checked after
 * the signature, so only the merchant itself spends its limit: a forger's requests are refused at
 * the hash (and an unknown merchant_key before any secret is read, CachedMerchantSecrets), never
 * counted against anyone. A merchant over its limit is answered 429 with Retry-After and nothing is
 * done; the others keep their own capacity.
 */
export async function admitMerchantRequest(d: Pick<Deps, 'merchantLimits' | 'clock'>, merchantKey: string): Promise<void> {
  const admitted = await d.merchantLimits.admit(merchantKey, d.clock.now());
  if (!admitted.allowed) throw new RetryLaterError('MERCHANT_RATE_LIMITED', admitted.retryAfterSeconds);
}
