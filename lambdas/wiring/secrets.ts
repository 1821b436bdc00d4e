import { CachedMerchantSecrets, SecretsManagerMerchantSecrets, createSecretsClient } from '../adapters/secrets-manager/merchant-secrets';
import type { Config } from '../config';
import type { Deps } from '../container';
import type { Clock } from '../ports/clock';
import type { MerchantSecrets } from '../ports/merchants';
import { DynamoMerchantDirectory } from '../adapters/dynamodb/merchant-directory';
import { part } from './process';
import { baseDeps, storeDeps, type StoreKeys } from './stores';

/** The Secrets Manager client: only the functions that read a secret import this module. */
export const secretsClientDeps = part<'secretsClient'>(() => ({ secretsClient: createSecretsClient(baseDeps().config.SECRETS_MANAGER_ENDPOINT, baseDeps().config.AWS_CALL_TIMEOUT_MS) }));

/** Merchant passwords and webhook secrets; a key the directory does not know never reaches Secrets Manager (ADR 0025). */
export function buildMerchantSecrets(config: Config, clock: Clock, client: Deps['secretsClient'], db: Deps['db']): MerchantSecrets {
  const directory = new DynamoMerchantDirectory(db, config.TABLE_NAME);
  return new CachedMerchantSecrets(
    new SecretsManagerMerchantSecrets(client, config.MERCHANT_SECRET_PREFIX),
    clock,
    config.SECRET_CACHE_TTL_SECONDS * 1000,
    undefined,
    undefined,
    (merchantKey) => directory.exists(merchantKey),
  );
}

/** The stores and the merchants' secrets: what checks a merchant's signature or signs for it. */
export const merchantSecretDeps = part<StoreKeys | 'secretsClient' | 'secrets'>(() => {
  const stores = storeDeps();
  const { secretsClient } = secretsClientDeps();
  return { ...stores, secretsClient, secrets: buildMerchantSecrets(stores.config, stores.clock, secretsClient, stores.db) };
});
