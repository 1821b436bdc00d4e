import { S2SCardAcquirer } from '../adapters/s2s-card/s2s-card-acquirer';
import { S2SRecords } from '../adapters/s2s-card/records';
import { s2sCardSettings } from '../adapters/s2s-card/settings';
import { DynamoAcquirerAccounts, cachedAccountReader } from '../adapters/dynamodb/acquirer-accounts';
import { buildAccountSecrets } from './accounts';
import type { AccountSecrets } from '../ports/acquirer-accounts';
import { SandboxAcquirer } from '../adapters/sandbox-acquirer/sandbox-acquirer';
import { tracedAcquirer } from '../adapters/tracing/remote-calls';
import type { Deps } from '../container';
import type { Acquirer } from '../ports/acquirer';
import { part } from './process';
import { merchantSecretDeps, secretsClientDeps } from './secrets';
import { sandboxDeps } from './sandbox';
import { baseDeps, storeDeps, type BaseKeys, type StoreKeys } from './stores';

export type AcquirerKeys = 'acquirer' | 'sandbox' | 's2sCard' | 'accountReader';

/*
 * The acquirer a function's bundle was built for. The stack's esbuild defines
 * `process.env.CHECKOUT_BUNDLED_ACQUIRER` as its stage's acquirer (lib/constructs/checkout-function.ts),
 * so each comparison below is a constant there and esbuild leaves the other acquirer's code out: a
 * prod bundle carries no sandbox, a sandbox stage's no S2S CARD connector. From the sources (the
 * local runner, the tests) it is unset and both are there. Read at each use, never copied: a copy
 * would not be a constant to esbuild.
 */

/** A bundle built for one acquirer refuses a configuration naming the other: the code is not there. */
function assertBundled(config: Deps['config']): void {
  const bundled = process.env.CHECKOUT_BUNDLED_ACQUIRER;
  if (bundled !== undefined && config.ACQUIRER !== bundled) {
    throw new Error(`ACQUIRER=${config.ACQUIRER}, but this function was bundled for ${bundled} only (its stage's acquirer)`);
  }
}

/** In a bundle without the sandbox (S2S CARD stages), what stands for it: nothing on such a stage asks it anything. */
const NO_SANDBOX = new Proxy({} as SandboxAcquirer, {
  get(_target, property) {
    if (property === 'then') return undefined;
    throw new Error(`the sandbox acquirer is not in this bundle (asked for ${String(property)})`);
  },
});

/** The stage's acquirer (config.ts refuses the sandbox on prod); the S2S CARD connector reads its credentials from Secrets Manager. */
export function buildAcquirer(
  base: Pick<Deps, BaseKeys>,
  secretsClient: Deps['secretsClient'],
  sandbox: SandboxAcquirer | undefined,
  // The whole set's, when it has one: a password rotated through it is seen at once by the connector in the same process.
  accountSecrets: AccountSecrets = buildAccountSecrets(base.config, base.clock, secretsClient),
): Pick<Deps, AcquirerKeys> {
  const { config, clock, db } = base;
  assertBundled(config);
  // The merchants' own accounts: the table and their secrets (docs/acquirer-accounts.md). The
  // connector and the checkout page (a linked merchant's Google Pay parameters) read the table
  // through one cache.
  const accountReader = cachedAccountReader(new DynamoAcquirerAccounts(db, config.TABLE_NAME), clock, config.SECRET_CACHE_TTL_SECONDS * 1000);
  const accounts = () => ({ accounts: accountReader, secrets: accountSecrets });
  let s2sCard: Deps['s2sCard'];
  // Inside an if of its own: on a sandbox stage's bundle the condition is a constant and the connector is left out.
  if (process.env.CHECKOUT_BUNDLED_ACQUIRER !== 'sandbox') {
    if (config.ACQUIRER === 's2s-card') {
      const settings = s2sCardSettings(config, secretsClient, clock, accounts());
      const records = new S2SRecords(db, config.TABLE_NAME);
      s2sCard = { settings, records, connector: new S2SCardAcquirer(settings, records, { followUpWaitMs: config.S2S_CARD_FOLLOW_UP_WAIT_MS, clock }) };
    }
  }
  const theSandbox = sandbox ?? (process.env.CHECKOUT_BUNDLED_ACQUIRER === 's2s-card' ? NO_SANDBOX : newSandbox(base));
  const acquirer: Acquirer = s2sCard ? s2sCard.connector : theSandbox;
  return {
    // Each acquirer call is its own trace subsegment (on AWS; a pass-through elsewhere).
    acquirer: tracedAcquirer(acquirer),
    sandbox: theSandbox,
    accountReader,
    ...(s2sCard ? { s2sCard } : {}),
  };
}

const newSandbox = (base: Pick<Deps, BaseKeys>): SandboxAcquirer => new SandboxAcquirer(base.db, base.config.TABLE_NAME, { clock: base.clock });

/** The stores and the stage's acquirer: an operator's money actions, the acquirer's callbacks, the jobs. */
export const acquirerDeps = part<StoreKeys | 'secretsClient' | AcquirerKeys>(() => {
  const { secretsClient } = secretsClientDeps();
  // An if with both branches (not an early return): esbuild drops the dead one, and what only it uses.
  if (process.env.CHECKOUT_BUNDLED_ACQUIRER === 's2s-card') {
    return { ...storeDeps(), secretsClient, ...buildAcquirer(baseDeps(), secretsClient, NO_SANDBOX) };
  } else {
    const { sandbox, ...stores } = sandboxDeps();
    return { ...stores, secretsClient, ...buildAcquirer(baseDeps(), secretsClient, sandbox) };
  }
});

/** Everything a merchant request or a checkout page may use: the stores, the merchants' secrets and the acquirer. */
export type RouteDeps = Omit<Deps, 'originSecret' | 'accountSecrets' | 'applePay'>;

export const routeDeps = part<Exclude<keyof Deps, 'originSecret' | 'accountSecrets' | 'applePay'>>(() => ({ ...merchantSecretDeps(), ...acquirerDeps() }));
