import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createDocumentClient } from './adapters/dynamodb/client';
import { DynamoMerchantDirectory } from './adapters/dynamodb/merchant-directory';
import { DynamoMerchantRateLimiter } from './adapters/dynamodb/merchant-rate';
import { DynamoSearchLeases } from './adapters/dynamodb/search-leases';
import { configureCursorSeal, configureCursorSealFromSecret, resetCursorSeal } from './adapters/dynamodb/cursor';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { DynamoPaymentStore } from './adapters/dynamodb/payment-store';
import { DynamoTokenVault } from './adapters/dynamodb/token-vault';
import type { TokenVault } from './ports/tokens';
import { DynamoAuditLog } from './adapters/dynamodb/audit-log';
import { DynamoRequestKeys } from './adapters/dynamodb/request-keys';
import type { RequestKeys } from './ports/request-keys';
import type { AuditLog, OperatorAuthenticator, SearchLeases } from './ports/operators';
import type { Policy } from './use-cases/record-outcome';
import { CachedMerchantSecrets, SecretsManagerMerchantSecrets, createSecretsClient } from './adapters/secrets-manager/merchant-secrets';
import { secretsManagerOriginSecret, type CachedOriginSecret } from './adapters/secrets-manager/origin-secret';
import { provideOriginSecret } from './middleware/origin-guard';
import { SandboxAcquirer } from './adapters/sandbox-acquirer/sandbox-acquirer';
import { tracedAcquirer } from './adapters/tracing/remote-calls';
import { S2SCardAcquirer } from './adapters/s2s-card/s2s-card-acquirer';
import { S2SRecords } from './adapters/s2s-card/records';
import { s2sCardSettings } from './adapters/s2s-card/settings';
import type { S2SCardSettings } from './adapters/s2s-card/client';
import { readConfig, type Config } from './config';
import type { Acquirer } from './ports/acquirer';
import { systemClock, type Clock } from './ports/clock';
import { randomIds, type Ids } from './ports/ids';
import type { MerchantDirectory, MerchantRateLimiter, MerchantSecrets } from './ports/merchants';
import type { PaymentStore } from './ports/payments';

/** Everything a use case may need, built once per process from the configuration. */
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
  /** Each operator's running counts and exports, across instances (lambdas/use-cases/admin.ts boundedSearchWork). */
  readonly searchLeases: SearchLeases;
  readonly acquirer: Acquirer;
  readonly tokens: TokenVault;
  readonly policy: Policy;
  readonly audit: AuditLog;
  readonly requestKeys: RequestKeys;
  readonly operators: OperatorAuthenticator;
  /** The simulated acquirer's own pages (3-D Secure challenge, bank redirect) use it directly. */
  readonly sandbox: SandboxAcquirer;
  /** Behind CloudFront (ORIGIN_SECRET_ID): the header values every HTTP request must carry (lambdas/middleware/origin-guard.ts). */
  readonly originSecret?: CachedOriginSecret;
  /** The S2S CARD connector's parts its callback and redirect pages use; set when it is the acquirer. */
  readonly s2sCard?: { readonly settings: S2SCardSettings; readonly records: S2SRecords; readonly connector: S2SCardAcquirer };
}

export function buildDeps(config: Config, clock: Clock = systemClock, ids: Ids = randomIds, overrides: Partial<Deps> = {}): Deps {
  const db = createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT });
  const secretsClient = createSecretsClient(config.SECRETS_MANAGER_ENDPOINT);
  const sandbox = new SandboxAcquirer(db, config.TABLE_NAME);
  const directory = new DynamoMerchantDirectory(db, config.TABLE_NAME);
  // Never a key derived from names anyone can read: a function with neither setting seals no cursor.
  if (config.CURSOR_SECRET_ID) {
    const secretId = config.CURSOR_SECRET_ID;
    configureCursorSealFromSecret(
      async () => (await secretsClient.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString ?? '',
      config.SECRET_CACHE_TTL_SECONDS * 1000,
      () => clock.now().getTime(),
    );
  } else if (config.CURSOR_SECRET) configureCursorSeal(config.CURSOR_SECRET);
  else resetCursorSeal();
  // The stage's acquirer (config.ts refuses the sandbox on prod).
  const s2sParts = config.ACQUIRER === 's2s-card' ? { settings: s2sCardSettings(config, secretsClient, clock), records: new S2SRecords(db, config.TABLE_NAME) } : undefined;
  const s2sCard = s2sParts ? { ...s2sParts, connector: new S2SCardAcquirer(s2sParts.settings, s2sParts.records, { followUpWaitMs: config.S2S_CARD_FOLLOW_UP_WAIT_MS, clock }) } : undefined;
  const acquirer: Acquirer = s2sCard ? s2sCard.connector : sandbox;
  return {
    config,
    clock,
    ids,
    db,
    secretsClient,
    store: new DynamoPaymentStore(db, config.TABLE_NAME, { streamDelivery: config.CALLBACK_STREAM === '1' }),
    merchants: directory,
    // A key the directory does not know never reaches Secrets Manager (ADR 0025).
    secrets: new CachedMerchantSecrets(
      new SecretsManagerMerchantSecrets(secretsClient, config.MERCHANT_SECRET_PREFIX),
      clock,
      config.SECRET_CACHE_TTL_SECONDS * 1000,
      undefined,
      undefined,
      (merchantKey) => directory.exists(merchantKey),
    ),
    merchantLimits: new DynamoMerchantRateLimiter(db, config.TABLE_NAME, config.MERCHANT_REQUESTS_PER_SECOND),
    searchLeases: new DynamoSearchLeases(db, config.TABLE_NAME, config.OPERATOR_SEARCHES_AT_ONCE),
    // Each acquirer call is its own trace subsegment (on AWS; a pass-through elsewhere).
    acquirer: tracedAcquirer(acquirer),
    tokens: new DynamoTokenVault(db, config.TABLE_NAME),
    audit: new DynamoAuditLog(db, config.TABLE_NAME),
    requestKeys: new DynamoRequestKeys(db, config.TABLE_NAME),
    operators: noOperatorSignIn,
    policy: { authorizationValidityMs: config.AUTHORIZATION_VALIDITY_DAYS * 24 * 3600_000, reconcileAfterMs: config.RECONCILE_AFTER_SECONDS * 1000 },
    sandbox,
    ...(s2sCard ? { s2sCard } : {}),
    ...(config.ORIGIN_SECRET_ID ? { originSecret: secretsManagerOriginSecret(secretsClient, config.ORIGIN_SECRET_ID, clock, config.SECRET_CACHE_TTL_SECONDS * 1000) } : {}),
    ...overrides,
  };
}

/**
 * In the cloud operators sign in on Cognito's pages, never through a function (ADR 0019); the local
 * runner injects its own operator store (see local/backend.ts).
 */
const noOperatorSignIn: OperatorAuthenticator = { signIn: () => Promise.reject(new Error('operators sign in on the Cognito sign-in pages here')) };

let current: Deps | undefined;
// The origin check of every HTTP function (lambdas/middleware/origin-guard.ts) reads the secret these dependencies carry.
provideOriginSecret(() => deps().originSecret);

/** The process-wide dependencies; built on first use so a bad configuration fails at cold start. */
export function deps(): Deps {
  current ??= buildDeps(readConfig());
  return current;
}

/** Replaces the process-wide dependencies (the local runner and tests inject clock and ids here). */
export function setDeps(next: Deps | undefined): void {
  current = next;
}
