import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { configureCursorSeal, configureCursorSealFromSecret, resetCursorSeal } from '../adapters/dynamodb/cursor';
import type { Config } from '../config';
import type { Deps } from '../container';
import type { Clock } from '../ports/clock';
import { part } from './process';
import { secretsClientDeps } from './secrets';
import { storeDeps, type StoreKeys } from './stores';

/**
 * Where the portal's page cursors get their key: the stack's generated secret (CURSOR_SECRET_ID,
 * given only to the functions that seal cursors), else the local runner's CURSOR_SECRET. Never a
 * key derived from names anyone can read: a function with neither setting seals no cursor.
 */
export function configureCursorKey(config: Config, clock: Clock, secretsClient: () => Deps['secretsClient']): void {
  if (config.CURSOR_SECRET_ID) {
    const secretId = config.CURSOR_SECRET_ID;
    configureCursorSealFromSecret(
      async () => (await secretsClient().send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString ?? '',
      config.SECRET_CACHE_TTL_SECONDS * 1000,
      () => clock.now().getTime(),
    );
  } else if (config.CURSOR_SECRET) configureCursorSeal(config.CURSOR_SECRET);
  else resetCursorSeal();
}

/** The stores, with the cursor key configured: the operator routes that page through searches. */
export const cursorDeps = part<StoreKeys>(() => {
  // Built only without an injected set, which configured its key itself (lambdas/container.ts buildDeps).
  const stores = storeDeps();
  configureCursorKey(stores.config, stores.clock, () => secretsClientDeps().secretsClient);
  return stores;
});
