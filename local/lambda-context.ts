import { randomUUID } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';

/** The Lambda context a local invocation gets: the function's name, memory and deadline. */
export function lambdaContext(functionId: string, timeoutSeconds: number, memoryMb = 256): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${functionId}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:local-${functionId}`,
    memoryLimitInMB: String(memoryMb),
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/local-${functionId}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * FUNCTION_TIMEOUT_SCALE: a multiplier of every function's timeout in the local runner (default 1,
 * at most 10). Lambda gives each invocation its own CPU; the runner shares one process between all
 * of them, so on a crowded machine (a test run with several workers beside it) a function's own work
 * slows with everything else's and can reach a timeout its Lambda never would. The acquirer's own
 * timeouts (S2S_CARD_TIMEOUT_MS …) are not scaled.
 */
export function functionTimeoutScaleOf(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.FUNCTION_TIMEOUT_SCALE;
  if (raw === undefined || raw === '') return 1;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 1 || value > 10) throw new Error(`FUNCTION_TIMEOUT_SCALE must be a number from 1 to 10, got ${JSON.stringify(raw)}`);
  return value;
}

/** How many invocations one local process runs at once, as a Lambda environment with concurrency would. */
const LOCAL_CONCURRENCY = 64;

/** The multi-concurrency InvokeStore of Lambda's runtime: one context per invocation, kept across awaits. */
class LocalInvokeStore extends InvokeStoreBase {
  private readonly als = new AsyncLocalStorage<Record<string | symbol, unknown>>();
  getContext() {
    return this.als.getStore();
  }
  hasContext() {
    return this.als.getStore() !== undefined;
  }
  get<T = unknown>(key: string | symbol): T | undefined {
    return this.als.getStore()?.[key] as T | undefined;
  }
  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key)) throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    const store = this.als.getStore();
    if (!store) throw new Error('No context available');
    store[key] = value;
  }
  run<T>(context: Record<string | symbol, unknown>, fn: () => T): T {
    return this.als.run(context, fn);
  }
}
let store: LocalInvokeStore | undefined;
let running = 0;

/**
 * Runs one invocation the way Lambda runs concurrent invocations in one execution environment:
 * inside its own InvokeStore context, so Powertools keeps the Lambda context, the keys a request
 * appended (payment_id, merchant_key) and its metrics per invocation. The local runner serves every
 * function in one process, many requests at once; without this one request's log line could carry
 * another's function name or payment. The store is put where Lambda's runtime puts it
 * (`globalThis.awslambda.InvokeStore`, replacing a single-invocation one a library may have made
 * at import), and AWS_LAMBDA_MAX_CONCURRENCY, which tells Powertools to use it, is set only while an
 * invocation runs: code loaded later elsewhere (a test file's fresh context, a child process) never
 * finds the variable without the store.
 */
export async function inInvocation<T>(context: Context, run: () => T | Promise<T>): Promise<T> {
  const runtime = ((globalThis as { awslambda?: { InvokeStore?: unknown } }).awslambda ??= {});
  if (!(runtime.InvokeStore instanceof LocalInvokeStore)) runtime.InvokeStore = store ??= new LocalInvokeStore();
  if (running++ === 0) process.env.AWS_LAMBDA_MAX_CONCURRENCY = String(LOCAL_CONCURRENCY);
  try {
    return await (runtime.InvokeStore as LocalInvokeStore).run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, run);
  } finally {
    if (--running === 0) delete process.env.AWS_LAMBDA_MAX_CONCURRENCY;
  }
}
