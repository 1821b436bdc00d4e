import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { traced } from '../../observability/telemetry';
import type { Clock } from '../../ports/clock';
import type { MerchantSecrets } from '../../ports/merchants';

/** Merchant keys we will ever look up; anything else is unknown without a network call. */
export const MERCHANT_KEY_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

export function createSecretsClient(endpoint?: string): SecretsManagerClient {
  // Traced on AWS; the secret values are in responses, which the tracer does not record.
  return traced(new SecretsManagerClient({
    maxAttempts: 3,
    ...(endpoint
      ? { endpoint, region: process.env.AWS_REGION ?? 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  }));
}

/** What a merchant's secret holds. */
interface StoredSecret {
  readonly password?: string;
  /** Signs callbacks (X-Checkout-Signature); never sent to a browser. */
  readonly webhookSecret?: string;
  /** The secret before the last rotation, and until when it still signs. */
  readonly previousWebhookSecret?: string;
  readonly previousUntil?: string;
}

/**
 * One secret per merchant, named <prefix><merchant_key>, holding
 * {"password", "webhookSecret", "previousWebhookSecret"?, "previousUntil"?}.
 */
export class SecretsManagerMerchantSecrets implements MerchantSecrets {
  constructor(
    private readonly client: SecretsManagerClient,
    private readonly prefix: string,
  ) {}

  private async read(merchantKey: string): Promise<StoredSecret | undefined> {
    if (!MERCHANT_KEY_PATTERN.test(merchantKey)) return undefined;
    try {
      const out = await this.client.send(new GetSecretValueCommand({ SecretId: this.prefix + merchantKey }));
      return out.SecretString ? (JSON.parse(out.SecretString) as StoredSecret) : {};
    } catch (e) {
      if ((e as Error).name === 'ResourceNotFoundException') return undefined;
      throw e;
    }
  }

  async passwordOf(merchantKey: string): Promise<string | undefined> {
    const value = await this.read(merchantKey);
    return typeof value?.password === 'string' && value.password ? value.password : undefined;
  }

  async webhookSecretsOf(merchantKey: string, now: Date): Promise<readonly string[]> {
    const value = await this.read(merchantKey);
    if (!value?.webhookSecret) return [];
    const previousLive = value.previousWebhookSecret && value.previousUntil && Date.parse(value.previousUntil) > now.getTime();
    return previousLive ? [value.webhookSecret, value.previousWebhookSecret!] : [value.webhookSecret];
  }

  async putWebhookSecret(merchantKey: string, secret: string, previousUntil: Date): Promise<void> {
    const current = (await this.read(merchantKey)) ?? {};
    await this.write(merchantKey, {
      ...current,
      webhookSecret: secret,
      ...(current.webhookSecret ? { previousWebhookSecret: current.webhookSecret, previousUntil: previousUntil.toISOString() } : {}),
    });
  }

  async put(merchantKey: string, password: string): Promise<void> {
    await this.write(merchantKey, { ...((await this.read(merchantKey)) ?? {}), password });
  }

  private async write(merchantKey: string, value: StoredSecret): Promise<void> {
    const SecretString = JSON.stringify(value);
    const SecretId = this.prefix + merchantKey;
    try {
      await this.client.send(new PutSecretValueCommand({ SecretId, SecretString }));
    } catch (e) {
      if ((e as Error).name !== 'ResourceNotFoundException') throw e;
      await this.client.send(
        new CreateSecretCommand({ Name: SecretId, SecretString, Description: `Signing password of merchant ${merchantKey}` }),
      );
    }
  }
}

/** How long a container signs callbacks with the webhook secrets it read. */
export const WEBHOOK_SECRET_TTL_MS = 60_000;

/**
 * An in-memory cache in front of the secret store, so a warm request makes no Secrets Manager call.
 * Bounded in size; unknown keys are remembered briefly so random keys cannot flood the store.
 */
export class CachedMerchantSecrets implements MerchantSecrets {
  private readonly entries = new Map<string, { password: string | undefined; until: number }>();
  private readonly refreshedAt = new Map<string, number>();
  private readonly refreshIntervalMs = 30_000;
  private readonly webhookEntries = new Map<string, { secrets: readonly string[]; until: number; rotatedAt: string | undefined }>();

  constructor(
    private readonly inner: MerchantSecrets,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly negativeTtlMs = Math.min(ttlMs, 60_000),
    private readonly maxEntries = 1000,
  ) {}

  async passwordOf(merchantKey: string): Promise<string | undefined> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(merchantKey);
    if (hit && hit.until > now) return hit.password;
    const password = await this.inner.passwordOf(merchantKey);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(merchantKey);
    this.entries.set(merchantKey, { password, until: now + (password === undefined ? this.negativeTtlMs : this.ttlMs) });
    return password;
  }

  /** At most one refresh per merchant per interval, so bad hashes cannot flood the secret store. */
  async refresh(merchantKey: string): Promise<string | undefined> {
    const now = this.clock.now().getTime();
    const last = this.refreshedAt.get(merchantKey) ?? -Infinity;
    if (now - last < this.refreshIntervalMs) return this.entries.get(merchantKey)?.password;
    if (this.refreshedAt.size >= this.maxEntries) this.refreshedAt.clear();
    this.refreshedAt.set(merchantKey, now);
    this.entries.delete(merchantKey);
    return this.passwordOf(merchantKey);
  }

  async put(merchantKey: string, password: string): Promise<void> {
    await this.inner.put(merchantKey, password);
    this.entries.delete(merchantKey);
  }

  /**
   * Cached for at most WEBHOOK_SECRET_TTL_MS (else every callback would cost a Secrets Manager call),
   * and only under the rotation the caller read with the merchant (`rotatedAt`): a secret rotated
   * in another function signs this container's next callback, as its new rotation time misses the
   * cache. A previous one may sign beside the current one a minute past its end, which no receiver minds.
   */
  async webhookSecretsOf(merchantKey: string, now: Date, rotatedAt?: string): Promise<readonly string[]> {
    const at = this.clock.now().getTime();
    const hit = this.webhookEntries.get(merchantKey);
    if (hit && hit.until > at && hit.rotatedAt === rotatedAt) return hit.secrets;
    const secrets = await this.inner.webhookSecretsOf(merchantKey, now, rotatedAt);
    if (this.webhookEntries.size >= this.maxEntries) {
      const oldest = this.webhookEntries.keys().next().value;
      if (oldest !== undefined) this.webhookEntries.delete(oldest);
    }
    this.webhookEntries.delete(merchantKey);
    this.webhookEntries.set(merchantKey, { secrets, until: at + Math.min(this.ttlMs, WEBHOOK_SECRET_TTL_MS), rotatedAt });
    return secrets;
  }

  async putWebhookSecret(merchantKey: string, secret: string, previousUntil: Date): Promise<void> {
    await this.inner.putWebhookSecret(merchantKey, secret, previousUntil);
    this.webhookEntries.delete(merchantKey);
  }
}
