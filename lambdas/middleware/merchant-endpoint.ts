import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { deps as processDeps, type Deps } from '../container';
import { logger } from '../observability/logger';
import { errorEnvelope, jsonResponse } from './error-envelope';
import { jsonBody } from './json-body';
import { verifySignature } from './signature';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface MerchantRequest<R> {
  readonly merchantKey: string;
  readonly body: R;
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
    const out = await spec.run({ merchantKey: body.merchant_key, body, event, deps: d });
    return jsonResponse(spec.statusCode ?? 200, out);
  };
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>(core)
    .use(injectLambdaContext(logger, { logEvent: false, resetKeys: true, correlationIdPath: 'requestContext.requestId' }))
    .use(errorEnvelope())
    .use(jsonBody()) as unknown as LambdaHandler;
}

export { publicBaseUrl } from './base-url';
