import { appendFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { readConfig } from '../../lambdas/config';
import type { DepsWithCallbacks } from '../../lambdas/callback-container';
import { setDeps } from '../../lambdas/container';
import type { Clock } from '../../lambdas/ports/clock';
import type { Ids } from '../../lambdas/ports/ids';
import type { MerchantSettings } from '../../lambdas/ports/merchants';
import { createMerchant, type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { backendEnvironment, localDeps, startLocalBackend, type LocalBackend } from '../../local/backend';
import { withLocalStream, type LocalStream } from '../../local/local-stream';
import { functionTimeoutScaleOf } from '../../local/lambda-context';
import { createApp } from '../../local/http-server';
import { localRoutes } from '../../lib/routes';
import { acquirerTimeoutsOf } from '../../lib/time-budget';
import { postJson, rawRequest, type HttpAnswer, type RawRequest } from './http';
import { signBody } from './sign';
import { CALLBACK_DISPATCHER_ID, asFunction, attributeRequests, recordTableAccess, refusalReport, type TableAccessRecorder } from './table-access';

export interface TestServiceOptions {
  readonly clock?: Clock;
  readonly ids?: Ids;
  /** Extra configuration, e.g. { PUBLIC_BASE_URL } or { SECRET_CACHE_TTL_SECONDS }. */
  readonly env?: Record<string, string>;
  /**
   * Callbacks as the local runner delivers them: the stream's writes (CALLBACK_STREAM=1) and its
   * in-process stand-in for the stream (local/local-stream.ts). Otherwise the tests run the relay
   * and the dispatcher themselves.
   */
  readonly localStream?: boolean;
}

export interface TestService {
  /** http://127.0.0.1:<port>, no trailing slash. */
  readonly baseUrl: string;
  readonly deps: DepsWithCallbacks;
  readonly backend: LocalBackend;
  /** The in-process stream, with `localStream`. */
  readonly localStream?: LocalStream;
  createMerchant(input?: { name?: string; settings?: Partial<MerchantSettings> }): Promise<MerchantCredentials>;
  /** POSTs the body as JSON, unsigned. */
  post<T = unknown>(path: string, body: unknown): Promise<HttpAnswer<T>>;
  /** POSTs the body as JSON with its hash computed from the password (protocol.md §1). */
  signedPost<T = unknown>(path: string, body: Record<string, unknown>, password: string): Promise<HttpAnswer<T>>;
  request<T = unknown>(r: RawRequest): Promise<HttpAnswer<T>>;
  /** Every item in the table, for asserting what was (not) persisted. */
  tableItems(): Promise<Record<string, unknown>[]>;
  /**
   * What each function asked of DynamoDB, checked against its IAM grant (test/support/table-access.ts).
   * close() fails the test file if any call would have been refused.
   */
  readonly tableAccess: TableAccessRecorder;
  /** The lines the runner would print for each refused request (local/http-server.ts), in order. */
  readonly refusals: readonly string[];
  close(): Promise<void>;
}

/**
 * The whole service in this process, as the local runner serves it: the route table over real HTTP,
 * the real handlers and AWS SDK, dynalite and the Secrets Manager stand-in in memory. One per test
 * file (Jest runs files in parallel workers, each with its own backend).
 */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const backend = await startLocalBackend();
  const refusals: string[] = [];
  // Listening first: the links the service hands out are built on its address (PUBLIC_BASE_URL), as in the runner.
  // The routes of the configured acquirer, as the runner serves them (the sandbox unless the test says otherwise).
  const app: Server = createApp(localRoutes(options.env?.ACQUIRER === 's2s-card' ? 's2s-card' : 'sandbox'), {
    operatorKey: backend.operatorKey,
    logRefusal: (line) => refusals.push(line),
    // The acquirer timeouts the test configures (its env), else the stack's: route timeouts derive from them as in the runner.
    acquirerTimeouts: acquirerTimeoutsOf(options.env ?? {}),
    // FUNCTION_TIMEOUT_SCALE in the test's env, as the runner reads it (local/lambda-context.ts).
    timeoutScale: functionTimeoutScaleOf(options.env ?? {}),
  });
  attributeRequests(app);
  try {
    await new Promise<void>((resolve, reject) => {
      app.once('error', reject);
      app.listen(0, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    // A set-up that failed half way still stops what it started, or the test process never exits.
    await backend.close();
    throw error;
  }
  const baseUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  // The tests' receivers listen on loopback: allowed explicitly, as the local runner does for its own.
  // Tests drive a clock that stands still: every request of a file falls in one of its seconds, so the
  // per-merchant limit (ADR 0025) is set out of reach unless a test sets its own.
  const env = backendEnvironment(backend, { PUBLIC_BASE_URL: baseUrl, ALLOW_LOOPBACK_CALLBACKS: '1', MERCHANT_REQUESTS_PER_SECOND: '1000', ...(options.localStream ? { CALLBACK_STREAM: '1' } : {}), ...options.env });
  const previousEnv = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const plain = localDeps(backend, readConfig(), options.clock, options.ids);
  // The stream's deliveries run as the stream dispatcher's function (its grant checks their table calls).
  const streamed = options.localStream ? withLocalStream(plain, (run) => asFunction(CALLBACK_DISPATCHER_ID, run)) : undefined;
  const deps = streamed ?? plain;
  setDeps(deps);
  const tableAccess = recordTableAccess(deps.db);

  return {
    baseUrl,
    deps,
    backend,
    ...(streamed ? { localStream: streamed.localStream } : {}),
    refusals,
    createMerchant: (input = {}) => createMerchant(deps, { name: input.name ?? 'Test Shop', settings: input.settings }),
    post: (path, body) => postJson(baseUrl, path, body),
    signedPost: (path, body, password) => postJson(baseUrl, path, signBody(path, body, password)),
    request: (r) => rawRequest(baseUrl, r),
    tableItems: async () => {
      const items: Record<string, unknown>[] = [];
      let ExclusiveStartKey: Record<string, unknown> | undefined;
      do {
        const page = await deps.db.send(new ScanCommand({ TableName: backend.tableName, ExclusiveStartKey }));
        items.push(...(page.Items ?? []));
        ExclusiveStartKey = page.LastEvaluatedKey;
      } while (ExclusiveStartKey);
      return items;
    },
    tableAccess,
    close: async () => {
      await streamed?.localStream.stop();
      app.closeAllConnections();
      await new Promise<void>((resolve) => app.close(() => resolve()));
      // Keep-alive sockets of the SDK clients would hold the backend's servers open.
      deps.db.destroy();
      deps.secretsClient.destroy();
      await backend.close();
      setDeps(undefined);
      for (const [k, v] of Object.entries(previousEnv)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      if (process.env.TABLE_ACCESS_LOG) appendFileSync(process.env.TABLE_ACCESS_LOG, tableAccess.observed().map((c) => `${JSON.stringify(c)}\n`).join(''));
      const refused = tableAccess.refused();
      if (refused.length) throw new Error(refusalReport(refused));
    },
  };
}
