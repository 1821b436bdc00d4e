import { createDocumentClient } from '../adapters/dynamodb/client';
import { DynamoAuditLog } from '../adapters/dynamodb/audit-log';
import { DynamoDisputeLog } from '../adapters/dynamodb/disputes';
import { DynamoAcquirerAccounts } from '../adapters/dynamodb/acquirer-accounts';
import { DynamoMerchantDirectory } from '../adapters/dynamodb/merchant-directory';
import { DynamoMerchantRateLimiter } from '../adapters/dynamodb/merchant-rate';
import { DynamoPaymentStore } from '../adapters/dynamodb/payment-store';
import { shardCountsOf } from '../adapters/dynamodb/keys';
import { DynamoRequestKeys } from '../adapters/dynamodb/request-keys';
import { DynamoSearchLeases } from '../adapters/dynamodb/search-leases';
import { DynamoSettledDays } from '../adapters/dynamodb/settled-days';
import { DynamoTokenVault } from '../adapters/dynamodb/token-vault';
import { readConfig, type Config } from '../config';
import type { Deps } from '../container';
import { systemClock } from '../ports/clock';
import { randomIds } from '../ports/ids';
import type { OperatorAuthenticator } from '../ports/operators';
import { part } from './process';

/** What every function has: its configuration, clock, ids and the table's client. */
export type BaseKeys = 'config' | 'clock' | 'ids' | 'db';
/** The table's stores: DynamoDB only, no secret and no acquirer. */
export type StoreKeys = BaseKeys | 'store' | 'merchants' | 'merchantLimits' | 'searchLeases' | 'tokens' | 'policy' | 'audit' | 'requestKeys' | 'operators' | 'disputes' | 'settledDays' | 'accounts';

export const baseDeps = part<BaseKeys>(() => {
  const config = readConfig();
  return { config, clock: systemClock, ids: randomIds, db: createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT, callTimeoutMs: config.AWS_CALL_TIMEOUT_MS }) };
});

/**
 * In the cloud operators sign in on Cognito's pages, never through a function (ADR 0019); the local
 * runner injects its own operator store (see local/backend.ts).
 */
const noOperatorSignIn: OperatorAuthenticator = {
  signIn: () => Promise.reject(new Error('operators sign in on the Cognito sign-in pages here')),
  countUnknownNameFailure: () => Promise.reject(new Error('operators sign in on the Cognito sign-in pages here')),
};

export function buildStores(base: Pick<Deps, BaseKeys>): Omit<Pick<Deps, StoreKeys>, BaseKeys> {
  const { config, db } = base;
  const table = config.TABLE_NAME;
  return {
    store: new DynamoPaymentStore(db, table, { streamDelivery: config.CALLBACK_STREAM === '1', shards: shardCountsOf(config.TABLE_SHARDS) }),
    settledDays: new DynamoSettledDays(db, table),
    disputes: new DynamoDisputeLog(db, table),
    accounts: new DynamoAcquirerAccounts(db, table),
    merchants: new DynamoMerchantDirectory(db, table),
    merchantLimits: new DynamoMerchantRateLimiter(db, table, config.MERCHANT_REQUESTS_PER_SECOND),
    searchLeases: new DynamoSearchLeases(db, table, config.OPERATOR_SEARCHES_AT_ONCE),
    tokens: new DynamoTokenVault(db, table),
    audit: new DynamoAuditLog(db, table),
    requestKeys: new DynamoRequestKeys(db, table),
    operators: noOperatorSignIn,
    policy: policyOf(config),
  };
}

const policyOf = (config: Config): Deps['policy'] => ({
  authorizationValidityMs: config.AUTHORIZATION_VALIDITY_DAYS * 24 * 3600_000,
  reconcileAfterMs: config.RECONCILE_AFTER_SECONDS * 1000,
  retryLaterMs: config.RECONCILE_RETRY_SECONDS * 1000,
  disputeChecks: config.ACQUIRER !== 'sandbox',
});

export const storeDeps = part<StoreKeys>(() => {
  const base = baseDeps();
  return { ...base, ...buildStores(base) };
});
