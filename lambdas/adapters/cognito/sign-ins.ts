import { AdminListUserAuthEventsCommand, CognitoIdentityProviderClient, ListUsersCommand, type AuthEventType } from '@aws-sdk/client-cognito-identity-provider';
import { boundedRequests, type RequestTimeouts } from '../aws/request-timeouts';
import { traced } from '../../observability/telemetry';
import type { ProviderSignIn, ProviderSignIns } from '../../ports/operators';

/** One page of a user's events (Cognito's largest) and of the pool's users. */
const EVENTS_PAGE = 60;
const USERS_PAGE = 60;

/**
 * The operators' sign-ins on Cognito's pages: the user pool's users (ListUsers), then each one's
 * sign-in events, newest first (AdminListUserAuthEvents), until the first older than asked. The
 * events are threat protection's (the pool's Plus plan, lib/constructs/operator-pool.ts); Cognito
 * keeps none for a name that is no user.
 */
export class CognitoSignIns implements ProviderSignIns {
  constructor(
    private readonly cognito: CognitoIdentityProviderClient,
    private readonly userPoolId: string,
  ) {}

  async since(from: Date): Promise<readonly ProviderSignIn[]> {
    const out: ProviderSignIn[] = [];
    for (const username of await this.usernames()) {
      let token: string | undefined;
      do {
        let answer;
        try {
          answer = await this.cognito.send(new AdminListUserAuthEventsCommand({ UserPoolId: this.userPoolId, Username: username, MaxResults: EVENTS_PAGE, NextToken: token }));
        } catch (e) {
          // Removed since the users were listed: its events went with it.
          if ((e as Error).name === 'UserNotFoundException') break;
          throw e;
        }
        const events = answer.AuthEvents ?? [];
        // Newest first, yet events of one second may come in any order: the whole page is read, and
        // a page that reaches back past `from` is the last one needed.
        for (const event of events) {
          if (!event.CreationDate || event.CreationDate < from) continue;
          const signIn = signInOf(username, event);
          if (signIn) out.push(signIn);
        }
        token = events.some((e) => !e.CreationDate || e.CreationDate < from) ? undefined : answer.NextToken;
      } while (token);
    }
    // An event the pages repeated (new events moved them on between two reads) is taken once.
    return [...new Map(out.map((s) => [s.eventId, s])).values()];
  }

  private async usernames(): Promise<string[]> {
    const names: string[] = [];
    let token: string | undefined;
    do {
      const answer = await this.cognito.send(new ListUsersCommand({ UserPoolId: this.userPoolId, Limit: USERS_PAGE, PaginationToken: token }));
      for (const user of answer.Users ?? []) if (user.Username) names.push(user.Username);
      token = answer.PaginationToken;
    } while (token);
    return names;
  }
}

/** A sign-in event as the port has it; undefined for other events (sign-up, password change…) or one without its id. */
export function signInOf(username: string, event: AuthEventType): ProviderSignIn | undefined {
  if (event.EventType !== 'SignIn' || !event.EventId || !event.CreationDate) return undefined;
  const failedSteps = (event.ChallengeResponses ?? [])
    .filter((c) => c.ChallengeResponse === 'Failure')
    .map((c) => (c.ChallengeName === 'Mfa' ? 'mfa' : 'password') as 'password' | 'mfa');
  const risk = event.EventRisk;
  const context = event.EventContextData;
  const place = [context?.City, context?.Country].filter(Boolean).join(', ');
  return {
    eventId: event.EventId,
    username,
    at: event.CreationDate,
    outcome: event.EventResponse === 'Pass' ? 'passed' : event.EventResponse === 'InProgress' ? 'in-progress' : 'failed',
    failedSteps: [...new Set(failedSteps)],
    ...(risk && (risk.RiskDecision || risk.RiskLevel || risk.CompromisedCredentialsDetected)
      ? { risk: { ...(risk.RiskDecision ? { decision: risk.RiskDecision } : {}), ...(risk.RiskLevel ? { level: risk.RiskLevel } : {}), ...(risk.CompromisedCredentialsDetected ? { compromisedCredentials: true } : {}) } }
      : {}),
    ...(context?.IpAddress ? { ip: context.IpAddress } : {}),
    ...(place ? { place } : {}),
  };
}

/**
 * How long one call to the pool may take: a connection or an answer that never comes fails the call
 * (and the SDK tries again, 3 tries in all) instead of holding the job to its function's timeout.
 */
export const COGNITO_TIMEOUTS: RequestTimeouts = { connectionTimeoutMs: 3_000, requestTimeoutMs: 10_000 };

/** The pool's client, traced like every AWS SDK client of the service (a stand-in through the SDK's AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER). */
export const createCognitoSignIns = (userPoolId: string, timeouts: RequestTimeouts = COGNITO_TIMEOUTS): CognitoSignIns =>
  new CognitoSignIns(
    traced(new CognitoIdentityProviderClient({ maxAttempts: 3, requestHandler: boundedRequests(timeouts) })),
    userPoolId,
  );
