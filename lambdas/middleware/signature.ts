import { HASH_NOT_VALID, invalidRequest } from '../domain/errors';
import { verifyFields } from '../domain/hash';
import type { MerchantSecrets } from '../ports/merchants';

/**
 * Verifies a request's hash against the merchant's password. An unknown merchant_key is answered
 * exactly like a wrong hash, so keys cannot be enumerated; one of several accepted field
 * renderings may match (see createSessionHashFields).
 */
export async function verifySignature(
  secrets: MerchantSecrets,
  merchantKey: string,
  hash: string,
  candidates: readonly (readonly string[])[],
  now: Date = new Date(),
): Promise<void> {
  const matches = (password: string | undefined) => {
    // With no password we still compute a hash, so the answer takes the same time.
    const key = password ?? 'unknown-merchant-placeholder-password';
    let ok = false;
    for (const fields of candidates) ok = verifyFields(hash, fields, key) || ok;
    return ok && password !== undefined;
  };
  // The password before a rotation, while its overlap lasts: read from the cached entry, no call.
  const previousMatches = async () => matches(await secrets.previousPasswordOf?.(merchantKey, now));
  const cached = await secrets.passwordOf(merchantKey);
  if (matches(cached) || (cached !== undefined && (await previousMatches()))) return;
  // The password may have been rotated since it was cached: read it again (rate-limited) once; the
  // cached one may now be the previous one, still accepted during the overlap.
  const fresh = cached !== undefined && secrets.refresh ? await secrets.refresh(merchantKey) : undefined;
  if (fresh !== undefined && fresh !== cached && (matches(fresh) || (await previousMatches()))) return;
  throw invalidRequest([HASH_NOT_VALID]);
}
