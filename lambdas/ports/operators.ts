/** Operators of the admin portal: who they are and how they sign in. */
export interface Operator {
  readonly username: string;
}

export type SignInResult =
  | { readonly kind: 'signed-in'; readonly token: string; readonly expiresInSeconds: number; readonly username: string }
  | { readonly kind: 'refused' }
  /** The identity provider wants a new password first (Cognito's NEW_PASSWORD_REQUIRED). */
  | { readonly kind: 'password-change-required' }
  /** The operator has an authenticator app: ask for its one-time code and sign in again with it. */
  | { readonly kind: 'mfa-required' };

export interface OperatorAuthenticator {
  signIn(username: string, password: string, mfaCode?: string): Promise<SignInResult>;
}

/** One entry of the audit log: who did what, when, to what, and the state before and after. */
export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly target: string;
  readonly targetKind: 'payment' | 'merchant';
  readonly before?: Record<string, unknown>;
  readonly after?: Record<string, unknown>;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly detail?: string;
  /** The chain (domain/audit-chain.ts): set by the log when the entry is appended. */
  readonly seq?: number;
  readonly prevHash?: string;
  readonly hash?: string;
}

/** Append-only: there is no way to change or remove an entry. */
export interface AuditLog {
  append(entry: AuditEntry): Promise<void>;
  /** Newest first, across days, paged by an opaque cursor. */
  list(options: { limit: number; cursor?: string; until: Date; days: number }): Promise<{ entries: AuditEntry[]; cursor?: string }>;
  forTarget(target: string, limit: number): Promise<AuditEntry[]>;
  /** Every entry of one day (YYYY-MM-DD) in chain order, to verify it. */
  day(day: string): Promise<AuditEntry[]>;
}
