import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Config } from '../../config';
import type { Clock } from '../../ports/clock';
import type { S2SCardCredentials, S2SCardSettings } from './client';

/**
 * The connector's settings from the configuration: the URL and timeout from the environment, the
 * credentials from a Secrets Manager secret `{"clientKey","password"}` (AWS) or from the
 * environment (the local runner). The secret is cached for SECRET_CACHE_TTL_SECONDS, so a rotation
 * is picked up without a deploy (docs/operations.md, "Rotating secrets").
 */
export function s2sCardSettings(config: Config, secrets: SecretsManagerClient, clock: Clock): S2SCardSettings {
  if (!config.S2S_CARD_URL) throw new Error('S2S_CARD_URL is not set');
  const url = config.S2S_CARD_URL;
  const fromEnv =
    config.S2S_CARD_CLIENT_KEY !== undefined && config.S2S_CARD_PASSWORD !== undefined ? { clientKey: config.S2S_CARD_CLIENT_KEY, password: config.S2S_CARD_PASSWORD } : undefined;
  let cached: { value: S2SCardCredentials; until: number } | undefined;
  const ttlMs = config.SECRET_CACHE_TTL_SECONDS * 1000;
  const credentials = async (): Promise<S2SCardCredentials> => {
    if (fromEnv) return fromEnv;
    const now = clock.now().getTime();
    if (cached && cached.until > now) return cached.value;
    const out = await secrets.send(new GetSecretValueCommand({ SecretId: config.S2S_CARD_SECRET_ID }));
    const value = parseCredentials(out.SecretString);
    cached = { value, until: now + ttlMs };
    return value;
  };
  return { url, timeoutMs: config.S2S_CARD_TIMEOUT_MS, credentials };
}

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
