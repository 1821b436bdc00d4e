/**
 * How long a request or a job's payment may wait on the acquirer, and so how long its function may
 * run: derived from the acquirer's timeouts (lambdas/config.ts, as the functions read them), never
 * written per route. No CDK here: the job handlers compute their end margin with the same function.
 */
import type { Config } from '../lambdas/config';

/** The configuration the waits come from: one gateway request's timeout and a follow-up's wait for its callback. */
export type AcquirerTimeouts = Pick<Config, 'S2S_CARD_TIMEOUT_MS' | 'S2S_CARD_FOLLOW_UP_WAIT_MS'>;

/**
 * The stack's choice for every stage. A follow-up may make two gateway requests and wait in between
 * (below), and the longest route must answer inside API Gateway's 30 s: 2 × 8 s + 4 s + OWN_WORK_MS
 * = 23 s. lambdas/config.ts's defaults (15 s, 5 s) would need 38 s; the synth refuses such values.
 */
export const ACQUIRER_TIMEOUTS: AcquirerTimeouts = { S2S_CARD_TIMEOUT_MS: 8_000, S2S_CARD_FOLLOW_UP_WAIT_MS: 4_000 };

/** The environment that carries ACQUIRER_TIMEOUTS to every function. */
export const acquirerTimeoutEnvironment = (timeouts: AcquirerTimeouts): Record<string, string> => ({
  S2S_CARD_TIMEOUT_MS: String(timeouts.S2S_CARD_TIMEOUT_MS),
  S2S_CARD_FOLLOW_UP_WAIT_MS: String(timeouts.S2S_CARD_FOLLOW_UP_WAIT_MS),
});

/**
 * The most acquirer work one request (or one job's payment) does in a row: gateway requests, each
 * bounded by S2S_CARD_TIMEOUT_MS, and follow-up waits, each S2S_CARD_FOLLOW_UP_WAIT_MS. Read from
 * lambdas/adapters/s2s-card/s2s-card-acquirer.ts; the sandbox acquirer (table writes only) is faster.
 */
export interface AcquirerWork {
  readonly requests: number;
  readonly followUpWaits: number;
}

export const ACQUIRER_WORK = {
  /** SALE or RECURRING_SALE, or a replay's GET_TRANS_STATUS_BY_ORDER: one request. */
  authorization: { requests: 1, followUpWaits: 0 },
  /** A return from 3-D Secure (completeAction): the status by order id, one request. */
  status: { requests: 1, followUpWaits: 0 },
  /**
   * Capture, void, refund, reversal: the request, and when the gateway answers ACCEPTED or
   * UNDEFINED the wait for its callback and then GET_TRANS_STATUS.
   */
  followUp: { requests: 2, followUpWaits: 1 },
} as const satisfies Record<string, AcquirerWork>;
export type AcquirerWorkKind = keyof typeof ACQUIRER_WORK;

/**
 * Our own work around the acquirer's: the table reads and conditional writes before and after,
 * the merchant's and the gateway's secrets on a cold cache. Measured in single-digit hundreds of
 * milliseconds (docs/benchmarks.md); three seconds keep room for DynamoDB's and Secrets Manager's retries.
 */
export const OWN_WORK_MS = 3_000;

/** API Gateway HTTP APIs give an integration at most 30 s; the function must have answered by then. */
export const API_GATEWAY_INTEGRATION_LIMIT_SECONDS = 30;
/** A route's longest timeout: one second under the integration limit, for the answer to travel back. */
export const MAX_ROUTE_TIMEOUT_SECONDS = API_GATEWAY_INTEGRATION_LIMIT_SECONDS - 1;

/** The longest the acquirer work of one request takes at these timeouts. */
export const acquirerWorkMs = (work: AcquirerWork, timeouts: AcquirerTimeouts): number =>
  work.requests * timeouts.S2S_CARD_TIMEOUT_MS + work.followUpWaits * timeouts.S2S_CARD_FOLLOW_UP_WAIT_MS;

