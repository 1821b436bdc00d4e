import { DynamoSearchLeases } from '../../lambdas/adapters/dynamodb/search-leases';
import { ApiError, ERRORS } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import { BULK_LIMITS, countPayments, exportPayments } from '../../lambdas/use-cases/admin/search';
import { adminApi, seedOperator, signIn, type AdminApi } from '../support/admin';
import { openSession } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Counts and exports are bounded per operator (issue: 20 parallel counts by one viewer all answered
 * 503 after 29.5 s and slowed the merchants): at most OPERATOR_SEARCHES_AT_ONCE run at once for one
 * operator, across instances (slots in the table), the rest answered 429 in the envelope with
 * Retry-After; and each part stops starting index reads when its budget ends, answering what it
 * read with a cursor to read on. Against the local engine, with index reads made slow on purpose.
 */
const BUDGET_MS = 1500;
const AT_ONCE = 2;
/** Each index count takes this long here: a request's rounds overrun its budget. */
const SLOW_READ_MS = 400;
const clock = new ManualClock('2030-10-07T12:00:00.000Z');

let service: TestService;
let viewer: AdminApi;
let otherViewer: AdminApi;
/** Index counts running now, the most seen at once, when each started and the longest one took. */
const reads = { running: 0, most: 0, startedAt: [] as number[], longestMs: 0, by: new Set<string>(), spans: new Map<string, { from: number; to: number }>(), starts: new Map<string, number[]>() };
/** The request id of the invocation running now (the local runner keeps it as Lambda's runtime does). */
const invocation = () => (globalThis as { awslambda?: { InvokeStore?: { getRequestId(): string } } }).awslambda?.InvokeStore?.getRequestId() ?? '-';

beforeAll(async () => {
  service = await startTestService({ clock, env: { ADMIN_SEARCH_BUDGET_MS: String(BUDGET_MS), OPERATOR_SEARCHES_AT_ONCE: String(AT_ONCE) } });
  viewer = adminApi(service, await signIn(service, await seedOperator(service, 'vera', 'vera-long-password', 'viewer')));
  otherViewer = adminApi(service, await signIn(service, await seedOperator(service, 'olga', 'olga-long-password', 'viewer')));
  // Three merchants over the default seven days: 21 merchant days, counted four at a time.
  // Payments on a few of the days, so the totals compared below are not zero.
  for (const [i, name] of ['North Shop', 'South Shop', 'East Shop'].entries()) {
    const shop = await service.createMerchant({ name });
    for (let k = 0; k <= i; k++) {
      clock.set(new Date(Date.parse('2030-10-07T12:00:00.000Z') - (i + 2 * k) * 86_400_000));
      await openSession(service, shop);
    }
  }
  clock.set('2030-10-07T12:00:00.000Z');
  // The handlers loaded once (a Lambda's init, not counted in a request's time).
  expect((await viewer.countPayments()).status).toBe(200);
  expect((await viewer.exportPayments()).status).toBe(200);
  const store = service.deps.store as unknown as { countPaymentsOfDay: (...a: unknown[]) => Promise<number> };
  const original = store.countPaymentsOfDay.bind(store);
  store.countPaymentsOfDay = async (...args: unknown[]) => {
    reads.running++;
    reads.most = Math.max(reads.most, reads.running);
    const started = Date.now();
    reads.startedAt.push(started);
    const id = invocation();
    reads.by.add(id);
    reads.starts.set(id, [...(reads.starts.get(id) ?? []), started]);
    try {
      await new Promise((resolve) => setTimeout(resolve, SLOW_READ_MS));
      return await original(...args);
    } finally {
      reads.running--;
      reads.longestMs = Math.max(reads.longestMs, Date.now() - started);
      const span = reads.spans.get(id);
      reads.spans.set(id, { from: Math.min(span?.from ?? started, started), to: Math.max(span?.to ?? 0, Date.now()) });
    }
  };
}, 60_000);
afterAll(() => service.close());

const timed = async <T>(request: () => Promise<T>) => {
  const started = Date.now();
  const answer = await request();
  return { answer, ms: Date.now() - started };
};

