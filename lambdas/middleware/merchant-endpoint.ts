import middy from '@middy/core';
import { requestObservability } from './observability';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { deps as processDeps, type Deps } from '../container';
import { telemetry } from '../observability/telemetry';
import { errorEnvelope, jsonResponse } from './error-envelope';
import { jsonBody } from './json-body';
import { verifySignature } from './signature';
import { admitMerchantRequest } from './merchant-gate';
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

/** What the merchant-API middlewares learn about a request, carried on its event. */
export interface MerchantEvent<R> extends APIGatewayProxyEventV2 {
  /** The body once validateBody accepted it. */
  validBody?: R;
  /** Set by verifyHash once the body's hash is the merchant's. */
  merchantKey?: string;
  requestKey?: RequestKey;
}

type MerchantMiddleware<R> = middy.MiddlewareObj<MerchantEvent<R>, APIGatewayProxyStructuredResultV2> & { readonly name: string };

/** Schema validation (zod): the typed body, or the 400 envelope with one item per invalid field. */
export function validateBody<R>(validate: (body: unknown) => R): MerchantMiddleware<R> {
  return {
    name: 'validateBody',
    before: async (request) => {
      request.event.validBody = validate(request.event.body as unknown);
    },
  };
}

/**
 * The protocol's signature over the fields of the validated body (protocol.md §1); several
 * renderings may be accepted. Runs after validateBody: the hash is checked only on a valid body.
 */
export function verifyHash<R extends { merchant_key: string; hash: string }>(fields: (body: R) => string[][]): MerchantMiddleware<R> {
  return {
    name: 'verifyHash',
    before: async (request) => {
      const body = validated(request.event);
      await verifySignature(processDeps().secrets, body.merchant_key, body.hash, fields(body));
      // The merchant's own requests per second (429 beyond them); only a verified request counts.
      await admitMerchantRequest(processDeps(), body.merchant_key);
      request.event.merchantKey = body.merchant_key;
      // The request's log lines and trace name the merchant, and the payment when the body names one.
      const paymentId = (body as { payment_id?: unknown }).payment_id;
      if (typeof paymentId === 'string' && paymentId) telemetry.paymentInContext(paymentId, body.merchant_key);
      else telemetry.merchantInContext(body.merchant_key);
    },
  };
}

/** The optional Idempotency-Key header, on a signed request only (see claimRequestKey). */
export function idempotencyKey<R extends { merchant_key: string }>(): MerchantMiddleware<R> {
  return {
    name: 'idempotencyKey',
    before: async (request) => {
      const body = validated(request.event);
      if (request.event.merchantKey === undefined) throw new Error('idempotencyKey needs verifyHash before it');
      const key = await claimRequestKey(processDeps(), request.event, body);
      if (key) request.event.requestKey = key;
    },
  };
}

function validated<R>(event: MerchantEvent<R>): R {
  if (event.validBody === undefined) throw new Error('this middleware needs validateBody before it');
  return event.validBody;
}

/** The middlewares every merchant route starts with, in order. */
export const MERCHANT_BASE_CHAIN = ['observability', 'errorEnvelope', 'jsonBody'] as const;

/** A merchant API handler, with the names of its middlewares in order (tests check every route's). */
export type MerchantHandler = LambdaHandler & { readonly chain: readonly string[] };

/**
 * A merchant API route: logging context, the error envelope and the JSON body limits, then the
 * route's own middlewares in the order it lists them, e.g.
 * `merchantApi<Req>().use(validateBody(schema)).use(verifyHash(fields)).use(idempotencyKey()).handler(run)`.
 * The use case runs only on a request every one of them accepted.
 */
export function merchantApi<R extends { merchant_key: string; hash: string }>() {
  const chain: string[] = [...MERCHANT_BASE_CHAIN];
  const m = middy<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>()
    .use(requestObservability() as middy.MiddlewareObj<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>[])
    .use(errorEnvelope() as unknown as middy.MiddlewareObj<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>)
    .use(jsonBody() as unknown as middy.MiddlewareObj<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>);
  const api = {
    use(middleware: MerchantMiddleware<R>) {
      chain.push(middleware.name);
      m.use(middleware);
      return api;
    },
    handler<Out>(run: (request: MerchantRequest<R>) => Promise<Out>, statusCode = 200): MerchantHandler {
      const handler = m.handler(async (event) => {
        const body = validated(event);
        if (event.merchantKey === undefined) throw new Error('a merchant route needs verifyHash');
        const out = await run({ merchantKey: event.merchantKey, body, event, deps: processDeps(), ...(event.requestKey ? { requestKey: event.requestKey } : {}) });
        return jsonResponse(statusCode, out);
      });
      return Object.assign(handler as unknown as LambdaHandler, { chain: [...chain] });
    },
  };
  return api;
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