/**
 * The timeout of a route that calls the acquirer: its acquirer work plus OWN_WORK_MS, in whole
 * seconds. Refuses (at synth) a configuration under which the route could not answer inside API
 * Gateway's limit: the merchant would get API Gateway's 503 instead of our "being processed" answer.
 */
export function acquirerRouteTimeoutSeconds(routeId: string, work: AcquirerWork, timeouts: AcquirerTimeouts): number {
  const seconds = Math.ceil((acquirerWorkMs(work, timeouts) + OWN_WORK_MS) / 1000);
  if (seconds > MAX_ROUTE_TIMEOUT_SECONDS) {
    throw new Error(
      `Route ${routeId} would need ${seconds} s (${work.requests} gateway requests of S2S_CARD_TIMEOUT_MS ${timeouts.S2S_CARD_TIMEOUT_MS} ms, ` +
        `${work.followUpWaits} waits of S2S_CARD_FOLLOW_UP_WAIT_MS ${timeouts.S2S_CARD_FOLLOW_UP_WAIT_MS} ms, ${OWN_WORK_MS} ms of its own); ` +
        `API Gateway answers 503 after ${API_GATEWAY_INTEGRATION_LIMIT_SECONDS} s: lower the acquirer timeouts (lib/time-budget.ts)`,
    );
  }
  return seconds;
}

/** A function's timeout when its route names none (Lambda's 3 s default is too short for a cold start and a table write or two). */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 10;

/** What a route says about its time: a number of its own, or the acquirer work it does (lib/routes.ts). */
export interface RouteTiming {
  readonly id: string;
  readonly timeoutSeconds?: number;
  readonly acquirerWork?: AcquirerWorkKind;
}

/**
 * A route's function timeout at these acquirer timeouts: its own number, or for a route that waits
 * on the acquirer the time its acquirer work may take. The stack and the local runner both call it,
 * so a refund gets the same time on a laptop as in the cloud for the same settings.
 */
export function routeTimeoutSeconds(route: RouteTiming, timeouts: AcquirerTimeouts): number {
  if (!route.acquirerWork) return route.timeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS;
  if (route.timeoutSeconds !== undefined) throw new Error(`Route ${route.id}: an acquirer route's timeout is derived from the acquirer's timeouts; remove its timeoutSeconds`);
  return acquirerRouteTimeoutSeconds(route.id, ACQUIRER_WORK[route.acquirerWork], timeouts);
}

/**
 * The acquirer timeouts of a configuration given as environment variables (the local runner's, a
 * test's): each value set there, else the stack's choice (ACQUIRER_TIMEOUTS), never lambdas/config.ts's
 * longer defaults, under which a follow-up could not answer inside API Gateway's limit.
 */
export function acquirerTimeoutsOf(env: Readonly<Record<string, string | undefined>>): AcquirerTimeouts {
  const of = (name: keyof AcquirerTimeouts): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return ACQUIRER_TIMEOUTS[name];
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number of milliseconds, got ${JSON.stringify(raw)}`);
    return value;
  };
  return { S2S_CARD_TIMEOUT_MS: of('S2S_CARD_TIMEOUT_MS'), S2S_CARD_FOLLOW_UP_WAIT_MS: of('S2S_CARD_FOLLOW_UP_WAIT_MS') };
}

/**
 * What a scheduled job leaves of its Lambda's time when it stops taking new payments: the longest
 * acquirer operation (a follow-up) and our own work around it, so a payment begun just before the
 * stop still finishes; never less than `floorMs` (the sandbox, whose calls are table writes).
 */
export const jobEndMarginMs = (config: AcquirerTimeouts & Pick<Config, 'ACQUIRER'>, floorMs: number): number =>
  config.ACQUIRER === 'sandbox' ? floorMs : Math.max(floorMs, acquirerWorkMs(ACQUIRER_WORK.followUp, config) + OWN_WORK_MS);
