import type { Context } from 'aws-lambda';
import { CALLBACK_DISPATCHER, JOBS } from '../../lib/jobs';
import { FALLBACK_ROUTE, ROUTES } from '../../lib/routes';

// As in Lambda, where the tracer exists (it traces only under X-Ray: here it stays off); metrics
// kept off so the flushes print nothing. Set before the handlers are loaded.
process.env.AWS_LAMBDA_FUNCTION_NAME = 'checkout-test';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const { metrics, tracer } = require('../../lambdas/observability/telemetry') as typeof import('../../lambdas/observability/telemetry');

/**
 * Every function the stack deploys (each route's, the $default route's, each job's, the stream
 * dispatcher's) runs the Powertools middlewares: the tracer's handler subsegment and the metrics
 * flush, whether the invocation succeeds or fails. Invoked here without configuration, most fail at
 * once, which is when the flush matters as much.
 */
const context = {
  functionName: 'test-function',
  awsRequestId: 'request-1',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

const entries = [...new Set([...ROUTES.map((r) => r.entry), FALLBACK_ROUTE.entry, ...JOBS.map((j) => j.entry), CALLBACK_DISPATCHER.entry])];

const eventFor = (entry: string) =>
  entry.includes('callback-dispatch')
    ? { Records: [] }
    : JOBS.some((j) => j.entry === entry)
      ? {}
      : { version: '2.0', routeKey: 'POST /x', rawPath: '/x', headers: {}, body: '', isBase64Encoded: false, requestContext: { requestId: 'req-1', http: { method: 'POST', path: '/x', sourceIp: '127.0.0.1' } } };

afterEach(() => jest.restoreAllMocks());

test.each(entries.map((e) => [e]))('%s traces its invocation and flushes its metrics', async (entry) => {
  const flushed = jest.spyOn(metrics, 'publishStoredMetrics');
  if (!tracer) throw new Error('no tracer in a Lambda environment');
  const traced = jest.spyOn(tracer, 'isTracingEnabled');
  const { handler } = (await import(`../../${entry.replace(/\.ts$/, '')}`)) as { handler: (event: unknown, context: Context) => Promise<unknown> };
  await handler(eventFor(entry), context).catch(() => undefined);
  expect(traced).toHaveBeenCalled();
  expect(flushed).toHaveBeenCalledTimes(1);
});
