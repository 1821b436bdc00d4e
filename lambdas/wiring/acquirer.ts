import { S2SCardAcquirer } from '../adapters/s2s-card/s2s-card-acquirer';
import { S2SRecords } from '../adapters/s2s-card/records';
import { s2sCardSettings } from '../adapters/s2s-card/settings';
import { DynamoAcquirerAccounts } from '../adapters/dynamodb/acquirer-accounts';
import { buildAccountSecrets } from './accounts';
import type { AccountSecrets } from '../ports/acquirer-accounts';
import { SandboxAcquirer } from '../adapters/sandbox-acquirer/sandbox-acquirer';
import { tracedAcquirer } from '../adapters/tracing/remote-calls';
import type { Deps } from '../container';
import type { Acquirer } from '../ports/acquirer';
import { part } from './process';
import { merchantSecretDeps, secretsClientDeps } from './secrets';
import { sandboxDeps } from './sandbox';
import { baseDeps, type BaseKeys, type StoreKeys } from './stores';

export type AcquirerKeys = 'acquirer' | 'sandbox' | 's2sCard';

/** The stage's acquirer (config.ts refuses the sandbox on prod); the S2S CARD connector reads its credentials from Secrets Manager. */
export function buildAcquirer(
  base: Pick<Deps, BaseKeys>,
  secretsClient: Deps['secretsClient'],
  sandbox: SandboxAcquirer = new SandboxAcquirer(base.db, base.config.TABLE_NAME, { clock: base.clock }),
  // The whole set's, when it has one: a password rotated through it is seen at once by the connector in the same process.
  accountSecrets: AccountSecrets = buildAccountSecrets(base.config, base.clock, secretsClient),
): Pick<Deps, AcquirerKeys> {
  const { config, clock, db } = base;
  // The merchants' own accounts: the table and their secrets (docs/acquirer-accounts.md).
  const accounts = () => ({ accounts: new DynamoAcquirerAccounts(db, config.TABLE_NAME), secrets: accountSecrets });
  const s2sParts = config.ACQUIRER === 's2s-card' ? { settings: s2sCardSettings(config, secretsClient, clock, accounts()), records: new S2SRecords(db, config.TABLE_NAME) } : undefined;
  const s2sCard = s2sParts ? { ...s2sParts, connector: new S2SCardAcquirer(s2sParts.settings, s2sParts.records, { followUpWaitMs: config.S2S_CARD_FOLLOW_UP_WAIT_MS, clock }) } : undefined;
  const acquirer: Acquirer = s2sCard ? s2sCard.connector : sandbox;
  return {
    // Each acquirer call is its own trace subsegment (on AWS; a pass-through elsewhere).
    acquirer: tracedAcquirer(acquirer),
    sandbox,
    ...(s2sCard ? { s2sCard } : {}),
  };
}

/** The stores and the stage's acquirer: an operator's money actions, the acquirer's callbacks, the jobs. */
export const acquirerDeps = part<StoreKeys | 'secretsClient' | AcquirerKeys>(() => {
  const { sandbox, ...stores } = sandboxDeps();
  const { secretsClient } = secretsClientDeps();
  return { ...stores, secretsClient, ...buildAcquirer(baseDeps(), secretsClient, sandbox) };
});

/** Everything a merchant request or a checkout page may use: the stores, the merchants' secrets and the acquirer. */
export type RouteDeps = Omit<Deps, 'originSecret' | 'accountSecrets'>;

export const routeDeps = part<Exclude<keyof Deps, 'originSecret' | 'accountSecrets'>>(() => ({ ...merchantSecretDeps(), ...acquirerDeps() }));
