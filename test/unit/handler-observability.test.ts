import { createSocket, type Socket } from 'node:dgram';
import type { Context } from 'aws-lambda';
import { CALLBACK_DISPATCHER, JOBS, RECEIPT_FEEDBACK } from '../../lib/jobs';
import { FALLBACK_ROUTE, ROUTES } from '../../lib/routes';

// As in Lambda, with a sampled trace header and a daemon to send to (a UDP socket of this test);
// metrics kept off so the flushes print nothing. Set before the handlers are loaded.
process.env.AWS_LAMBDA_FUNCTION_NAME = 'checkout-test';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const TRACE = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
const { metrics } = require('../../lambdas/observability/telemetry') as typeof import('../../lambdas/observability/telemetry');

/**
 * Every function the stack deploys (each route's, the $default route's, each job's, the stream
 * dispatcher's) runs the observability middlewares: its X-Ray handler subsegment, sent before the
 * invocation returns, and the metrics flush, whether the invocation succeeds or fails (the receipt
 * feedback function, which EventBridge invokes, included). Invoked here
 * without configuration, most fail at once, which is when both matter as much.
 */
let daemon: Socket;
let received: string[] = [];
beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (message) => received.push(message.toString('utf8')));
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  process.env.AWS_XRAY_DAEMON_ADDRESS = `127.0.0.1:${daemon.address().port}`;
  process.env._X_AMZN_TRACE_ID = TRACE;
});
afterAll(() => {
  daemon.close();
  delete process.env._X_AMZN_TRACE_ID;
});
beforeEach(() => {
  received = [];
});
/** The datagrams the daemon has got, once a few milliseconds passed for the last one to arrive. */
const datagrams = async (): Promise<Record<string, unknown>[]> => {
  await new Promise((r) => setTimeout(r, 20));
  // One pass of the poll phase after the timer (setImmediate runs after it): a late timer alone may come first.
  await new Promise((r) => setImmediate(r));
  return received.map((m) => JSON.parse(m.split('\n')[1]!) as Record<string, unknown>);
};
const context = {
  functionName: 'test-function',
  awsRequestId: 'request-1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

const entries = [...new Set([...ROUTES.map((r) => r.entry), FALLBACK_ROUTE.entry, ...JOBS.map((j) => j.entry), CALLBACK_DISPATCHER.entry, RECEIPT_FEEDBACK.entry])];

const eventFor = (entry: string) =>
  entry.includes('callback-dispatch')
    ? { Records: [] }
    : JOBS.some((j) => j.entry === entry)
      ? {}
      : { version: '2.0', routeKey: 'POST /x', rawPath: '/x', headers: {}, body: '', isBase64Encoded: false, requestContext: { requestId: 'req-1', http: { method: 'POST', path: '/x', sourceIp: '127.0.0.1' } } };

afterEach(() => jest.restoreAllMocks());

test.each(entries.map((e) => [e]))('%s traces its invocation and flushes its metrics', async (entry) => {
  const flushed = jest.spyOn(metrics, 'publishStoredMetrics');
  const { handler } = (await import(`../../${entry.replace(/\.ts$/, '')}`)) as { handler: (event: unknown, context: Context) => Promise<unknown> };
  await handler(eventFor(entry), context).catch(() => undefined);
  expect(flushed).toHaveBeenCalledTimes(1);
  const handlerSegments = (await datagrams()).filter((d) => d.name === '## checkout-test');
  expect(handlerSegments).toHaveLength(1);
  expect(handlerSegments[0]).toMatchObject({ type: 'subsegment', trace_id: '1-5759e988-bd862e3fe1be46a994272793', parent_id: '53995c3f42cd8ad8', annotations: { Service: 'checkout' } });
  expect(handlerSegments[0]!.end_time).toBeGreaterThanOrEqual(handlerSegments[0]!.start_time as number);
});

test('an invocation that is not sampled sends nothing', async () => {
  process.env._X_AMZN_TRACE_ID = TRACE.replace('Sampled=1', 'Sampled=0');
  try {
    const { handler } = (await import('../../lambdas/handlers/not-found')) as { handler: (event: unknown, context: Context) => Promise<unknown> };
    await handler(eventFor('lambdas/handlers/not-found.ts'), context);
    expect(await datagrams()).toEqual([]);
  } finally {
    process.env._X_AMZN_TRACE_ID = TRACE;
  }
});
