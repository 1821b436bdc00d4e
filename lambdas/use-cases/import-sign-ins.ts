import type { Clock } from '../ports/clock';
import type { AuditEntry, AuditLog, ProviderSignIn, ProviderSignIns } from '../ports/operators';
import { SIGN_IN_ACTION } from './operator-sign-in';

export interface ImportSignInsDeps {
  readonly signIns: ProviderSignIns;
  readonly audit: AuditLog;
  readonly clock: Clock;
}

/**
 * How far back each run looks, and how long a sign-in waiting for its second factor is left to end.
 * Every run reads the whole window (a few sign-ins an operator a day) and appends what the log does
 * not have yet, so a run that failed or did not happen is made up by the next within the window.
 */
export const SIGN_IN_IMPORT = { windowHours: 24, settleMinutes: 15 } as const;

/** The audit entry id of a provider's sign-in event: the log appends an id once. */
export const signInEntryId = (eventId: string): string => `signin-${eventId}`;

export interface SignInImportReport {
  readonly seen: number;
  readonly imported: number;
  /** Already in the log (an earlier run took them). */
  readonly known: number;
  /** Waiting for their second factor: taken by a later run. */
  readonly waiting: number;
}

/**
 * Copies the operators' sign-ins on the cloud's sign-in pages (ADR 0019) into the audit log, oldest
 * first: success, a wrong password, a wrong authenticator code, one blocked by threat protection,
 * one left at the second factor. The entry is appended now, to today's chain (a closed day's chain
 * and its anchor never change), and says when the sign-in happened. Nothing typed is known here:
 * the provider keeps no password and no code, and neither does the entry.
 */
export async function importSignIns(deps: ImportSignInsDeps, options: { windowHours?: number; settleMinutes?: number } = {}): Promise<SignInImportReport> {
  const now = deps.clock.now();
  const windowHours = options.windowHours ?? SIGN_IN_IMPORT.windowHours;
  const settleMs = (options.settleMinutes ?? SIGN_IN_IMPORT.settleMinutes) * 60_000;
  const events = [...(await deps.signIns.since(new Date(now.getTime() - windowHours * 3600_000)))].sort((a, b) => a.at.getTime() - b.at.getTime() || a.eventId.localeCompare(b.eventId));
  let imported = 0;
  let known = 0;
  let waiting = 0;
  for (const event of events) {
    // A sign-in at its second factor may still pass or fail: the provider updates the event.
    if (event.outcome === 'in-progress' && now.getTime() - event.at.getTime() < settleMs) {
      waiting++;
      continue;
    }
    try {
      await deps.audit.append(signInEntry(event, deps.clock.now()));
      imported++;
    } catch (e) {
      // The log refuses an id it has (adapters/dynamodb/audit-log.ts): an earlier run took it.
      if ((e as Error).name !== 'ConditionalCheckFailedException') throw e;
      known++;
    }
  }
  return { seen: events.length, imported, known, waiting };
}

/** The audit entry of one sign-in on the provider's pages. */
export function signInEntry(event: ProviderSignIn, now: Date): AuditEntry {
  const when = `${event.at.toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  const where = [event.ip ? `from ${event.ip}` : '', event.place ? `(${event.place})` : ''].filter(Boolean).join(' ');
  const blocked = event.risk?.decision?.toLowerCase() === 'block';
  const risk = event.risk?.compromisedCredentials
    ? 'the password is known to be compromised'
    : event.risk?.level && event.risk.level.toLowerCase() !== 'low'
      ? `risk ${event.risk.level.toLowerCase()}`
      : '';
  const what =
    event.outcome === 'passed'
      ? 'signed in on the sign-in pages'
      : event.outcome === 'in-progress'
        ? 'password right, authenticator code never given'
        : blocked
          ? 'refused by threat protection'
          : event.failedSteps.includes('mfa')
            ? 'wrong authenticator code'
            : event.failedSteps.includes('password')
              ? 'wrong password'
              : 'refused by the sign-in pages';
  return {
    id: signInEntryId(event.eventId),
    at: now.toISOString(),
    actor: event.username,
    action: SIGN_IN_ACTION,
    target: `operator:${event.username}`,
    targetKind: 'operator',
    outcome: event.outcome === 'passed' ? 'done' : 'refused',
    detail: [what, `at ${when}`, where, risk ? `; ${risk}` : ''].filter(Boolean).join(' ').replace(' ;', ';'),
  };
}
