import { createSecretsClient } from '../adapters/secrets-manager/merchant-secrets';
import { secretsManagerOriginSecret, type CachedOriginSecret } from '../adapters/secrets-manager/origin-secret';
import { provideOriginSecret } from '../middleware/origin-guard';
import { systemClock } from '../ports/clock';

/**
 * The `$default` route's function on a stage behind CloudFront (lib/checkout-stack.ts picks this
 * entry there): the same answers (lambdas/handlers/not-found.ts), and the origin check every HTTP
 * function makes, with the one Secrets Manager client it needs for it. The plain entry stays without
 * any SDK client, for the stages that have no origin secret.
 */
let originSecret: CachedOriginSecret | undefined;
provideOriginSecret(() => {
  const secretId = process.env.ORIGIN_SECRET_ID;
  if (!secretId) return undefined;
  const ttlSeconds = Number(process.env.SECRET_CACHE_TTL_SECONDS ?? 300);
  originSecret ??= secretsManagerOriginSecret(createSecretsClient(process.env.SECRETS_MANAGER_ENDPOINT), secretId, systemClock, (Number.isInteger(ttlSeconds) && ttlSeconds >= 0 ? ttlSeconds : 300) * 1000);
  return originSecret;
});

export { handler } from './not-found';
