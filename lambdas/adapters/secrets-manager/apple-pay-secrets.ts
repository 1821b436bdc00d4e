import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { APPLE_PAY_MERCHANT_ID } from '../../domain/wallet-settings';
import type { MerchantIdentity } from '../../domain/apple-pay';
import type { ApplePaySecrets } from '../../ports/apple-pay';
import type { Clock } from '../../ports/clock';

/**
 * Apple Pay's secrets under one prefix (`checkout/<stage>/apple-pay/`): one per Apple Pay merchant
 * identifier, `{"certificate","privateKey"}` in PEM. Read
 * through a cache of SECRET_CACHE_TTL_SECONDS; never logged, never in the table.
 */
export class SecretsManagerApplePaySecrets implements ApplePaySecrets {
  private readonly cache = new Map<string, { readonly value: Record<string, unknown> | undefined; readonly until: number }>();

  constructor(
    private readonly client: SecretsManagerClient,
    private readonly prefix: string | undefined,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  private async read(name: string): Promise<Record<string, unknown> | undefined> {
    if (!this.prefix) return undefined;
    const now = this.clock.now().getTime();
    const cached = this.cache.get(name);
    if (cached && cached.until > now) return cached.value;
    let value: Record<string, unknown> | undefined;
    try {
      const out = await this.client.send(new GetSecretValueCommand({ SecretId: this.prefix + name }));
      const parsed: unknown = JSON.parse(out.SecretString ?? 'null');
      value = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : undefined;
    } catch (e) {
      if ((e as Error).name !== 'ResourceNotFoundException') throw e;
    }
    this.cache.set(name, { value, until: now + this.ttlMs });
    return value;
  }

  async identityOf(merchantIdentifier: string): Promise<MerchantIdentity | undefined> {
    if (!APPLE_PAY_MERCHANT_ID.test(merchantIdentifier)) return undefined;
    const v = await this.read(merchantIdentifier);
    return typeof v?.certificate === 'string' && typeof v.privateKey === 'string' ? { certificate: v.certificate, privateKey: v.privateKey } : undefined;
  }
}
