import { createSecretsClient } from '../adapters/secrets-manager/merchant-secrets';
import { secretsManagerOriginSecret, type CachedOriginSecret } from '../adapters/secrets-manager/origin-secret';
import { provideOriginSecret } from '../middleware/origin-guard';
import { systemClock } from '../ports/clock';

/**
 * The origin check's secret on a stage behind CloudFront, with the one Secrets Manager client it
 * needs. No handler imports this: the stack adds it to every HTTP function's bundle on the stages
 * with an edge only (esbuild `inject`, lib/checkout-stack.ts ORIGIN_SECRET_INJECT), so a route
 * that reads no secret of its own carries no Secrets Manager client anywhere else.
 */
let originSecret: CachedOriginSecret | undefined;
provideOriginSecret(() => {
  const secretId = process.env.ORIGIN_SECRET_ID;
  if (!secretId) return undefined;
  const ttlSeconds = Number(process.env.SECRET_CACHE_TTL_SECONDS ?? 300);
  originSecret ??= secretsManagerOriginSecret(createSecretsClient(process.env.SECRETS_MANAGER_ENDPOINT), secretId, systemClock, (Number.isInteger(ttlSeconds) && ttlSeconds >= 0 ? ttlSeconds : 300) * 1000);
  return originSecret;
});
