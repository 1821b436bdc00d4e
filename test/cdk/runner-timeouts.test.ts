import type { AddressInfo } from 'node:net';
import { CheckoutStack } from '../../lib/checkout-stack';
import { stackName, type Stage } from '../../lib/naming';
import { deployedRoutes, FALLBACK_ROUTE, localRoutes, ROUTES, type RouteDefinition } from '../../lib/routes';
import type { StageFile } from '../../lib/stage-settings';
import { STAGE_FILES } from '../../lib/stages';
import { ACQUIRER_TIMEOUTS, acquirerTimeoutsOf, type AcquirerTimeouts } from '../../lib/time-budget';
import { createApp, runnerTimeouts } from '../../local/http-server';
import { functionTimeoutScaleOf } from '../../local/lambda-context';
import { Template } from 'aws-cdk-lib/assertions';
import { logicalId, PROD_ACQUIRER_CONTEXT, testApp } from './synth';

/**
 * The local runner gives each route the timeout the stack gives its function for the same acquirer
 * timeouts (one derivation, lib/time-budget.ts routeTimeoutSeconds): a refund waits as long on a
 * laptop as in the cloud, not a fixed 10 s.
 */
const stackWith = (stage: Stage, acquirerTimeouts: AcquirerTimeouts) => {
  const stageFile: StageFile = { ...STAGE_FILES[stage], acquirerTimeouts };
  const stack = new CheckoutStack(testApp({ context: { stage, ...(stage === 'dev' ? {} : PROD_ACQUIRER_CONTEXT), 'aws:cdk:bundling-stacks': [] } }), stackName(stage), { stage, stageFile });
  return { stack, resources: Template.fromStack(stack).toJSON().Resources as Record<string, { Properties: { Timeout?: number } }> };
};

const SETTINGS: readonly [Stage, AcquirerTimeouts][] = [
  ['prod', ACQUIRER_TIMEOUTS],
  ['prod', { S2S_CARD_TIMEOUT_MS: 5_000, S2S_CARD_FOLLOW_UP_WAIT_MS: 2_500 }],
  ['dev', { S2S_CARD_TIMEOUT_MS: 3_000, S2S_CARD_FOLLOW_UP_WAIT_MS: 0 }],
];

test.each(SETTINGS)('on %s with %j every route has the same timeout in the runner as in the stack', (stage, timeouts) => {
  const { stack, resources } = stackWith(stage, timeouts);
  const acquirer = stage === 'dev' ? 'sandbox' : 's2s-card';
  const runner = runnerTimeouts(localRoutes(acquirer), timeouts);
  const routes = deployedRoutes(ROUTES, acquirer);
  expect(routes.length).toBeGreaterThan(20);
  const differing = routes.flatMap((r) => {
    const cloud = resources[logicalId(stack.functions.get(r.id)!.function)]!.Properties.Timeout;
    return cloud === runner.get(r.id) ? [] : [`${r.id}: stack ${cloud} s, runner ${runner.get(r.id)} s`];
  });
  expect(differing).toEqual([]);
  // The $default route's function too.
  expect(resources[logicalId(stack.fallbackFunction.function)]!.Properties.Timeout).toBe(runner.get(FALLBACK_ROUTE.id));
  // Not the old fixed 10 s: a follow-up route follows the acquirer timeouts.
  expect(runner.get('RefundPayment')).toBe(Math.ceil((2 * timeouts.S2S_CARD_TIMEOUT_MS + timeouts.S2S_CARD_FOLLOW_UP_WAIT_MS + 3_000) / 1000));
});

test('the runner reads the acquirer timeouts from its environment, the stack\'s choice when unset, and refuses a malformed one', () => {
  expect(acquirerTimeoutsOf({})).toEqual(ACQUIRER_TIMEOUTS);
  expect(acquirerTimeoutsOf({ S2S_CARD_TIMEOUT_MS: '5000' })).toEqual({ ...ACQUIRER_TIMEOUTS, S2S_CARD_TIMEOUT_MS: 5000 });
  expect(() => acquirerTimeoutsOf({ S2S_CARD_FOLLOW_UP_WAIT_MS: '4s' })).toThrow(/S2S_CARD_FOLLOW_UP_WAIT_MS must be a whole number of milliseconds/);
  // lambdas/config.ts's defaults would not fit API Gateway's limit: the runner stops, naming the route, as the synth does.
  expect(() => runnerTimeouts(localRoutes('s2s-card'), { S2S_CARD_TIMEOUT_MS: 15_000, S2S_CARD_FOLLOW_UP_WAIT_MS: 5_000 })).toThrow(/would need 38 s/);
});

/** A route with RefundPayment's timeout that answers the time its invocation was given. */
const PROBE = { ...ROUTES.find((r) => r.id === 'RefundPayment')!, id: 'RefundPayment', method: 'GET', path: '/probe', entry: 'test/cdk/fixtures/remaining-time.ts' } as RouteDefinition;
const PROBE_TIMEOUTS = { S2S_CARD_TIMEOUT_MS: 5_000, S2S_CARD_FOLLOW_UP_WAIT_MS: 2_000 };

/** The remaining time the probe sees when the runner serves it with these options. */
async function remainingInRunner(options: { timeoutScale?: number } = {}): Promise<number> {
  const app = createApp([PROBE], { acquirerTimeouts: PROBE_TIMEOUTS, ...options, logRefusal: () => undefined });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(app.address() as AddressInfo).port}/probe`);
    return ((await res.json()) as { remainingMs: number }).remainingMs;
  } finally {
    await new Promise((resolve) => app.close(resolve));
  }
}

test('an invocation in the runner is given its derived time (the Lambda context it runs with)', async () => {
  const remainingMs = await remainingInRunner();
  // 2 × 5 s + 2 s + 3 s of our own: 15 s, not the old 10 s.
  expect(remainingMs).toBeGreaterThan(14_000);
  expect(remainingMs).toBeLessThanOrEqual(15_000);
});

test('FUNCTION_TIMEOUT_SCALE multiplies each function\'s time in the runner (a crowded machine), never the acquirer\'s; a bad value stops the start', async () => {
  expect(functionTimeoutScaleOf({})).toBe(1);
  expect(functionTimeoutScaleOf({ FUNCTION_TIMEOUT_SCALE: '3' })).toBe(3);
  for (const bad of ['0.5', '11', 'three', '-2']) expect(() => functionTimeoutScaleOf({ FUNCTION_TIMEOUT_SCALE: bad })).toThrow(/FUNCTION_TIMEOUT_SCALE must be a number from 1 to 10/);
  const remainingMs = await remainingInRunner({ timeoutScale: 3 });
  // 3 × 15 s; the route's own timeout (runnerTimeouts) is unchanged.
  expect(remainingMs).toBeGreaterThan(44_000);
  expect(remainingMs).toBeLessThanOrEqual(45_000);
  expect(runnerTimeouts([PROBE], PROBE_TIMEOUTS).get('RefundPayment')).toBe(15);
});
