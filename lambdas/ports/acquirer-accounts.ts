import type { AcquirerAccount } from '../domain/acquirer-account';

export type { AcquirerAccount };

/** The merchants' acquirer accounts (their passwords are in AccountSecrets). */
export interface AcquirerAccounts {
  find(accountId: string): Promise<AcquirerAccount | undefined>;
  /** Every account, by id. */
  list(): Promise<AcquirerAccount[]>;
  /** Creates it; false when the id is taken. */
  create(account: AcquirerAccount): Promise<boolean>;
  /** Replaces it if it is still as read (`updatedAt`); false when it changed meanwhile. */
  save(account: AcquirerAccount, readAt: string): Promise<boolean>;
}

/**
 * The accounts as the paths that pay read them: the S2S CARD connector (where a payment goes) and
 * the checkout page (a linked merchant's Google Pay parameters). One cache of
 * SECRET_CACHE_TTL_SECONDS per instance serves both, so an account read by one request is not read
 * again by the next; `fresh` reads past it. Admins change accounts through AcquirerAccounts, never this.
 */
export interface AccountReader {
  find(accountId: string, fresh?: boolean): Promise<AcquirerAccount | undefined>;
}

/** The accounts' passwords. */
export interface AccountSecrets {
  /** The password, or undefined when the account has none. `fresh` reads past any cache (after a hash mismatch). */
  passwordOf(accountId: string, fresh?: boolean): Promise<string | undefined>;
  /** Sets the password (creates the secret the first time). */
  put(accountId: string, password: string): Promise<void>;
}
