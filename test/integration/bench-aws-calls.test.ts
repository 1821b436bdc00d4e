import { countAwsCalls, countCallsOf, OPERATIONS } from '../bench/aws-calls';
import { startTestService, type TestService } from '../support/service';

/**
 * The benchmark's count of AWS calls per operation (test/bench/aws-calls.ts, docs/benchmarks.md)
 * runs every operation it names, and counts each DynamoDB call on the side its key belongs to: a
 * call on the sandbox's records made outside the objects counted as the acquirer's (as the
 * challenge pages' once were) stops the count, here rather than halfway through `npm run bench`.
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service.close());

it('every operation runs, and no call is counted on the wrong side', async () => {
  const results = await countAwsCalls(OPERATIONS, service, countCallsOf(service));
  expect(results.map((r) => r.operation.name)).toEqual(OPERATIONS.map((o) => o.name));
  for (const r of results) expect({ operation: r.operation.name, misattributed: r.calls.misattributed }).toEqual({ operation: r.operation.name, misattributed: [] });
  // The sandbox's challenge pages read its records: counted as the acquirer's, not ours.
  const challenge = results.find((r) => r.operation.name.startsWith('challenge page'))!;
  expect(challenge.calls.acquirerDynamodb).toBeGreaterThan(0);
}, 120_000);
