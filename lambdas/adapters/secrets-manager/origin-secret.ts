import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { carriesOriginSecret, parseOriginSecret, type OriginSecretValues } from '../../domain/origin-secret';
import type { Clock } from '../../ports/clock';

/**
 * The origin secret of a stage behind CloudFront (ORIGIN_SECRET_ID), read from Secrets Manager on
 * the first request and then once per `ttlMs` (SECRET_CACHE_TTL_SECONDS, as the other secrets): a
 * request costs a digest and two constant-time compares, never a secret read of its own. Requests
 * arriving together while it is read wait for the same read.
 */
export class CachedOriginSecret {
  private values?: { readonly values: OriginSecretValues; readonly until: number };
  private reading?: Promise<OriginSecretValues>;

  constructor(
    private readonly read: () => Promise<string>,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** Whether the header carries a value of either slot. A secret that cannot be read fails the request (never opens it). */
  async admits(header: string | undefined): Promise<boolean> {
    return carriesOriginSecret(header, await this.current());
  }

  private async current(): Promise<OriginSecretValues> {
    const now = this.clock.now().getTime();
    if (this.values && this.values.until > now) return this.values.values;
    this.reading ??= this.read()
      .then((secretString) => {
        const values = parseOriginSecret(secretString);
        this.values = { values, until: this.clock.now().getTime() + this.ttlMs };
        return values;
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}

export const secretsManagerOriginSecret = (client: SecretsManagerClient, secretId: string, clock: Clock, ttlMs: number): CachedOriginSecret =>
  new CachedOriginSecret(async () => (await client.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString ?? '', clock, ttlMs);
