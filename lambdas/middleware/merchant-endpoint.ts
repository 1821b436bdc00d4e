import middy from '@middy/core';
import { requestObservability } from './observability';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Deps } from '../container';
import type { StoreKeys } from '../wiring/stores';
import { telemetry } from '../observability/telemetry';
import { JSON_HEADERS, errorEnvelope, jsonResponse } from './error-envelope';
import { jsonBody } from './json-body';
import { verifySignature } from './signature';
import { admitMerchantRequest } from './merchant-gate';
import { ApiError, invalidRequest } from '../domain/errors';
import { IDEMPOTENCY_KEY_HEADER, isValidIdempotencyKey, remembersRefusal, requestKeyOf, type RememberedAnswer, type RequestKey } from '../domain/request-key';
import { RULE } from '../domain/validation';
import { logger } from '../observability/logger';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

/**
 * What every merchant route has: the table's stores and the merchants' secrets (the chain checks
 * the signature, the merchant's request rate and the Idempotency-Key with them). A route that calls
 * the acquirer hands over a part that has it too (lambdas/wiring/acquirer.ts routeDeps).
 */
export type MerchantDeps = Pick<Deps, StoreKeys | 'secrets'>;

export interface MerchantRequest<R, D extends MerchantDeps = MerchantDeps> {
  readonly merchantKey: string;
  readonly body: R;
  /** The request's Idempotency-Key, when it sent one (checked against its first body). */
  readonly requestKey?: RequestKey;
  /**
   * An earlier run under this Idempotency-Key ended without an answer (crash, timeout, "try
   * again"): what it did may be under way, and the use case looks for it before anything else.
   */
  readonly earlierRun?: boolean;
  readonly event: APIGatewayProxyEventV2;
  readonly deps: D;
  /**
   * When the answer must be given at the latest (the function's deadline less a margin for the
   * answer to travel): a use case that has done what the answer promises stops waiting for the rest.
   */
  readonly answerBy: Date;
}

/** Time the answer needs to leave the function and pass API Gateway before the deadline. */
const ANSWER_MARGIN_MS = 1_500;

/** What the Idempotency-Key claim decided for this run of a request. */
type KeyedRun = { readonly lease: string; readonly earlierRun: boolean } | { readonly answer: RememberedAnswer };

/** What the merchant-API middlewares learn about a request, carried on its event. */
export interface MerchantEvent<R> extends APIGatewayProxyEventV2 {
  /** The body once validateBody accepted it. */
  validBody?: R;
  /** Set by verifyHash once the body's hash is the merchant's. */
  merchantKey?: string;
  requestKey?: RequestKey;
  keyedRun?: KeyedRun;
  /** The route's dependencies, built (on first use) before its middlewares run. */
  merchantDeps?: MerchantDeps;
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
      const deps = depsOf(request.event);
      await verifySignature(deps.secrets, body.merchant_key, body.hash, fields(body), deps.clock.now());
      // The merchant's own requests per second (429 beyond them); only a verified request counts.
      await admitMerchantRequest(deps, body.merchant_key);
      request.event.merchantKey = body.merchant_key;
      // The request's log lines and trace name the merchant, and the payment when the body names one.
      const paymentId = (body as { payment_id?: unknown }).payment_id;
      if (typeof paymentId === 'string' && paymentId) telemetry.paymentInContext(paymentId, body.merchant_key);
      else telemetry.merchantInContext(body.merchant_key);
    },
  };
}

/**
 * How replays under one Idempotency-Key are answered: `first-answer` (every operation) gives the
 * first run's answer again, whatever happened since; `current-state` (a read: payment status)
 * reads again, the key only checking that the body is the first one.
 */
export type ReplayAnswers = 'first-answer' | 'current-state';

/** The optional Idempotency-Key header, on a signed request only (see claimRequestKey). */
export function idempotencyKey<R extends { merchant_key: string }>(replays: ReplayAnswers = 'first-answer'): MerchantMiddleware<R> {
  return {
    name: 'idempotencyKey',
    before: async (request) => {
      const body = validated(request.event);
      if (request.event.merchantKey === undefined) throw new Error('idempotencyKey needs verifyHash before it');
      await claimRequestKey(depsOf(request.event), request.event, body, replays);
    },
  };
}

