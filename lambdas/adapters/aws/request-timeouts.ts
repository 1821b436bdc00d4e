/**
 * How long one call to an AWS service may take before the SDK gives it up (and, within its
 * `maxAttempts`, tries again on a new connection). The SDK's HTTP handler only logs a warning when a
 * request passes its `requestTimeout` unless `throwOnRequestTimeout` is set: without it an answer
 * that never comes holds the function until its own timeout.
 */
export interface RequestTimeouts {
  /** Until the TCP (and TLS) connection is open. */
  readonly connectionTimeoutMs: number;
  /** Until the answer has come, from when the request was sent. */
  readonly requestTimeoutMs: number;
}

/** The `requestHandler` options of a client whose calls end within `timeouts`. */
export const boundedRequests = (timeouts: RequestTimeouts) => ({
  connectionTimeout: timeouts.connectionTimeoutMs,
  requestTimeout: timeouts.requestTimeoutMs,
  throwOnRequestTimeout: true,
});

/** The default of AWS_CALL_TIMEOUT_MS (lambdas/config.ts), for clients made outside a function. */
export const AWS_CALL_TIMEOUT_MS = 2_000;

/** A call's limits at `callTimeoutMs` a try: the connection within a second (or the call's limit, if shorter). */
export const callTimeouts = (callTimeoutMs: number = AWS_CALL_TIMEOUT_MS): RequestTimeouts => ({ connectionTimeoutMs: Math.min(1_000, callTimeoutMs), requestTimeoutMs: callTimeoutMs });
