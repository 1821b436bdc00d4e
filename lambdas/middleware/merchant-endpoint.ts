import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { deps as processDeps, type Deps } from '../container';
import { logger } from '../observability/logger';
import { errorEnvelope, jsonResponse } from './error-envelope';
import { jsonBody } from './json-body';
import { verifySignature } from './signature';
import { ApiError, invalidRequest } from '../domain/errors';
import { IDEMPOTENCY_KEY_HEADER, isValidIdempotencyKey, requestKeyOf, type RequestKey } from '../domain/request-key';
import { RULE } from '../domain/validation';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface MerchantRequest<R> {
  readonly merchantKey: string;
  readonly body: R;
  /** The request's Idempotency-Key, when it sent one (checked against its first body). */
  readonly requestKey?: RequestKey;
  readonly event: APIGatewayProxyEventV2;
  readonly deps: Deps;
}

export interface MerchantEndpoint<R extends { merchant_key: string; hash: string }, Out> {
  /** Schema validation: returns the typed body or throws the 400 envelope. */
  readonly validate: (body: unknown) => R;
  /** The fields the hash covers; several renderings may be accepted. */
  readonly hashFields: (body: R) => string[][];
  readonly run: (request: MerchantRequest<R>) => Promise<Out>;
  readonly statusCode?: number;
}

/**
 * The chain every merchant API route shares: logging context, JSON body limits and parsing,
 * schema validation, signature, the use case, and the error envelope.
 */
export function merchantEndpoint<R extends { merchant_key: string; hash: string }, Out>(
  spec: MerchantEndpoint<R, Out>,
): LambdaHandler {
  const core = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const d = processDeps();
    const body = spec.validate(event.body as unknown);
    await verifySignature(d.secrets, body.merchant_key, body.hash, spec.hashFields(body));
    logger.appendKeys({ merchant_key: body.merchant_key });
    const requestKey = await claimRequestKey(d, event, body);
    const out = await spec.run({ merchantKey: body.merchant_key, body, event, deps: d, ...(requestKey ? { requestKey } : {}) });
    return jsonResponse(spec.statusCode ?? 200, out);
  };
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(core)
    .use(injectLambdaContext(logger, { logEvent: false, resetKeys: true, correlationIdPath: 'requestContext.requestId' }))
    .use(errorEnvelope())
    .use(jsonBody()) as unknown as LambdaHandler;
}

/**
 * The optional Idempotency-Key header, checked only on a signed request: the same key with another
 * body is refused (409); with the same body the use case runs again under the same transaction id
 * and answers from what the first run recorded.
 */
async function claimRequestKey(d: Deps, event: APIGatewayProxyEventV2, body: { merchant_key: string }): Promise<RequestKey | undefined> {
  const header = event.headers?.[IDEMPOTENCY_KEY_HEADER];
  if (header === undefined) return undefined;
  if (!isValidIdempotencyKey(header)) throw invalidRequest([{ path: 'Idempotency-Key', message: header === '' ? RULE.blank : RULE.invalid }]);
  const key = requestKeyOf(body.merchant_key, event.routeKey ?? event.rawPath, header, body as unknown as Record<string, unknown>);
  if ((await d.requestKeys.claim(key.id, key.fingerprint, d.clock.now())) === 'different') throw new ApiError('DUPLICATE_REQUEST');
  return key;
}

export { publicBaseUrl } from './base-url';
