import { SecretsManagerAccountSecrets } from '../adapters/secrets-manager/account-secrets';
import type { Config } from '../config';
import type { Deps } from '../container';
import type { AccountSecrets } from '../ports/acquirer-accounts';
import type { Clock } from '../ports/clock';
import { part } from './process';
import { secretsClientDeps } from './secrets';
import { storeDeps, type StoreKeys } from './stores';

/** The acquirer accounts' passwords in Secrets Manager (ACQUIRER_ACCOUNT_SECRET_PREFIX). */
export const buildAccountSecrets = (config: Config, clock: Clock, client: Deps['secretsClient']): AccountSecrets =>
  new SecretsManagerAccountSecrets(client, config.ACQUIRER_ACCOUNT_SECRET_PREFIX, clock, config.SECRET_CACHE_TTL_SECONDS * 1000);

/** The stores and the accounts' passwords: the portal's account administration. */
export const accountAdminDeps = part<StoreKeys | 'secretsClient' | 'accountSecrets'>(() => {
  const stores = storeDeps();
  const { secretsClient } = secretsClientDeps();
  return { ...stores, secretsClient, accountSecrets: buildAccountSecrets(stores.config, stores.clock, secretsClient) };
});
