import { readFileSync } from 'node:fs';
import { HttpsApplePayValidation } from '../adapters/apple-pay/validation-client';
import { SecretsManagerApplePaySecrets } from '../adapters/secrets-manager/apple-pay-secrets';
import type { Config } from '../config';
import type { Deps } from '../container';
import type { ApplePay } from '../ports/apple-pay';
import type { Clock } from '../ports/clock';
import { part } from './process';
import { secretsClientDeps } from './secrets';
import { baseDeps } from './stores';

/** Apple Pay's secrets (APPLE_PAY_SECRET_PREFIX) and the validation call, reaching a stand-in where APPLE_PAY_GATEWAY_ADDRESS says (local, tests). */
export function buildApplePay(config: Config, clock: Clock, client: Deps['secretsClient']): ApplePay {
  const [host, port] = config.APPLE_PAY_GATEWAY_ADDRESS?.split(':') ?? [];
  return {
    secrets: new SecretsManagerApplePaySecrets(client, config.APPLE_PAY_SECRET_PREFIX, clock, config.SECRET_CACHE_TTL_SECONDS * 1000),
    validation: new HttpsApplePayValidation(
      {
        ...(host && port ? { address: { host, port: Number(port) } } : {}),
        ...(config.APPLE_PAY_GATEWAY_CA ? { ca: readFileSync(config.APPLE_PAY_GATEWAY_CA, 'utf8') } : {}),
      },
      config.APPLE_PAY_VALIDATION_DEADLINE_MS,
    ),
  };
}

/** Apple Pay beside the route's other parts (the pay route: merchant validation). */
export const applePayDeps = part<'applePay'>(() => {
  const { config, clock } = baseDeps();
  return { applePay: buildApplePay(config, clock, secretsClientDeps().secretsClient) };
});
