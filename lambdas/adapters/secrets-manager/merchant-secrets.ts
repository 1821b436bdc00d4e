import { boundedRequests, callTimeouts } from '../aws/request-timeouts';
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

export function createSecretsClient(endpoint?: string, callTimeoutMs?: number): SecretsManagerClient {
  // Traced on AWS; the secret values are in responses, which the tracer does not record.
  return traced(new SecretsManagerClient({
    maxAttempts: 3,
    requestHandler: boundedRequests(callTimeouts(callTimeoutMs)),
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
  /** The signing password before the last rotation, and until when requests signed with it are accepted. */
  readonly previousPassword?: string;
  readonly previousPasswordUntil?: string;
}

/** The passwords one read of a merchant's secret gives: the current one, and the previous one with its end. */
export interface Passwords {
  readonly current?: string;
  readonly previous?: { readonly password: string; readonly until: string };
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
    return (await this.passwordsOf(merchantKey)).current;
  }

  /** Both passwords in one read (the cache keeps them together). */
  async passwordsOf(merchantKey: string): Promise<Passwords> {
    const value = await this.read(merchantKey);
    const current = typeof value?.password === 'string' && value.password ? value.password : undefined;
    const previous = value?.previousPassword && value.previousPasswordUntil ? { password: value.previousPassword, until: value.previousPasswordUntil } : undefined;
    return { ...(current ? { current } : {}), ...(current && previous ? { previous } : {}) };
  }

  async previousPasswordOf(merchantKey: string, now: Date): Promise<string | undefined> {
    const { previous } = await this.passwordsOf(merchantKey);
    return previous && Date.parse(previous.until) > now.getTime() ? previous.password : undefined;
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

  async put(merchantKey: string, password: string, previousUntil?: Date): Promise<void> {
    const current = (await this.read(merchantKey)) ?? {};
    const { previousPassword: _p, previousPasswordUntil: _u, ...rest } = current;
    await this.write(merchantKey, {
      ...rest,
      password,
      ...(previousUntil && current.password ? { previousPassword: current.password, previousPasswordUntil: previousUntil.toISOString() } : {}),
    });
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

/** Unknown merchant keys remembered per instance: a flood of random keys fills this, never `entries`. */
export const UNKNOWN_KEYS_REMEMBERED = 10_000;

/**
 * An in-memory cache in front of the secret store, so a warm request makes no Secrets Manager call.
 * Bounded in size. A key missing from the cache is first checked against the merchant directory
 * (`exists`, one consistent read of the table) when one is given: an unknown key never costs a
 * Secrets Manager call, and is remembered briefly in a map of its own, so random keys can neither
 * run up the secret store's bill nor evict the known merchants' passwords.
 */
export class CachedMerchantSecrets implements MerchantSecrets {
  /** Known merchants' passwords (and the previous one while a rotation overlaps), least recently read first. */
  private readonly entries = new Map<string, { password: string; until: number; previous?: { readonly password: string; readonly until: string } }>();
  /** Keys found to be no merchant's (or without a password), until when. */
  private readonly unknown = new Map<string, number>();
  private readonly refreshedAt = new Map<string, number>();
  private readonly refreshIntervalMs = 30_000;
  private readonly webhookEntries = new Map<string, { secrets: readonly string[]; until: number; rotatedAt: string | undefined }>();

  constructor(
    private readonly inner: MerchantSecrets,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly negativeTtlMs = Math.min(ttlMs, 60_000),
    private readonly maxEntries = 1000,
    /** The merchant directory's word on a key, asked before the secret store (undefined: ask the store). */
    private readonly exists?: (merchantKey: string) => Promise<boolean>,
  ) {}

  async passwordOf(merchantKey: string): Promise<string | undefined> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(merchantKey);
    if (hit && hit.until > now) {
      // Least recently read goes first when the map is full.
      this.entries.delete(merchantKey);
      this.entries.set(merchantKey, hit);
      return hit.password;
    }
    if ((this.unknown.get(merchantKey) ?? 0) > now) return undefined;
    const known = !MERCHANT_KEY_PATTERN.test(merchantKey) ? false : this.exists ? await this.exists(merchantKey) : true;
    return this.remember(merchantKey, known ? await this.read(merchantKey) : {}, now);
  }

  /** The inner store's passwords: both in one read where it can. */
  private async read(merchantKey: string): Promise<Passwords> {
    const inner = this.inner as MerchantSecrets & { passwordsOf?(key: string): Promise<Passwords> };
    if (inner.passwordsOf) return inner.passwordsOf(merchantKey);
    const current = await this.inner.passwordOf(merchantKey);
    return current ? { current } : {};
  }

  /**
   * The previous password while its overlap lasts, from the entry the current one came with: a
   * request signed with it costs no secret call (a wrong hash neither), and a rotation in another
   * function is seen when this entry is read again (ttl, or the refresh after a mismatch).
   */
  async previousPasswordOf(merchantKey: string, now: Date): Promise<string | undefined> {
    const previous = this.entries.get(merchantKey)?.previous;
    return previous && Date.parse(previous.until) > now.getTime() ? previous.password : undefined;
  }

  private remember(merchantKey: string, passwords: Passwords, now: number): string | undefined {
    this.entries.delete(merchantKey);
    const password = passwords.current;
    if (password === undefined) {
      if (this.unknown.size >= UNKNOWN_KEYS_REMEMBERED) this.unknown.delete(this.unknown.keys().next().value as string);
      this.unknown.delete(merchantKey);
      this.unknown.set(merchantKey, now + this.negativeTtlMs);
      return undefined;
    }
    this.unknown.delete(merchantKey);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(merchantKey, { password, until: now + this.ttlMs, ...(passwords.previous ? { previous: passwords.previous } : {}) });
    return password;
  }

  /** At most one refresh per merchant per interval, so bad hashes cannot flood the secret store. */
  async refresh(merchantKey: string): Promise<string | undefined> {
    const now = this.clock.now().getTime();
    const last = this.refreshedAt.get(merchantKey) ?? -Infinity;
    if (now - last < this.refreshIntervalMs) return this.entries.get(merchantKey)?.password;
    if (this.refreshedAt.size >= this.maxEntries) this.refreshedAt.clear();
    this.refreshedAt.set(merchantKey, now);
    // Asked only about a merchant whose password was cached: known, so the directory is not asked again.
    return this.remember(merchantKey, await this.read(merchantKey), now);
  }

  async put(merchantKey: string, password: string, previousUntil?: Date): Promise<void> {
    await this.inner.put(merchantKey, password, previousUntil);
    this.entries.delete(merchantKey);
    this.unknown.delete(merchantKey);
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
