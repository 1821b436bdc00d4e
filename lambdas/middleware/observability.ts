import type middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { logger } from '../observability/logger';
import { metrics, SERVICE_NAME } from '../observability/telemetry';
import { beginInvocation, endInvocation } from '../observability/xray';
import { originGuard } from './origin-guard';

// Middy's types are per chain; these middlewares read nothing of the event but what is typed here.
type AnyMiddleware = middy.MiddlewareObj<any, any>;

/**
 * The observability every HTTP function starts with, in this order:
 * - the handler's X-Ray subsegment when the invocation is sampled (lambdas/observability/xray.ts; no
 *   request or response goes into it: pages and answers can echo what a customer typed, and a card
 *   number never goes into a trace);
 * - the logger's Lambda context, the API request id as correlation id, and keys reset after each
 *   request (the payment and merchant a request appended do not leak into the next one);
 * - the metrics of the invocation, flushed as one EMF line when it ends (also after an error);
 * - one `request` log line per request with its route, status and duration, which carries the
 *   request id, payment_id and merchant_key keys the request collected;
 * - then, on a stage behind CloudFront, the origin check (lambdas/middleware/origin-guard.ts): it
 *   rides here because this is the one list every HTTP function's chain starts with, so no route
 *   (merchant API, pages, portal, the gateway's callbacks, `$default`) can be built without it.
 */
export function requestObservability(): AnyMiddleware[] {
  return [
    ...traceHandler(),
    injectLambdaContext(logger, { logEvent: false, resetKeys: true, correlationIdPath: 'requestContext.requestId' }) as AnyMiddleware,
    logMetrics(metrics) as AnyMiddleware,
    requestLog(),
    originGuard() as AnyMiddleware,
  ];
}

/** The same for a scheduled job or the stream dispatcher: trace, logger context, metrics. */
export function jobObservability(): AnyMiddleware[] {
  return [
    ...traceHandler(),
    injectLambdaContext(logger, { logEvent: false, resetKeys: true }) as AnyMiddleware,
    logMetrics(metrics) as AnyMiddleware,
  ];
}

/**
 * The handler's subsegment: opened first, closed last (after the error middlewares made the answer,
 * and a fault only when an error got past them), its datagrams out before the invocation returns.
 */
const traceHandler = (): AnyMiddleware[] => [
  {
    before: () => {
      beginInvocation(SERVICE_NAME);
    },
    after: () => endInvocation(),
    onError: (request) => endInvocation(request.response === undefined),
  },
];

const started = new WeakMap<object, number>();

/**
 * One log line when a request ends, after the error middlewares made its answer (their onError
 * runs first: they come later in the chain). Without the path's parameters (tokens), the body or
 * the query: the route key names the route.
 */
function requestLog(): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  const log = (request: middy.Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>) => {
    const statusCode = request.response?.statusCode ?? 500;
    const begun = started.get(request);
    logger.info('request', {
      routeKey: request.event?.routeKey,
      statusCode,
      ...(begun !== undefined ? { durationMs: Date.now() - begun } : {}),
    });
  };
  return {
    before: (request) => {
      started.set(request, Date.now());
    },
    after: log,
    onError: log,
  };
}
