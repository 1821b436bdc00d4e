import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoCallbackStore } from './adapters/dynamodb/callback-store';
import { shardCountsOf } from './adapters/dynamodb/keys';
import { createCallbackTransport } from './adapters/http/callback-transport';
import { tracedTransport } from './adapters/tracing/remote-calls';
import { destinationPolicy, receiptsEnabled, type Config } from './config';
import { DynamoReceiptOutbox } from './adapters/dynamodb/receipt-outbox';
import type { ReceiptOutbox } from './ports/receipts';
import type { Deps } from './container';
import { CALLBACK_POLICY, type CallbackPolicy } from './domain/callback';
import type { CallbackStore, CallbackTransport } from './ports/callbacks';

/**
 * What delivering and showing callbacks needs beyond the common dependencies. Kept out of
 * lambdas/container.ts so the functions that never touch callbacks (the merchant API, the page)
 * do not bundle their code: only the relay, the dispatcher and the callback routes import this.
 */
export interface CallbackParts {
  /** The callback outbox and delivery log. */
  readonly callbacks: CallbackStore;
  readonly transport: CallbackTransport;
  readonly callbackPolicy: CallbackPolicy;
  /** Jitter of retry delays. */
  readonly random: () => number;
  /** Where a payment's approval queues its e-mail receipt; only on a stage that sends receipts. */
  readonly receipts?: ReceiptOutbox;
}

export type DepsWithCallbacks = Deps & CallbackParts;

export function callbackParts(config: Config, db: DynamoDBDocumentClient): CallbackParts {
  return {
    callbacks: new DynamoCallbackStore(db, config.TABLE_NAME, shardCountsOf(config.TABLE_SHARDS)),
    transport: tracedTransport(createCallbackTransport(destinationPolicy(config))),
    callbackPolicy: { ...CALLBACK_POLICY, timeoutMs: config.CALLBACK_TIMEOUT_MS, firstDelayMs: config.CALLBACK_FIRST_RETRY_MS },
    random: Math.random,
    ...(receiptsEnabled(config) ? { receipts: new DynamoReceiptOutbox(db, config.TABLE_NAME, shardCountsOf(config.TABLE_SHARDS)) } : {}),
  };
}

/** By database client: a request may hand over its own copy of the dependencies (an operator's audit log). */
const built = new WeakMap<DynamoDBDocumentClient, CallbackParts>();

/**
 * The dependencies with their callback parts: those already given (the local runner and the tests
 * build them in, and may replace the transport or the clock), else built once per process.
 */
export function withCallbacks<D extends Pick<Deps, 'config' | 'db'>>(base: D): D & CallbackParts {
  if ('callbacks' in base) return base as D & CallbackParts;
  let parts = built.get(base.db);
  if (!parts) {
    parts = callbackParts(base.config, base.db);
    built.set(base.db, parts);
  }
  return { ...base, ...parts };
}
