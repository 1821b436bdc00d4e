import { describeRepairs, repairIndexes } from './index-repair';
import { alignIndexLayout, describeLayoutChange } from './index-layout';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHmac, randomBytes } from 'node:crypto';
import { callbackParts, type DepsWithCallbacks } from '../lambdas/callback-container';
import { buildDeps, type Deps } from '../lambdas/container';
import type { Config } from '../lambdas/config';
import type { Clock } from '../lambdas/ports/clock';
import type { Ids } from '../lambdas/ports/ids';
import { LocalOperatorAuthenticator } from '../lambdas/adapters/local/operator-auth';
import { createTableInput } from '../lib/table-schema';
import { describeMigration, migrateIndexKeys } from '../lambdas/adapters/dynamodb/index-migration';
import { createDocumentClient } from '../lambdas/adapters/dynamodb/client';
import { LOCAL_SHARDS } from '../lambdas/adapters/dynamodb/keys';
import { startSecretsServer } from './secrets-server';
import { ACQUIRER_TIMEOUTS, acquirerTimeoutEnvironment } from '../lib/time-budget';

// dynalite ships without types; its factory returns an http.Server whose close() also closes LevelDB.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: Record<string, unknown>) => Server;

export const LOCAL_TABLE_NAME = 'checkout-local';
export const LOCAL_SECRET_PREFIX = 'checkout/local/merchants/';
/** The acquirer accounts' passwords in the local secret store. */
export const LOCAL_ACCOUNT_SECRET_PREFIX = 'checkout/local/acquirer-accounts/';
/** Apple Pay's certificates and domain-association file in the local secret store (docs/wallets.md). */
export const LOCAL_APPLE_PAY_SECRET_PREFIX = 'checkout/local/apple-pay/';
/** The local stage's own Apple Pay merchant identifier (a placeholder: the local runner has no certificate from Apple). */
export const LOCAL_APPLE_PAY_MERCHANT_ID = 'merchant.local.checkout';

export interface LocalBackend {
  readonly dynamodbEndpoint: string;
  readonly secretsEndpoint: string;
  readonly tableName: string;
  /** Signs and verifies the local operators' tokens (the local stand-in for Cognito's keys). */
  readonly operatorKey: Uint8Array;
  /** What was repaired in the indexes at start (after a crash), if anything. */
  readonly indexRepair?: string;
  /** The indexes added or dropped at start (a data directory of an older version), if any. */
  readonly indexLayout?: string;
  /** What the start migrated to the sharded index keys (an older data directory), if anything. */
  readonly indexMigration?: string;
  close(): Promise<void>;
}

const listen = (server: Server) =>
  new Promise<string>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    });
  });

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/**
 * The local stand-ins for DynamoDB (dynalite, a DynamoDB-compatible engine over HTTP) and Secrets
 * Manager. With a data directory both persist there; without one they live in memory (tests).
 */
