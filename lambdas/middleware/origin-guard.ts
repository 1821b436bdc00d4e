import type middy from '@middy/core';
import { cleanupMiddlewares } from '@aws-lambda-powertools/commons';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { CachedOriginSecret } from '../adapters/secrets-manager/origin-secret';
import { ApiError } from '../domain/errors';
import { ORIGIN_SECRET_HEADER } from '../domain/origin-secret';
import { logger } from '../observability/logger';
import { jsonResponse } from './error-envelope';

/**
 * On a stage behind CloudFront and AWS WAF (ORIGIN_SECRET_ID set by the stack), a request must
 * carry the value CloudFront adds in x-origin-verify: without it, it reached the API's origin name
 * directly, past the web ACL's rate limits and rule groups (ADR 0027). HTTP APIs have neither
 * resource policies nor web ACLs, so the functions check it, first thing after the request's
 * logging context and before anything reads the request.
 *
 * The refusal is answered here (403 in the error envelope, whatever the route: pages, the
 * gateway's callbacks and the `$default` route too), not thrown, so no route's own error handler
 * turns it into an error page or a 500. Answering early skips the chain's later `after` steps:
 * the Powertools middlewares' cleanup runs, and the request line is written here.
 *
 * Without ORIGIN_SECRET_ID (stages without an edge, the local runner) it does nothing and reads nothing.
 */
let provider: (() => CachedOriginSecret | undefined) | undefined;

/**
 * Where the guard finds the origin secret: the process's dependencies (lambdas/container.ts
 * registers them when it loads). Registered, not imported, so a function that builds no
 * dependencies (the `$default` route's) carries no SDK client unless it registers one itself
 * (lambdas/handlers/not-found-behind-edge.ts).
 */
export function provideOriginSecret(get: () => CachedOriginSecret | undefined): void {
  provider = get;
}

export function originGuard(): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    before: async (request) => {
      // Read from the environment, not the configuration: without an edge nothing is built for the
      // check (the `$default` function reads no configuration at all).
      if (!process.env.ORIGIN_SECRET_ID) return undefined;
      const guard = provider?.();
      // Fail closed: a function told to check that cannot is a 500, never an open door.
      if (!guard) throw new Error('ORIGIN_SECRET_ID is set, but this function has no origin secret to check it with');
      if (await guard.admits(request.event.headers?.[ORIGIN_SECRET_HEADER])) return undefined;
      const refusal = new ApiError('ORIGIN_REFUSED');
      const response = jsonResponse(refusal.httpStatus, refusal.toEnvelope());
      // Never the header's value: a near miss would be half the secret.
      logger.warn('request refused: not through CloudFront', { routeKey: request.event.routeKey, withHeader: request.event.headers?.[ORIGIN_SECRET_HEADER] !== undefined });
      logger.info('request', { routeKey: request.event.routeKey, statusCode: response.statusCode });
      await cleanupMiddlewares(request);
      return response;
    },
  };
}
