import type { OperatorRole } from '../../lib/operator-roles';

/**
 * Operators of the admin portal: who they are and how they sign in. On AWS they sign in on
 * Cognito's own pages (ADR 0019) and no function signs anyone in; this port is the local runner's.
 */
export interface Operator {
  readonly username: string;
  readonly role?: OperatorRole;
}

export type SignInResult =
  | { readonly kind: 'signed-in'; readonly token: string; readonly expiresInSeconds: number; readonly username: string; readonly role?: OperatorRole }
  /**
   * Wrong user name or password: the same answer to the client whether or not the operator exists.
   * `known` tells the audit log which it was (never the client).
   */
  | { readonly kind: 'refused'; readonly known: boolean }
  /**
   * Too many wrong passwords in a row for this user name (known or not) from this source address;
   * no password is checked until the wait ends. `lockedUntil` is set when this attempt's wrong
   * password started the wait; absent when the attempt was refused unchecked (the name was waiting).
   */
  | { readonly kind: 'locked'; readonly known: boolean; readonly lockedUntil?: Date };

export interface OperatorAuthenticator {
  /** `source` is the client's address: failures count per address and user name. */
  signIn(username: string, password: string, source?: string): Promise<SignInResult>;
  /**
   * Counts a failed sign-in of a name that is no operator's in the hour of `now`: its number in
   * that hour, or undefined once `limit` are counted (nothing is written then). Bounds what
   * guessed names can add to the audit log (use-cases/operator-sign-in.ts).
   */
  countUnknownNameFailure(now: Date, limit: number): Promise<number | undefined>;
}

/** One entry of the audit log: who did what, when, to what, and the state before and after. */
export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly actor: string;
  /** The operator's role when they acted (absent for the merchant CLI's `cli:` actors). */
  readonly actorRole?: OperatorRole;
  readonly action: string;
  readonly target: string;
  /** `operator`: the operator's own sign-in or sign-out (target `operator:<user name>`). */
  readonly targetKind: 'payment' | 'merchant' | 'account' | 'operator';
  readonly before?: Record<string, unknown>;
  readonly after?: Record<string, unknown>;
  readonly outcome: 'done' | 'refused' | 'failed';
  readonly detail?: string;
  /** The chain (domain/audit-chain.ts): set by the log when the entry is appended. */
  readonly seq?: number;
  readonly prevHash?: string;
  readonly hash?: string;
  /**
   * On a day's first entry only: the earlier day and entry whose hash `prevHash` is (the previous
   * day's head), so the days form one chain. Absent on a chain start (prevHash GENESIS).
   */
  readonly prevDay?: string;
  readonly prevSeq?: number;
}

/**
 * An operator's running counts and exports, bounded across every function instance: a slot is
 * held until released or until the deadline it was taken for (its function cannot run longer).
 */
export interface SearchLeases {
  take(operator: string, until: Date, now: Date): Promise<{ readonly taken: true; release(): Promise<void> } | { readonly taken: false; readonly retryAfterSeconds: number }>;
}

/**
 * A sign-in on the cloud's sign-in pages as the identity provider recorded it (Cognito's user auth
 * events, kept by its threat protection): the functions never see those pages, so the audit log
 * learns of them from here (lambdas/use-cases/import-sign-ins.ts).
 */
export interface ProviderSignIn {
  /** The provider's own id of the event: the audit entry's id is made of it, so it is imported once. */
  readonly eventId: string;
  readonly username: string;
  readonly at: Date;
  /** in-progress: the password was right and the second factor not answered (yet). */
  readonly outcome: 'passed' | 'failed' | 'in-progress';
  /** Which steps failed, when it failed: the password, the authenticator app's code. */
  readonly failedSteps: readonly ('password' | 'mfa')[];
  /** Threat protection's decision and level, when it took one (`block`: refused whatever the password). */
  readonly risk?: { readonly decision?: string; readonly level?: string; readonly compromisedCredentials?: boolean };
  readonly ip?: string;
  readonly place?: string;
}

export interface ProviderSignIns {
  /** Every operator's sign-ins since `from`, in any order. */
  since(from: Date): Promise<readonly ProviderSignIn[]>;
}

/** Append-only: there is no way to change or remove an entry. */
export interface AuditLog {
  append(entry: AuditEntry): Promise<void>;
  /** Newest first, across days, paged by an opaque cursor. */
  list(options: { limit: number; cursor?: string; until: Date; days: number }): Promise<{ entries: AuditEntry[]; cursor?: string }>;
  forTarget(target: string, limit: number): Promise<AuditEntry[]>;
  /** Every entry of one day (YYYY-MM-DD) in chain order, to verify it. */
  day(day: string): Promise<AuditEntry[]>;
  /** The last entry of one day's chain (its head), read consistently; undefined for a day without entries. */
  head(day: string): Promise<AuditEntry | undefined>;
}
