import { CreateSecretCommand, GetSecretValueCommand, PutSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ACCOUNT_ID } from '../../domain/acquirer-account';
import type { AccountSecrets } from '../../ports/acquirer-accounts';
import type { Clock } from '../../ports/clock';

/**
 * One secret per acquirer account, named <prefix><account_id>, holding {"password"}. Read through a
 * cache of SECRET_CACHE_TTL_SECONDS (a rotation reaches every instance within it; a hash mismatch
 * reads past it at once, `fresh`).
 */
export class SecretsManagerAccountSecrets implements AccountSecrets {
  private readonly cache = new Map<string, { readonly password: string | undefined; readonly until: number }>();

  constructor(
    private readonly client: SecretsManagerClient,
    private readonly prefix: string | undefined,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  private name(accountId: string): string {
    if (!this.prefix) throw new Error('ACQUIRER_ACCOUNT_SECRET_PREFIX is not set: acquirer accounts cannot be used');
    if (!ACCOUNT_ID.test(accountId)) throw new Error('not an account id');
    return this.prefix + accountId;
  }

  async passwordOf(accountId: string, fresh = false): Promise<string | undefined> {
    const now = this.clock.now().getTime();
    const cached = this.cache.get(accountId);
    if (!fresh && cached && cached.until > now) return cached.password;
    let password: string | undefined;
    try {
      const out = await this.client.send(new GetSecretValueCommand({ SecretId: this.name(accountId) }));
      const value = JSON.parse(out.SecretString ?? '{}') as { password?: unknown };
      password = typeof value.password === 'string' && value.password ? value.password : undefined;
    } catch (e) {
      if ((e as Error).name !== 'ResourceNotFoundException') throw e;
    }
    this.cache.set(accountId, { password, until: now + this.ttlMs });
    return password;
  }

  async put(accountId: string, password: string): Promise<void> {
    const SecretString = JSON.stringify({ password });
    const name = this.name(accountId);
    try {
      await this.client.send(new PutSecretValueCommand({ SecretId: name, SecretString }));
    } catch (e) {
      if ((e as Error).name !== 'ResourceNotFoundException') throw e;
      await this.client.send(new CreateSecretCommand({ Name: name, SecretString, Description: `Password of acquirer account ${accountId}` }));
    }
    this.cache.set(accountId, { password, until: this.clock.now().getTime() + this.ttlMs });
  }
}
