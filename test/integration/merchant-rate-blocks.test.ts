import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { DynamoMerchantRateLimiter, maxBlockOf } from '../../lambdas/adapters/dynamodb/merchant-rate';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { startLocalBackend, type LocalBackend } from '../../local/backend';
import { recordCalls } from '../support/sdk-calls';

/**
 * A merchant's requests per second taken in blocks (ADR 0025): several instances of a function
 * (limiters over one table, the local engine), requests spread over them at random, concurrently,
 * across seconds. Whatever the spread, no second admits more than the limit; a second asked for
 * less than what blocks can strand is served in full; and a merchant's steady traffic costs a
 * write per block, not per request.
 */
let backend: LocalBackend;
beforeAll(async () => {
  backend = await startLocalBackend();
});
afterAll(() => backend.close());

const T0 = Date.parse('2031-03-01T10:00:00.000Z');

test('blocks are an eighth of the limit at most, and one request at a time under 16 a second', () => {
  expect(maxBlockOf(40)).toBe(5);
  expect(maxBlockOf(1000)).toBe(125);
  expect(maxBlockOf(15)).toBe(1);
  expect(maxBlockOf(1)).toBe(1);
});

test('a steady merchant on one instance: every request admitted, one write per block', async () => {
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  const calls = recordCalls(db, 'dynamodb');
  const limiter = new DynamoMerchantRateLimiter(db, backend.tableName, 40);
  const merchant = randomUUID();
  let admitted = 0;
  // 20 requests in each of 5 seconds, one after another.
  for (let s = 0; s < 5; s++) for (let i = 0; i < 20; i++) if ((await limiter.admit(merchant, new Date(T0 + s * 1000 + i * 40))).allowed) admitted++;
  expect(admitted).toBe(100);
  // Blocks of 1, 1, 2, 4, 5, 5… in the first second, then blocks of 5: far fewer than 100 writes.
  expect(calls.calls.length).toBeLessThanOrEqual(30);
  expect(calls.calls.every((c) => c === 'UpdateItemCommand')).toBe(true);
});

test('many requests at once on one instance, well under the limit: all admitted, one block at a time', async () => {
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  const calls = recordCalls(db, 'dynamodb');
  const limiter = new DynamoMerchantRateLimiter(db, backend.tableName, 1000);
  const merchant = randomUUID();
  // A busy second first (its count sizes the next second's blocks: 125, an eighth of the limit).
  for (let i = 0; i < 300; i += 20) await Promise.all(Array.from({ length: 20 }, () => limiter.admit(merchant, new Date(T0 + 90_000))));
  calls.reset();
  // 16 at a time (as the local runner serves them) in the next second, 280 in all: none refused.
  let admitted = 0;
  for (let i = 0; i < 280; i += 16) {
    const answers = await Promise.all(Array.from({ length: Math.min(16, 280 - i) }, () => limiter.admit(merchant, new Date(T0 + 91_000))));
    admitted += answers.filter((a) => a.allowed).length;
  }
  expect(admitted).toBe(280);
  // Concurrent requests wait for the block being taken instead of each taking one: 280 / 125, rounded up.
  expect(calls.calls.length).toBe(3);
});

test('requests of two seconds in flight at once (a second\'s turn under load) keep their own windows: all admitted, a few writes', async () => {
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  const calls = recordCalls(db, 'dynamodb');
  const limiter = new DynamoMerchantRateLimiter(db, backend.tableName, 1000);
  const merchant = randomUUID();
  // Each round: one request stamped with the second before the turn and one with the second after, at once.
  const answers = [];
  for (let round = 0; round < 30; round++) {
    answers.push(...(await Promise.all([limiter.admit(merchant, new Date(T0 + 200_999)), limiter.admit(merchant, new Date(T0 + 201_000))])));
  }
  expect(answers.every((a) => a.allowed)).toBe(true);
  // Blocks of each second grow as that second's own requests do: nowhere near a write per request.
  expect(calls.calls.length).toBeLessThanOrEqual(20);
});

test('instances and seconds at random: never more than the limit in a second; a second asked for little is served in full', async () => {
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 60 }),
      fc.integer({ min: 1, max: 5 }),
      // Each request: which instance takes it, and in which of three seconds.
      fc.array(fc.record({ instance: fc.nat(4), second: fc.nat(2), offsetMs: fc.nat(999) }), { minLength: 1, maxLength: 120 }),
      async (limit, instances, requests) => {
        const limiters = Array.from({ length: instances }, () => new DynamoMerchantRateLimiter(db, backend.tableName, limit));
        const merchant = randomUUID();
        // Concurrent within a second (as instances run at once), the seconds one after another.
        const admittedPer: number[] = [];
        for (let second = 0; second < 3; second++) {
          const these = requests.filter((r) => r.second === second).sort((a, b) => a.offsetMs - b.offsetMs);
          const answers = await Promise.all(these.map((r) => limiters[r.instance % instances]!.admit(merchant, new Date(T0 + second * 1000 + r.offsetMs))));
          const admitted = answers.filter((a) => a.allowed).length;
          admittedPer.push(admitted);
          expect(admitted).toBeLessThanOrEqual(limit);
          // Blocks stranded on other instances are at most (block - 1) each: below that, nobody is refused.
          const strandable = instances * (maxBlockOf(limit) - 1);
          if (these.length <= limit - strandable) expect(admitted).toBe(these.length);
          for (const a of answers) if (!a.allowed) expect(a).toEqual({ allowed: false, retryAfterSeconds: 1 });
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('a flood: the limit admitted, then at most one write per instance for the rest of the second', async () => {
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  const calls = recordCalls(db, 'dynamodb');
  const limiters = Array.from({ length: 3 }, () => new DynamoMerchantRateLimiter(db, backend.tableName, 40));
  const merchant = randomUUID();
  const at = new Date(T0 + 50_000);
  const first = await Promise.all(Array.from({ length: 120 }, (_, i) => limiters[i % 3]!.admit(merchant, at)));
  expect(first.filter((a) => a.allowed).length).toBeLessThanOrEqual(40);
  expect(first.filter((a) => a.allowed).length).toBeGreaterThan(0);
  calls.reset();
  // The window is full for everyone now; each instance learns it with at most one more write.
  for (let round = 0; round < 5; round++) {
    const more = await Promise.all(limiters.map((l) => l.admit(merchant, at)));
    expect(more.every((a) => !a.allowed)).toBe(true);
  }
  expect(calls.calls.length).toBeLessThanOrEqual(3);
});
