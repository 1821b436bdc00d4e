import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { deps as processDeps, type Deps } from '../container';
import { ApiError } from '../domain/errors';
import { logger } from '../observability/logger';
import { errorEnvelope, jsonResponse } from './error-envelope';
import { jsonBody } from './json-body';
import type { LambdaHandler } from './merchant-endpoint';

export interface OperatorRequest {
  readonly event: APIGatewayProxyEventV2;
  readonly deps: Deps;
  /** The signed-in operator, from the token the authorizer verified. */
  readonly actor: string;
  readonly body: Record<string, unknown>;
}

type Claims = Record<string, unknown>;

/** The operator's name from a verified token: Cognito's username claim, or the local one. */
export function actorOf(event: APIGatewayProxyEventV2): string | undefined {
  const claims = (event.requestContext as { authorizer?: { jwt?: { claims?: Claims } } }).authorizer?.jwt?.claims;
  const name = claims?.['cognito:username'] ?? claims?.username ?? claims?.sub;
  return typeof name === 'string' && name ? name : undefined;
}

/** The host of an Origin header; undefined for an opaque origin ("null", sent by sandboxed frames). */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/**
 * The chain of the admin API. The token is verified before the Lambda runs (the JWT authorizer;
 * locally its equivalent); this checks a verified identity is present and, for writes, that the
 * request is same-origin JSON. Bearer tokens are never sent by a browser on its own, so a
 * cross-site request cannot act as an operator (CSRF); the Origin check is defence in depth.
 */
export function operatorEndpoint(run: (request: OperatorRequest) => Promise<unknown>, options: { body?: boolean } = {}): LambdaHandler {
  const core = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const actor = actorOf(event);
    if (!actor) throw new ApiError('UNAUTHORIZED');
    const origin = event.headers?.origin;
    if (options.body && origin && hostOf(origin) !== (event.headers?.host ?? event.requestContext.domainName)) {
      throw new ApiError('UNAUTHORIZED', [], 'Cross-origin requests are not accepted.');
    }
    logger.appendKeys({ operator: actor });
    const out = await run({ event, deps: processDeps(), actor, body: (options.body ? event.body : {}) as unknown as Record<string, unknown> });
    return jsonResponse(200, out);
  };
  const chain = middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(core)
    .use(injectLambdaContext(logger, { logEvent: false, resetKeys: true, correlationIdPath: 'requestContext.requestId' }))
    .use(errorEnvelope());
  return (options.body ? chain.use(jsonBody()) : chain) as unknown as LambdaHandler;
}
