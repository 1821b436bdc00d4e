import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROUTES } from '../../lib/routes';
import { backendEnvironment } from '../../local/backend';
import { checkBundles } from '../bench/bundle-check';
import { INVOKED_ROUTES, sandboxBundles, type Bundle } from '../bench/bundles';
import { measureLatency } from '../bench/latency';
import { startTestService, type TestService } from '../support/service';

/**
 * The handlers as Lambda runs them: bundled with the stack's esbuild options (its SDK stand-ins for
 * credentials, event streams, endpoint discovery, retries and SHA-256, the stage's acquirer define, minified ESM with
 * the require banner), imported into this process and invoked with API Gateway events against the
 * local engine and secrets over HTTP with the real SDK. The TypeScript the other tests run is not
 * what is deployed; this is. The environment is Lambda's: no endpoint settings of ours, so the
 * clients take their credentials the way a function does (the environment, through the bundled
 * stand-in for the default chain) and reach the local engine through the SDK's own
 * AWS_ENDPOINT_URL_<SERVICE> settings.
 */
jest.setTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), 'checkout-lambda-bundles-'));
let service: TestService;
let bundles: Bundle[];

function lambdaEnvironment(endpoints?: { DYNAMODB_ENDPOINT?: string; SECRETS_MANAGER_ENDPOINT?: string }): Record<string, string> {
  const { DYNAMODB_ENDPOINT, SECRETS_MANAGER_ENDPOINT, ...rest } = { ...backendEnvironment(service.backend), ...endpoints };
  if (!DYNAMODB_ENDPOINT || !SECRETS_MANAGER_ENDPOINT) throw new Error('the local backend has no endpoints');
  return { ...rest, AWS_REGION: 'eu-west-1', AWS_SESSION_TOKEN: 'local', AWS_ENDPOINT_URL_DYNAMODB: DYNAMODB_ENDPOINT, AWS_ENDPOINT_URL_SECRETS_MANAGER: SECRETS_MANAGER_ENDPOINT };
}

beforeAll(async () => {
  [service, bundles] = await Promise.all([startTestService(), sandboxBundles(dir)]);
});
afterAll(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('each bundled route answers, and what it wrote is what the service reads', async () => {
  expect(bundles.map((b) => b.spec.name).sort()).toEqual([...INVOKED_ROUTES].sort());
  const results = await checkBundles(ROUTES, bundles, {
    baseUrl: service.baseUrl,
    environment: lambdaEnvironment(),
    merchant: await service.createMerchant({ name: 'Bundle Shop' }),
  });
  const checked = results.filter((r) => r.outcome !== 'not checked');
  expect(checked.map((r) => [r.route.id, r.outcome, r.detail])).toEqual(checked.map((r) => [r.route.id, 'works', r.detail]));
  expect(checked.map((r) => r.route.id)).toEqual(['CreateSession', 'PaymentStatus', 'CheckoutPage', 'CheckoutStatus']);
});

test('session, status, pay on the page and a refund run through the bundles in a row', async () => {
  const merchant = await service.createMerchant({ name: 'Bundle Flow Shop' });
  // In this process the test service has set its own endpoints; the bundles must not see them.
  const ours = { DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT, SECRETS_MANAGER_ENDPOINT: process.env.SECRETS_MANAGER_ENDPOINT };
  delete process.env.DYNAMODB_ENDPOINT;
  delete process.env.SECRETS_MANAGER_ENDPOINT;
  const rows = await measureLatency(bundles, lambdaEnvironment(ours), merchant, { warmup: 0, samples: 3 }).finally(() => {
    for (const [k, v] of Object.entries(ours)) if (v !== undefined) process.env[k] = v;
  });
  expect(rows.map((r) => [r.operation, r.samples, r.errors, r.firstError])).toEqual([
    ['session', 3, 0, undefined],
    ['status', 3, 0, undefined],
    ['pay', 3, 0, undefined],
    ['refund', 3, 0, undefined],
  ]);
});
