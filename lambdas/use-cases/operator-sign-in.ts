import type { Clock } from '../ports/clock';
import type { Ids } from '../ports/ids';
import type { AuditEntry, AuditLog, OperatorAuthenticator, SignInResult } from '../ports/operators';

export interface SignInDeps {
  readonly operators: OperatorAuthenticator;
  readonly audit: AuditLog;
  readonly clock: Clock;
  readonly ids: Ids;
}

/**
 * Failed sign-ins of names that are no operator's recorded per hour, at most. Anyone can send a new
 * made-up name with each request; the lockout counts per name and cannot bound that, so this does:
 * at most 20 entries an hour (480 a day), the 20th saying that later ones are not recorded until the
 * hour ends. An operator's own name is always recorded: its failures are bounded by the lockout.
 */
export const UNKNOWN_NAME_FAILURES_PER_HOUR = 20;

/** The audit log's actions for a sign-in, whatever its outcome, and a sign-out. */
export const SIGN_IN_ACTION = 'operator.sign-in';
export const SIGN_OUT_ACTION = 'operator.sign-out';

/**
 * The portal's "Sign out": recorded, then the portal forgets the token (and on AWS ends the sign-in
 * pages' session). The token stays valid until it runs out (an hour at most): it is a bearer JWT
 * checked by API Gateway, with no list of revoked tokens.
 */
export async function signOutOperator(deps: Pick<SignInDeps, 'audit' | 'clock' | 'ids'>, actor: string): Promise<{ signed_out: true }> {
  await deps.audit.append({ id: deps.ids.transId(), at: deps.clock.now().toISOString(), actor, action: SIGN_OUT_ACTION, target: `operator:${actor}`, targetKind: 'operator', outcome: 'done' });
  return { signed_out: true };
}

/**
 * An operator signs in (the local runner's form; on AWS Cognito's pages, ADR 0019): the
 * authenticator decides, and every answer but an unknown name's past the hour's limit is appended
 * to the audit log. Neither the password nor anything derived from it is recorded; a name that is
 * no operator's is recorded only by its first two characters and length, since a password typed into
 * the name field by mistake is a common slip.
 */
export async function signInOperator(deps: SignInDeps, username: string, password: string, source?: string): Promise<SignInResult> {
  const result = await deps.operators.signIn(username, password, source);
  const known = result.kind === 'signed-in' || result.known;
  const from = source ? ` from ${source}` : '';
  const entry = (outcome: AuditEntry['outcome'], detail: string, who = username): AuditEntry => ({
    id: deps.ids.transId(),
    at: deps.clock.now().toISOString(),
    actor: who,
    ...(result.kind === 'signed-in' && result.role ? { actorRole: result.role } : {}),
    action: SIGN_IN_ACTION,
    target: `operator:${who}`,
    targetKind: 'operator',
    outcome,
    detail: `${detail}${from}`,
  });
  if (result.kind === 'signed-in') {
    await deps.audit.append(entry('done', 'signed in'));
    return result;
  }
  const why =
    result.kind === 'refused'
      ? 'wrong password'
      : result.lockedUntil
        ? `wrong password, too many in a row: this name waits from this address until ${result.lockedUntil.toISOString().replace('T', ' ').slice(0, 19)} UTC`
        : 'not checked: this name waits from this address after too many wrong passwords';
  if (known) {
    await deps.audit.append(entry('refused', why));
    return result;
  }
  const now = deps.clock.now();
  const nth = await deps.operators.countUnknownNameFailure(now, UNKNOWN_NAME_FAILURES_PER_HOUR);
  if (nth === undefined) return result;
  const last = nth === UNKNOWN_NAME_FAILURES_PER_HOUR ? `; the ${nth}th of unknown names this hour: later ones are not recorded until ${nextHour(now)} UTC` : '';
  await deps.audit.append(entry('refused', `no operator has this name${last}`, maskedName(username)));
  return result;
}

/** A name that is no operator's, shown without most of it: its first two characters and its length. */
export const maskedName = (name: string): string => `${[...name].slice(0, 2).join('')}… (${[...name].length} characters)`;

const nextHour = (now: Date): string => new Date(Math.floor(now.getTime() / 3600_000 + 1) * 3600_000).toISOString().slice(11, 16);