export async function startLocalBackend(options: { dataDir?: string; tableName?: string } = {}): Promise<LocalBackend> {
  const tableName = options.tableName ?? LOCAL_TABLE_NAME;
  if (options.dataDir) {
    // Only this user: the data holds merchants' passwords and the announcement of local endpoints.
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(options.dataDir, 0o700);
  }
  // A data directory of an older version gets this version's indexes (the engine cannot add or drop
  // one through its API); then, as a process killed mid-write can leave the indexes out of step with
  // the items, they are rebuilt where they differ.
  const enginePath = options.dataDir ? join(options.dataDir, 'dynamodb') : undefined;
  const indexLayout = enginePath && existsSync(enginePath) ? describeLayoutChange(await alignIndexLayout(enginePath, tableName)) : undefined;
  const indexRepair = enginePath && existsSync(enginePath) ? describeRepairs(await repairIndexes(enginePath, tableName)) : undefined;
  const db = dynalite({
    ...(options.dataDir ? { path: join(options.dataDir, 'dynamodb') } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  const dynamodbEndpoint = await listen(db);
  const secrets = await startSecretsServer(options.dataDir ? join(options.dataDir, 'secrets.json') : undefined);
  await ensureTable(dynamodbEndpoint, tableName);
  // A data directory of the layout before the sharded indexes: its items get the new keys. One
  // written under other shard counts than the local table's (LOCAL_SHARDS; the file names the counts
  // it was last made to match) has its entries moved to their shards under these, once.
  const migrationDb = createDocumentClient({ endpoint: dynamodbEndpoint });
  const countsFile = options.dataDir ? join(options.dataDir, 'shard-counts.json') : undefined;
  const reshard = countsFile !== undefined && (!existsSync(countsFile) || readFileSync(countsFile, 'utf8') !== JSON.stringify(LOCAL_SHARDS));
  const indexMigration = describeMigration(await migrateIndexKeys(migrationDb, tableName, LOCAL_SHARDS, { reshard }).finally(() => migrationDb.destroy()));
  if (countsFile && reshard) writeFileSync(countsFile, JSON.stringify(LOCAL_SHARDS), { mode: 0o600 });
  return {
    dynamodbEndpoint,
    secretsEndpoint: secrets.endpoint,
    tableName,
    operatorKey: operatorKeyOf(options.dataDir),
    ...(indexRepair ? { indexRepair } : {}),
    ...(indexLayout ? { indexLayout } : {}),
    ...(indexMigration ? { indexMigration } : {}),
    close: async () => {
      await Promise.all([closeServer(db), closeServer(secrets.server)]);
    },
  };
}

/** A random key per data directory (kept there), or per process in memory. */
function operatorKeyOf(dataDir: string | undefined): Uint8Array {
  if (!dataDir) return randomBytes(32);
  const file = join(dataDir, 'operator-key');
  if (existsSync(file)) return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  const fresh = randomBytes(32);
  writeFileSync(file, fresh.toString('hex'), { mode: 0o600 });
  return fresh;
}

/** The handlers' dependencies on this backend, with the local operator store in place of Cognito. */
export function localDeps(backend: LocalBackend, config: Config, clock?: Clock, ids?: Ids): DepsWithCallbacks {
  const deps = buildDeps(config, clock, ids);
  return { ...deps, ...callbackParts(config, deps.db), operators: new LocalOperatorAuthenticator(deps.db, backend.tableName, backend.operatorKey, deps.clock) };
}

async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    // A table there already has this version's indexes: alignIndexLayout gave them to it before the
    // engine started (an UpdateTable that creates or deletes an index is answered and ignored by it).
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (e) {
    if ((e as Error).name !== 'ResourceNotFoundException') throw e;
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    // dynalite makes a new table ACTIVE a tick later; a write before that is "not found".
    for (let i = 0; i < 100; i++) {
      const created = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (created.Table?.TableStatus === 'ACTIVE') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    client.destroy();
  }
}

/** The environment the handlers read, pointing at this backend. */
export function backendEnvironment(backend: LocalBackend, extra: Record<string, string> = {}): Record<string, string> {
  return {
    TABLE_NAME: backend.tableName,
    MERCHANT_SECRET_PREFIX: LOCAL_SECRET_PREFIX,
    ACQUIRER_ACCOUNT_SECRET_PREFIX: LOCAL_ACCOUNT_SECRET_PREFIX,
    APPLE_PAY_SECRET_PREFIX: LOCAL_APPLE_PAY_SECRET_PREFIX,
    APPLE_PAY_MERCHANT_ID: LOCAL_APPLE_PAY_MERCHANT_ID,
    STAGE: 'local',
    TABLE_SHARDS: 'local',
    DYNAMODB_ENDPOINT: backend.dynamodbEndpoint,
    SECRETS_MANAGER_ENDPOINT: backend.secretsEndpoint,
    AWS_REGION: 'local',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // Page cursors are sealed with a key of the data directory (its operator key, derived apart).
    CURSOR_SECRET: createHmac('sha256', backend.operatorKey).update('cursor secret').digest('hex'),
    // The acquirer timeouts the stack configures (lib/time-budget.ts); `extra` may set others, and
    // the runner then derives its route timeouts from those (local/http-server.ts runnerTimeouts).
    ...acquirerTimeoutEnvironment(ACQUIRER_TIMEOUTS),
    // The engine runs in this process: an answer it is late with is the machine's load, not a lost
    // connection, and a try given up on it would only be tried again (AWS: 2 s a try, ADR 0042).
    AWS_CALL_TIMEOUT_MS: '10000',
    ...extra,
  };
}
