import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_SHARDS, SEARCH_INDEX, key, searchPartitionOf, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import { ManualClock } from '../../lambdas/ports/clock';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { WriteRecorder } from '../bench/write-heat';
import { aPayment } from '../contract/payment-store.contract';
import { adminApi, seedOperator, signIn, type AdminApi, type AdminPayment } from '../support/admin';
import { answerChallenge, openSession, paidPayment, statusOf, submitPage } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * The search index holds keys only (ADR 0043): a change of a payment's status writes nothing to
 * it, and a search or count by status reads the stored status of the payments its entries name,
 * a bounded number per page, without skipping or repeating one across shards and pages. Over real
 * HTTP against the local engine, with the real AWS SDK.
 */
jest.setTimeout(120_000);

const DAY = '2030-10-07';
const clock = new ManualClock(new Date(`${DAY}T08:00:00.000Z`));
let service: TestService;
let api: AdminApi;
let shop: MerchantCredentials;
/** The shop's payments of DAY, oldest first. */
const made: string[] = [];

beforeAll(async () => {
  service = await startTestService({ clock });
  api = adminApi(service, await signIn(service, await seedOperator(service, 'kim', 'kim-long-password', 'viewer')));
  shop = await service.createMerchant({ name: 'Keys Shop' });
  // A page of the list is 25: 66 payments are three pages, 22 of each kind. A third declined for
  // good, a third settled, a third left unpaid (read as declined once their link expires).
  for (let n = 0; n < 66; n++) {
    clock.set(new Date(Date.parse(`${DAY}T09:00:00.000Z`) + n * 60_000));
    if (n % 3 === 0) made.push((await paidPayment(service, shop, { card: '02/38', close: true })).paymentId);
    else if (n % 3 === 1) made.push((await paidPayment(service, shop)).paymentId);
    else made.push((await openSession(service, shop)).paymentId);
  }
  clock.set(`${DAY}T20:00:00.000Z`);
});
afterAll(() => service.close());

const ofDay = { from: DAY, to: DAY };

