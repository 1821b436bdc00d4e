/** Remembers which body an Idempotency-Key was first used with, for 24 hours. */
export interface RequestKeys {
  /**
   * Records the key with this body's fingerprint, or finds it recorded: `same` for the first body
   * (a retry), `different` for another one.
   */
  claim(id: string, fingerprint: string, now: Date): Promise<'same' | 'different'>;
}