test(`20 parallel counts by one viewer: none answers 5xx, at most ${AT_ONCE} run at once, the rest 429 with Retry-After, each within its budget`, async () => {
  Object.assign(reads, { most: 0, startedAt: [], longestMs: 0, by: new Set<string>(), spans: new Map(), starts: new Map() });
  const floodStarted = Date.now();
  const answers = await Promise.all(Array.from({ length: 20 }, () => timed(() => viewer.countPayments())));
  const statuses = answers.map((a) => a.answer.status);
  expect(statuses.filter((s) => s >= 500)).toEqual([]);
  const ran = answers.filter((a) => a.answer.status === 200);
  const refused = answers.filter((a) => a.answer.status === 429);
  expect(ran.length + refused.length).toBe(20);
  expect(ran.length).toBeGreaterThanOrEqual(1);
  // At most AT_ONCE counts read at any moment: each count's reads lie inside the time it held its
  // slot. (How many ran in all depends on how the twenty arrive: a count that ended gives its slot
  // to one sent later.)
  const spans = [...reads.spans.values()];
  const overlapping = Math.max(...spans.map((s) => spans.filter((o) => o.from <= s.from && s.from < o.to).length));
  expect(overlapping).toBeLessThanOrEqual(AT_ONCE);
  // Each running count reads at most BULK_LIMITS.countConcurrency merchant days at once.
  expect(reads.most).toBeLessThanOrEqual(AT_ONCE * BULK_LIMITS.countConcurrency);
  for (const { answer } of refused) {
    expect(answer.json).toEqual({ error_code: ERRORS.OPERATOR_SEARCHES_BUSY.code, error_message: ERRORS.OPERATOR_SEARCHES_BUSY.message, errors: [] });
    expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }
  for (const { answer, ms } of ran) {
    // 21 merchant days in rounds of four at over 400 ms a round do not fit 1.5 s: a part, and where to go on.
    expect(answer.json.complete).toBe(false);
    expect(answer.json.cursor).toEqual(expect.any(String));
    // The budget, the round under way when it ended, and the answer: never the route's 29 s.
    expect(ms).toBeLessThan(BUDGET_MS + reads.longestMs + 1000);
  }
  // No index read started after the budget, counted from each request's first read (just after it
  // took its slot: on a busy machine the twenty arrive spread out, so not from the flood's start).
  for (const [id, starts] of reads.starts) expect([id, Math.max(...starts) - Math.min(...starts) < BUDGET_MS + 500]).toEqual([id, true]);
  expect(Math.min(...reads.startedAt)).toBeGreaterThanOrEqual(floodStarted);
  // Refused ones read nothing: every index read belongs to a request that ran.
  expect(reads.by.size).toBe(ran.length);
  expect(reads.by.has('-')).toBe(false);
}, 60_000);

test('the slots are given back: the count resumes from its cursor to the same total a whole count gives', async () => {
  let cursor: string | undefined;
  let total = 0;
  let parts = 0;
  for (; parts < 20; parts++) {
    const res = await viewer.countPayments(cursor ? { cursor } : {});
    expect(res.status).toBe(200);
    total = res.json.total;
    cursor = res.json.cursor;
    if (res.json.complete) break;
  }
  expect(parts).toBeGreaterThanOrEqual(1);
  const whole = await countPayments(service.deps, {});
  expect(whole.complete).toBe(true);
  expect(whole.total).toBe(6);
  expect(total).toBe(whole.total);
}, 60_000);

test("one viewer's flood does not take another operator's slots", async () => {
  const [flood, other] = await Promise.all([Promise.all(Array.from({ length: 6 }, () => viewer.countPayments())), otherViewer.countPayments()]);
  expect(flood.some((r) => r.status === 429)).toBe(true);
  expect(other.status).toBe(200);
}, 60_000);

test('exports are bounded alike', async () => {
  const answers = await Promise.all(Array.from({ length: 8 }, () => viewer.exportPayments()));
  expect(answers.filter((r) => r.status >= 500)).toEqual([]);
  expect(answers.filter((r) => r.status === 200).length).toBeLessThanOrEqual(AT_ONCE);
  expect(answers.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(8 - AT_ONCE);
}, 60_000);

test('a budget that ends before a single index read answers "narrow your search" (422 in the envelope), never a part without progress', async () => {
  const spent = { stopAt: Date.now() - 1 };
  for (const run of [() => countPayments(service.deps, {}, spent), () => exportPayments(service.deps, {}, spent)]) {
    const error = await run().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).httpStatus).toBe(422);
    expect((error as ApiError).toEnvelope()).toEqual({ error_code: ERRORS.SEARCH_TOO_BROAD.code, error_message: ERRORS.SEARCH_TOO_BROAD.message, errors: [] });
  }
});

test('a slot held by a request that died lapses at its deadline, and only its holder gives it back', async () => {
  const leases = new DynamoSearchLeases(service.deps.db, service.backend.tableName, 2);
  const now = new Date('2030-10-07T12:00:00.000Z');
  const until = new Date(now.getTime() + 29_000);
  const a = await leases.take('crashy', until, now);
  const b = await leases.take('crashy', until, now);
  expect([a.taken, b.taken]).toEqual([true, true]);
  expect(await leases.take('crashy', until, now)).toEqual({ taken: false, retryAfterSeconds: expect.any(Number) });
  // Neither released (the functions died): after their deadline the slots are free again.
  const later = new Date(until.getTime() + 1);
  const c = await leases.take('crashy', new Date(later.getTime() + 29_000), later);
  expect(c.taken).toBe(true);
  // The dead holder's late release does not free the slot its successor holds.
  if (a.taken) await a.release();
  if (b.taken) await b.release();
  const d = await leases.take('crashy', new Date(later.getTime() + 29_000), later);
  expect(d.taken).toBe(true);
  expect((await leases.take('crashy', new Date(later.getTime() + 29_000), later)).taken).toBe(false);
});
