import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDocumentClient } from './adapters/dynamodb/client';
import { secretsManagerOriginSecret, type CachedOriginSecret } from './adapters/secrets-manager/origin-secret';
import { createSecretsClient } from './adapters/secrets-manager/merchant-secrets';
import type { TokenVault } from './ports/tokens';
import type { RequestKeys } from './ports/request-keys';
import type { AuditLog, OperatorAuthenticator, SearchLeases } from './ports/operators';
import type { Policy } from './use-cases/record-outcome';
import { provideOriginSecret } from './middleware/origin-guard';
import type { SandboxAcquirer } from './adapters/sandbox-acquirer/sandbox-acquirer';
import type { S2SCardAcquirer } from './adapters/s2s-card/s2s-card-acquirer';
import type { S2SRecords } from './adapters/s2s-card/records';
import type { S2SCardSettings } from './adapters/s2s-card/client';
import { readConfig, type Config } from './config';
import type { Acquirer } from './ports/acquirer';
import { systemClock, type Clock } from './ports/clock';
import { randomIds, type Ids } from './ports/ids';
import type { MerchantDirectory, MerchantRateLimiter, MerchantSecrets } from './ports/merchants';
import type { PaymentStore } from './ports/payments';
import type { DisputeLog, SettledDays } from './ports/disputes';
import type { AccountReader, AccountSecrets, AcquirerAccounts } from './ports/acquirer-accounts';
import { buildAccountSecrets } from './wiring/accounts';
import { buildApplePay } from './wiring/apple-pay';
import type { ApplePay } from './ports/apple-pay';
import { buildAcquirer } from './wiring/acquirer';
import { configureCursorKey } from './wiring/cursor-key';
import { injectedDeps, setDeps } from './wiring/process';
import { buildMerchantSecrets } from './wiring/secrets';
import { buildStores } from './wiring/stores';

export { setDeps } from './wiring/process';

/**
 * Everything a use case may need. A function builds only the parts it uses (lambdas/wiring/*.ts);
 * the local runner and the tests build the whole set here and inject it (setDeps).
 */
export interface Deps {
  readonly config: Config;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly db: DynamoDBDocumentClient;
  readonly secretsClient: SecretsManagerClient;
  readonly store: PaymentStore;
  readonly merchants: MerchantDirectory;
  readonly secrets: MerchantSecrets;
  /** Each merchant's requests per second, across instances (lambdas/middleware/merchant-gate.ts). */
  readonly merchantLimits: MerchantRateLimiter;
  /** Each operator's running counts and exports, across instances (lambdas/use-cases/admin/search.ts boundedSearchWork). */
  readonly searchLeases: SearchLeases;
  readonly acquirer: Acquirer;
  readonly tokens: TokenVault;
  readonly policy: Policy;
  readonly audit: AuditLog;
  readonly requestKeys: RequestKeys;
  readonly operators: OperatorAuthenticator;
  /** The chargebacks acquirers reported, by month, and each merchant's settled payments of its closed days as counted (the chargeback rate). */
  readonly disputes: DisputeLog;
  readonly settledDays: SettledDays;
  /** The merchants' acquirer accounts (docs/acquirer-accounts.md) and their passwords. */
  readonly accounts: AcquirerAccounts;
  readonly accountSecrets: AccountSecrets;
  /** The accounts as the connector and the checkout page read them: through one cache per instance. */
  readonly accountReader: AccountReader;
  /** The simulated acquirer's own pages (3-D Secure challenge, bank redirect) use it directly. */
  readonly sandbox: SandboxAcquirer;
  /** Apple Pay's merchant identities and domain-association file (Secrets Manager), and the call to Apple's validation URL. */
  readonly applePay: ApplePay;
  /** Behind CloudFront (ORIGIN_SECRET_ID): the header values every HTTP request must carry (lambdas/middleware/origin-guard.ts). */
  readonly originSecret?: CachedOriginSecret;
  /** The S2S CARD connector's parts its callback and redirect pages use; set when it is the acquirer. */
  readonly s2sCard?: { readonly settings: S2SCardSettings; readonly records: S2SRecords; readonly connector: S2SCardAcquirer };
}

/** The whole set, from the same builders the functions' parts use. */
export function buildDeps(config: Config, clock: Clock = systemClock, ids: Ids = randomIds, overrides: Partial<Deps> = {}): Deps {
  const db = createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT, callTimeoutMs: config.AWS_CALL_TIMEOUT_MS });
  const secretsClient = createSecretsClient(config.SECRETS_MANAGER_ENDPOINT, config.AWS_CALL_TIMEOUT_MS);
  const base = { config, clock, ids, db };
  configureCursorKey(config, clock, () => secretsClient);
  const stores = buildStores(base);
  const accountSecrets = buildAccountSecrets(config, clock, secretsClient);
  return {
    ...base,
    secretsClient,
    ...stores,
    secrets: buildMerchantSecrets(config, clock, secretsClient, db),
    accountSecrets,
    applePay: buildApplePay(config, clock, secretsClient),
    ...buildAcquirer(base, secretsClient, undefined, accountSecrets),
    ...(config.ORIGIN_SECRET_ID ? { originSecret: secretsManagerOriginSecret(secretsClient, config.ORIGIN_SECRET_ID, clock, config.SECRET_CACHE_TTL_SECONDS * 1000) } : {}),
    ...overrides,
  };
}

// The origin check (lambdas/middleware/origin-guard.ts) reads the secret of the whole set; on AWS
// each HTTP function of a stage behind CloudFront gets lambdas/wiring/origin-secret.ts instead.
provideOriginSecret(() => deps().originSecret);

/** The whole set: the one injected, else built from the configuration (for code that runs outside a function). */
export function deps(): Deps {
  const current = injectedDeps();
  if (current) return current;
  const built = buildDeps(readConfig());
  setDeps(built);
  return built;
}