function depsOf(event: MerchantEvent<unknown>): MerchantDeps {
  if (event.merchantDeps === undefined) throw new Error('a merchant middleware runs only in a merchantApi() chain');
  return event.merchantDeps;
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
 * `merchantApi<Req>().use(validateBody(schema)).use(verifyHash(fields)).use(idempotencyKey()).handler(run, { deps })`,
 * `deps` the part of lambdas/wiring/ the route uses. The use case runs only on a request every one
 * of them accepted.
 */
export function merchantApi<R extends { merchant_key: string; hash: string }>() {
  const chain: string[] = [...MERCHANT_BASE_CHAIN];
  /** Set by `handler()`, which every route calls when its module loads. */
  let parts: (() => MerchantDeps) | undefined;
  const m = middy<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>()
    .use(requestObservability() as middy.MiddlewareObj<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>[])
    .use(errorEnvelope() as unknown as middy.MiddlewareObj<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>)
    .use(jsonBody() as unknown as middy.MiddlewareObj<MerchantEvent<R>, APIGatewayProxyStructuredResultV2>)
    .before((request) => {
      if (!parts) throw new Error('a merchant route needs handler()');
      request.event.merchantDeps = parts();
    });
  const api = {
    use(middleware: MerchantMiddleware<R>) {
      chain.push(middleware.name);
      m.use(middleware);
      return api;
    },
    handler<Out, D extends MerchantDeps>(run: (request: MerchantRequest<R, D>) => Promise<Out>, options: MerchantHandlerOptions<R, Out, D>): MerchantHandler {
      const statusCode = options.statusCode ?? 200;
      parts = options.deps;
      const handler = m.handler(async (event, context) => {
        const body = validated(event);
        if (event.merchantKey === undefined) throw new Error('a merchant route needs verifyHash');
        const keyed = event.keyedRun;
        const request: MerchantRequest<R, D> = {
          merchantKey: event.merchantKey,
          body,
          event,
          deps: options.deps(),
          answerBy: new Date(Date.now() + Math.max(0, (context?.getRemainingTimeInMillis?.() ?? 30_000) - ANSWER_MARGIN_MS)),
          ...(event.requestKey ? { requestKey: event.requestKey } : {}),
          ...(keyed && 'lease' in keyed && keyed.earlierRun ? { earlierRun: true } : {}),
        };
        if (!keyed || !event.requestKey) return jsonResponse(statusCode, await run(request));
        if ('answer' in keyed) return answerAgain(keyed.answer, statusCode, options.remembered, request);
        return answerOnce(request, event.requestKey, keyed.lease, run, statusCode, options.remembered);
      });
      return Object.assign(handler as unknown as LambdaHandler, { chain: [...chain] });
    },
  };
  return api;
}

/**
 * How a route's successful answer is kept on its Idempotency-Key when it holds something that must
 * not be stored (a session's link carries its secret): `forget` gives what is kept, `recall` makes
 * the answer again from it. Without one the answer is kept as sent.
 */
export interface RememberedAs<R, Out, D extends MerchantDeps = MerchantDeps> {
  forget(answer: Out): unknown;
  recall(kept: unknown, request: MerchantRequest<R, D>): Promise<Out>;
}

export interface MerchantHandlerOptions<R, Out, D extends MerchantDeps> {
  /** The route's dependencies: a part of lambdas/wiring/ (the stores and merchant secrets at least). */
  readonly deps: () => D;
  readonly statusCode?: number;
  readonly remembered?: RememberedAs<R, Out, D>;
}

/**
 * The optional Idempotency-Key header, checked only on a signed request: the same key with another
 * body is refused (409, 400); with the same body, the first run's answer is given again once it has
 * one, and while that run is still going the replay is told so (409, 208012) instead of running
 * the operation beside it. A run that died without answering leaves its claim to lapse
 * (REQUEST_KEY_LEASE_MS); the next replay runs the use case again under the same transaction id,
 * and the use case finds what the dead run did.
 */
async function claimRequestKey<R>(d: MerchantDeps, event: MerchantEvent<R>, body: { merchant_key: string }, replays: ReplayAnswers): Promise<void> {
  const header = event.headers?.[IDEMPOTENCY_KEY_HEADER];
  if (header === undefined) return;
  if (!isValidIdempotencyKey(header)) throw invalidRequest([{ path: 'Idempotency-Key', message: header === '' ? RULE.blank : RULE.invalid }]);
  const key = requestKeyOf(body.merchant_key, event.routeKey ?? event.rawPath, header, body as unknown as Record<string, unknown>);
  if (replays === 'current-state') {
    if ((await d.requestKeys.check(key.id, key.fingerprint, d.clock.now())) === 'different') throw new ApiError('DUPLICATE_REQUEST');
    event.requestKey = key;
    return;
  }
  const claim = await d.requestKeys.claim(key.id, key.fingerprint, d.ids.transId(), d.clock.now());
  if (claim.kind === 'different') throw new ApiError('DUPLICATE_REQUEST');
  if (claim.kind === 'in-progress') throw new ApiError('OPERATION_IN_PROGRESS');
  event.requestKey = key;
  event.keyedRun = claim.kind === 'answered' ? { answer: claim.answer } : { lease: claim.lease, earlierRun: claim.rerun };
}

/**
 * Runs the request that holds its key and keeps its answer there: a success, or a refusal that is
 * final (domain/request-key.ts remembersRefusal). A failure or "try again" gives the key up
 * unanswered, so the retry it invites runs. Should another run have kept an answer first (one that
 * took over a lapsed claim), that answer is given, so every run of the request answers alike.
 */
async function answerOnce<R, Out, D extends MerchantDeps>(
  request: MerchantRequest<R, D>,
  key: RequestKey,
  lease: string,
  run: (request: MerchantRequest<R, D>) => Promise<Out>,
  statusCode: number,
  remembered: RememberedAs<R, Out, D> | undefined,
): Promise<APIGatewayProxyStructuredResultV2> {
  const d = request.deps;
  let out: Out;
  try {
    out = await run(request);
  } catch (e) {
    if (!(e instanceof ApiError) || !remembersRefusal(e.entry)) {
      await d.requestKeys.release(key.id, lease).catch((error: unknown) => logger.warn('giving up an Idempotency-Key claim failed; it lapses', { error: error as Error }));
      throw e;
    }
    const refusal: RememberedAnswer = { statusCode: e.httpStatus, body: JSON.stringify(e.toEnvelope()) };
    const kept = await keep(d, key, refusal);
    if (sameAnswer(kept, refusal)) throw e;
    return answerAgain(kept, statusCode, remembered, request);
  }
  const answer: RememberedAnswer = { statusCode, body: JSON.stringify(remembered ? remembered.forget(out) : out) };
  const kept = await keep(d, key, answer);
  return sameAnswer(kept, answer) ? jsonResponse(statusCode, out) : answerAgain(kept, statusCode, remembered, request);
}

/**
 * Keeps the answer on the key. The operation has happened by now, so a failure to keep it must not
 * turn the answer into a 5xx: it is logged, the claim lapses, and a replay runs the use case again,
 * which finds what this run did.
 */
async function keep(d: MerchantDeps, key: RequestKey, answer: RememberedAnswer): Promise<RememberedAnswer> {
  try {
    return await d.requestKeys.remember(key.id, answer, d.clock.now());
  } catch (error) {
    logger.warn('keeping the answer of an Idempotency-Key failed; a replay runs the request again', { error: error as Error });
    return answer;
  }
}

const sameAnswer = (a: RememberedAnswer, b: RememberedAnswer): boolean => a.statusCode === b.statusCode && a.body === b.body;

/** A kept answer given again: as it was sent, or (a route's success that is not kept as sent) recalled. */
async function answerAgain<R, Out, D extends MerchantDeps>(answer: RememberedAnswer, statusCode: number, remembered: RememberedAs<R, Out, D> | undefined, request: MerchantRequest<R, D>): Promise<APIGatewayProxyStructuredResultV2> {
  if (remembered && answer.statusCode === statusCode) return jsonResponse(statusCode, await remembered.recall(JSON.parse(answer.body) as unknown, request));
  return { statusCode: answer.statusCode, headers: { ...JSON_HEADERS }, body: answer.body };
}

export { publicBaseUrl } from './base-url';