async function listed(params: Record<string, string>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages <= 100; pages++) {
    const res = await api.searchPayments({ ...params, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    ids.push(...res.json.payments.map((p: AdminPayment) => p.payment_id));
    cursor = res.json.cursor;
    if (!cursor) return { ids, pages };
  }
  throw new Error('the list never ended');
}

/** The shop's payments that read as `status` now, newest first, as the merchant's status route says. */
async function reading(status: string): Promise<string[]> {
  const readings = await Promise.all(made.map(async (id) => ({ id, status: (await statusOf(service, shop, id)).status })));
  return readings.filter((r) => r.status === status).map((r) => r.id).reverse();
}

/** What the store's client sends while `fn` runs: stored statuses read by key, search index queries. */
async function readsDuring<T>(fn: () => Promise<T>): Promise<{ result: T; statusReads: number; indexQueries: number }> {
  const seen = { statusReads: 0, indexQueries: 0 };
  const stack = service.deps.db.middlewareStack as unknown as {
    add(mw: (next: (a: unknown) => Promise<unknown>, ctx: { commandName?: string }) => (a: unknown) => Promise<unknown>, o: object): void;
    remove(name: string): boolean;
  };
  stack.add(
    (next, ctx) => async (args) => {
      const input = (args as { input: Record<string, any> }).input;
      if (/^BatchGet/.test(ctx.commandName ?? '')) {
        const request = input.RequestItems[service.backend.tableName];
        if (request?.ProjectionExpression) seen.statusReads += request.Keys.length;
      }
      if (/^Query/.test(ctx.commandName ?? '') && input.IndexName === SEARCH_INDEX) seen.indexQueries++;
      return next(args);
    },
    { step: 'initialize', name: 'searchReadCounter' },
  );
  try {
    return { result: await fn(), ...seen };
  } finally {
    stack.remove('searchReadCounter');
  }
}

describe('the admin payment search', () => {
  it("lists a merchant's day over every shard, newest first, each payment once, page by page", async () => {
    expect(new Set(made.map((id) => shardOf(id, LOCAL_SHARDS.search))).size).toBe(LOCAL_SHARDS.search);
    const { result, statusReads } = await readsDuring(() => listed({ ...ofDay, merchant: shop.merchant_key }));
    expect(result).toEqual({ ids: [...made].reverse(), pages: 3 });
    // Without a status nothing but the payments shown is read.
    expect(statusReads).toBe(0);
  });

  it('filters by status across shards and pages: each payment that reads as it once, newest first', async () => {
    for (const status of ['decline', 'settled']) {
      const expected = await reading(status);
      const { result, statusReads } = await readsDuring(() => listed({ ...ofDay, merchant: shop.merchant_key, status }));
      expect([status, result.ids]).toEqual([status, expected]);
      expect(new Set(expected.map((id) => shardOf(id, LOCAL_SHARDS.search))).size).toBe(LOCAL_SHARDS.search);
      // 44 read as declined (22 declined and 22 expired links): two pages; the settled fit in one.
      expect([status, result.pages]).toEqual([status, Math.ceil(expected.length / 25)]);
      // Every entry of the day looked at; again only those a filled page looked at past its last payment.
      expect(statusReads).toBeGreaterThanOrEqual(made.length);
      expect(statusReads).toBeLessThan(2 * made.length);
    }
    // A payment paid after its entry was written is found by its new status: the entry never had one.
    const late = await openSession(service, shop, {});
    expect((await listed({ ...ofDay, merchant: shop.merchant_key, status: 'settled' })).ids).not.toContain(late.paymentId);
    expect((await submitPage(service, late, {})).status).toBe(303);
    expect((await listed({ ...ofDay, merchant: shop.merchant_key, status: 'settled' })).ids[0]).toBe(late.paymentId);
    made.push(late.paymentId);
  });

  it('counts a status by reading the payments, a bounded number of reads per request; the index alone without one', async () => {
    for (const status of ['decline', 'settled']) {
      const res = await api.countPayments({ ...ofDay, merchant: shop.merchant_key, status });
      expect([status, res.status, res.json.complete, res.json.total]).toEqual([status, 200, true, (await reading(status)).length]);
    }
    const whole = await readsDuring(() => api.countPayments({ ...ofDay, merchant: shop.merchant_key }));
    expect([whole.result.json.total, whole.statusReads]).toEqual([made.length, 0]);
  });
});

describe("the store's page filtered by status", () => {
  it('looks at a bounded number of entries per page and leaves a cursor where it stopped: nothing skipped, nothing looked at twice', async () => {
    const merchantKey = 'keys-bound-shop';
    const day = '2030-10-08';
    // Twenty payments, only the oldest declined: with a page of 2 a page looks at 4 rounds of 2 at most.
    const payments = Array.from({ length: 20 }, (_, i) =>
      aPayment({ merchantKey, createdAt: new Date(Date.parse(`${day}T10:00:00.000Z`) + i * 1000).toISOString(), status: i === 0 ? 'decline' : 'settled' }),
    );
    for (const p of payments) await service.deps.store.createPayment(p);
    const found: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    let looked = 0;
    do {
      const { result, statusReads, indexQueries } = await readsDuring(() => service.deps.store.paymentsOfDay({ merchantKey, day, statuses: ['decline'], limit: 2, ...(cursor ? { cursor } : {}) }));
      expect(statusReads).toBeLessThanOrEqual(4 * 2);
      // Each shard's first page, and at most one more per round.
      expect(indexQueries).toBeLessThanOrEqual(LOCAL_SHARDS.search + 4);
      found.push(...result.payments.map((p) => p.paymentId));
      looked += statusReads;
      cursor = result.cursor;
      pages++;
    } while (cursor && pages < 50);
    expect(found).toEqual([payments[0]!.paymentId]);
    expect(looked).toBe(payments.length);
    expect(pages).toBe(Math.ceil(payments.length / 8));
  });
});

describe('a change of status writes nothing to the search index', () => {
  it('the entry is the keys alone, the same before and after the payment settles', async () => {
    const session = await openSession(service, shop);
    const payment = await service.deps.store.findPayment(session.paymentId);
    const partition = searchPartitionOf(shop.merchant_key, payment!.createdAt, session.paymentId, LOCAL_SHARDS);
    const entry = async () =>
      (
        await service.deps.db.send(new QueryCommand({ TableName: service.backend.tableName, IndexName: SEARCH_INDEX, KeyConditionExpression: 'searchPk = :p', ExpressionAttributeValues: { ':p': partition } }))
      ).Items?.find((i) => i.pk === key.payment(session.paymentId).pk);
    const before = await entry();
    // The entry is of the details item, written once (payment-items.ts): no write of the state item reaches it.
    expect(before).toEqual({ ...key.paymentDetails(session.paymentId), searchPk: partition, searchSk: `${payment!.createdAt}#${session.paymentId}` });
    expect((await submitPage(service, session, {})).status).toBe(303);
    await runCallbackJob(service.deps, { paymentIds: [session.paymentId] });
    expect((await service.deps.store.findPayment(session.paymentId))?.status).toBe('settled');
    expect(await entry()).toEqual(before);
    made.push(session.paymentId);
  });

  it('a checkout, plain or with 3-D Secure, writes the index once: when its payment is created', async () => {
    const recorder = new WriteRecorder(service.deps.db, { endpoint: service.backend.dynamodbEndpoint, region: 'local', tableName: service.backend.tableName });
    const searchWrites = () => recorder.writes.filter((w) => w.uses.some((u) => u.target === SEARCH_INDEX));
    try {
      const plain = await recorder.during(1, async () => {
        const paid = await paidPayment(service, shop);
        await runCallbackJob(service.deps, { paymentIds: [paid.paymentId] });
        return paid;
      });
      expect(plain.status.status).toBe('settled');
      const secure = await recorder.during(2, async () => {
        const session = await openSession(service, shop);
        const answered = await answerChallenge(service, await submitPage(service, session, { card: '05/38' }));
        const complete = new URL(String(answered.headers.location), service.baseUrl);
        expect((await service.request({ method: 'GET', path: `${complete.pathname}${complete.search}` })).status).toBe(303);
        await runCallbackJob(service.deps, { paymentIds: [session.paymentId] });
        return session;
      });
      expect((await statusOf(service, shop, secure.paymentId)).status).toBe('settled');
      for (const checkout of [1, 2]) {
        const writes = searchWrites().filter((w) => w.checkout === checkout);
        // The put of the details item that created the entry; none of the status changes after it.
        expect(writes.map((w) => w.uses.filter((u) => u.target === SEARCH_INDEX).reduce((n, u) => n + u.units, 0))).toEqual([1]);
        expect(writes[0]!.items.map((i) => i.item)).toContain('PAYMENT# / PAYMENT#');
        // Each checkout changed its payment's status more than once meanwhile.
        expect(recorder.writes.filter((w) => w.checkout === checkout && w.items.some((i) => i.item === 'PAYMENT# / PAYMENT')).length).toBeGreaterThan(2);
      }
      made.push(plain.paymentId, secure.paymentId);
    } finally {
      (service.deps.db.middlewareStack as unknown as { remove(name: string): boolean }).remove('benchWriteRecorder');
      recorder.close();
    }
  });
});
