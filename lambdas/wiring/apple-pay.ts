import { readFileSync } from 'node:fs';
import { HttpsApplePayValidation } from '../adapters/apple-pay/validation-client';
import { SecretsManagerApplePaySecrets } from '../adapters/secrets-manager/apple-pay-secrets';
import type { Config } from '../config';
import type { Deps } from '../container';
import type { ApplePay } from '../ports/apple-pay';
import type { Clock } from '../ports/clock';
import { part } from './process';
import { secretsClientDeps } from './secrets';
import { storeDeps, type StoreKeys } from './stores';

/** Apple Pay's secrets (APPLE_PAY_SECRET_PREFIX) and the validation call, reaching a stand-in where APPLE_PAY_GATEWAY_ADDRESS says (local, tests). */
export function buildApplePay(config: Config, clock: Clock, client: Deps['secretsClient']): ApplePay {
  const [host, port] = config.APPLE_PAY_GATEWAY_ADDRESS?.split(':') ?? [];
  return {
    secrets: new SecretsManagerApplePaySecrets(client, config.APPLE_PAY_SECRET_PREFIX, clock, config.SECRET_CACHE_TTL_SECONDS * 1000),
    validation: new HttpsApplePayValidation({
      ...(host && port ? { address: { host, port: Number(port) } } : {}),
      ...(config.APPLE_PAY_GATEWAY_CA ? { ca: readFileSync(config.APPLE_PAY_GATEWAY_CA, 'utf8') } : {}),
    }),
  };
}

/** The stores and Apple Pay: the merchant validation route and the domain-association file. */
export const applePayDeps = part<StoreKeys | 'secretsClient' | 'applePay'>(() => {
  const stores = storeDeps();
  const { secretsClient } = secretsClientDeps();
  return { ...stores, secretsClient, applePay: buildApplePay(stores.config, stores.clock, secretsClient) };
});
