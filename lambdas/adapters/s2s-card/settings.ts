import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Config } from '../../config';
import { STAGE_ACCOUNT } from '../../domain/acquirer-account';
import type { AccountReader, AccountSecrets } from '../../ports/acquirer-accounts';
import type { Clock } from '../../ports/clock';
import type { S2SCardCredentials, S2SCardSettings, S2SGatewayAccount } from './client';

/**
 * The connector's settings: its timeout, and the gateway accounts it sends through. The stage's own
 * account (a merchant linked to none) comes from the configuration: the URL from the environment,
 * the credentials from a Secrets Manager secret `{"clientKey","password"}` (AWS) or from the
 * environment (the local runner). A merchant's own account (docs/acquirer-accounts.md) from the
 * table (through the reader's cache, which the checkout page shares) and its password from Secrets
 * Manager. Each is cached for SECRET_CACHE_TTL_SECONDS, so a rotation is picked up without a deploy
 * (docs/operations.md, "Rotating secrets").
 */
export function s2sCardSettings(config: Config, secrets: SecretsManagerClient, clock: Clock, accounts?: { readonly accounts: AccountReader; readonly secrets: AccountSecrets }): S2SCardSettings {
  if (!config.S2S_CARD_URL) throw new Error('S2S_CARD_URL is not set');
  const url = config.S2S_CARD_URL;
  const fromEnv =
    config.S2S_CARD_CLIENT_KEY !== undefined && config.S2S_CARD_PASSWORD !== undefined ? { clientKey: config.S2S_CARD_CLIENT_KEY, password: config.S2S_CARD_PASSWORD } : undefined;
  const ttlMs = config.SECRET_CACHE_TTL_SECONDS * 1000;
  // A read past the cache is honoured once per REFRESH_AT_MOST_MS per account: forged callbacks
  // (whose hash never matches) cannot turn into a Secrets Manager call each.
  const refreshed = new Map<string, number>();
  const mayRefresh = (accountId: string, now: number): boolean => {
    if (now - (refreshed.get(accountId) ?? -Infinity) < REFRESH_AT_MOST_MS) return false;
    refreshed.set(accountId, now);
    return true;
  };
  let cached: { value: S2SCardCredentials; until: number } | undefined;
  const stage = async (freshAsked: boolean): Promise<S2SGatewayAccount> => {
    if (fromEnv) return { accountId: STAGE_ACCOUNT, url, ...fromEnv };
    const now = clock.now().getTime();
    const fresh = freshAsked && mayRefresh(STAGE_ACCOUNT, now);
    if (!fresh && cached && cached.until > now) return { accountId: STAGE_ACCOUNT, url, ...cached.value };
    const out = await secrets.send(new GetSecretValueCommand({ SecretId: config.S2S_CARD_SECRET_ID }));
    const value = parseCredentials(out.SecretString);
    cached = { value, until: now + ttlMs };
    return { accountId: STAGE_ACCOUNT, url, ...value };
  };
  const merchants = async (accountId: string, freshAsked: boolean): Promise<S2SGatewayAccount> => {
    if (!accounts) throw new Error(`acquirer account ${accountId}: accounts are not configured here`);
    const fresh = freshAsked && mayRefresh(accountId, clock.now().getTime());
    const account = await accounts.accounts.find(accountId, fresh);
    if (!account) throw new Error(`acquirer account ${accountId} does not exist`);
    const password = await accounts.secrets.passwordOf(accountId, fresh);
    if (!password) throw new Error(`acquirer account ${accountId} has no password`);
    return { accountId, url: account.gatewayUrl, clientKey: account.clientKey, password, currencies: account.currencies };
  };
  return {
    timeoutMs: config.S2S_CARD_TIMEOUT_MS,
    account: (accountId, fresh = false) => (!accountId || accountId === STAGE_ACCOUNT ? stage(fresh) : merchants(accountId, fresh)),
  };
}

/** The least time between two reads of one account's password past the cache. */
export const REFRESH_AT_MOST_MS = 10_000;

/** The secret's value; an unset or half-set secret fails loudly (never a request with empty credentials). */
export function parseCredentials(text: string | undefined): S2SCardCredentials {
  let v: { clientKey?: unknown; password?: unknown } = {};
  try {
    v = JSON.parse(text ?? '{}') as typeof v;
  } catch {
    // reported below
  }
  if (typeof v.clientKey !== 'string' || !v.clientKey || typeof v.password !== 'string' || !v.password) {
    throw new Error('The S2S CARD secret must hold {"clientKey": "...", "password": "..."} (docs/operations.md)');
  }
  return { clientKey: v.clientKey, password: v.password };
}

/** Settings with one account, the stage's own, given as values (the certification script, the connector's own tests). */
export const singleAccountSettings = (account: { readonly url: string; readonly clientKey: string; readonly password: string }, timeoutMs: number): S2SCardSettings => ({
  timeoutMs,
  account: async (accountId) => {
    if (accountId && accountId !== STAGE_ACCOUNT) throw new Error(`acquirer account ${accountId} does not exist`);
    return { accountId: STAGE_ACCOUNT, ...account };
  },
});
