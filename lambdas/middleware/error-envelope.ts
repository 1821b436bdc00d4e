import type middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ApiError, ERRORS, RetryLaterError, type CatalogEntry } from '../domain/errors';
import { logger } from '../observability/logger';

export const JSON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

export function jsonResponse(statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { ...JSON_HEADERS }, body: JSON.stringify(body) };
}

const envelopeOf = (entry: CatalogEntry) => ({ error_code: entry.code, error_message: entry.message, errors: [] });

/** AWS SDK errors that mean "try again later", not "we are broken". */
const TRANSIENT = /Throttl|ProvisionedThroughputExceeded|RequestLimitExceeded|TimeoutError|ServiceUnavailable|InternalServerError|ECONNRESET|ECONNREFUSED|socket hang up/;

/**
 * Turns every failure into the documented envelope. Refusals come from the catalog; anything else
 * is logged (redacted, without the request body) and answered without internals.
 */
export function errorEnvelope(): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    onError: async (request) => {
      const error = request.error;
      if (error instanceof ApiError) {
        request.response = jsonResponse(error.httpStatus, error.toEnvelope());
        if (error instanceof RetryLaterError) request.response.headers = { ...request.response.headers, 'retry-after': String(error.retryAfterSeconds) };
        return;
      }
      const name = (error as Error | undefined)?.name ?? 'Error';
      const transient = TRANSIENT.test(name) || TRANSIENT.test((error as Error | undefined)?.message ?? '');
      logger.error('request failed', { errorName: name, error: error as Error, transient });
      const entry = transient ? ERRORS.UNAVAILABLE : ERRORS.INTERNAL;
      request.response = jsonResponse(entry.httpStatus, envelopeOf(entry));
    },
  };
}
