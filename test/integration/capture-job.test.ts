import { LOCAL_SHARDS, shardOf } from '../../lambdas/adapters/dynamodb/keys';
import { shardPart, type DrainOptions } from '../../lambdas/use-cases/work-queue';
import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import type { Payment } from '../../lambdas/domain/payment';
import type { Acquirer } from '../../lambdas/ports/acquirer';
import { ManualClock } from '../../lambdas/ports/clock';
import { operatorAction } from '../../lambdas/use-cases/admin/operator-actions';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { INTERRUPTED_OPERATION_REASON } from '../../lambdas/use-cases/money-operations';
import { AUTO_CAPTURE_ACTOR, EXPIRED_REASON, STALE_CLAIM_MS, runCaptureJob, type CaptureJobReport } from '../../lambdas/use-cases/capture-job';
import { capture } from '../../lambdas/use-cases/capture-payment';
import { updateMerchantSettings, type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { JOBS } from '../../lib/jobs';
import { startScheduler } from '../../local/scheduler';
import { ledgerOf, paidPayment, statusOf, storedPayment, type PaidPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * The capture job (DMS, protocol.md §4; seed spec §1, §3): an authorization waits in the sparse
 * capture queue; the job, run every minute, captures it once the merchant's delay has passed and
 * releases it (status reversal) once its validity has run out. Time is a ManualClock: the job is
 * run at chosen instants, never waited for.
 */
const T0 = new Date('2030-04-01T06:00:00.000Z');
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** An instant after every authorization any test makes: the job releases whatever is left. */
const FAR_FUTURE = new Date('2099-01-01T00:00:00.000Z');

const clock = new ManualClock(T0);
const at = (offsetMs: number) => new Date(T0.getTime() + offsetMs);

let service: TestService;

/** A DMS merchant; `delay` minutes of automatic capture, or manual capture only. */
async function dmsShop(delay?: number): Promise<MerchantCredentials> {
  const shop = await service.createMerchant({ name: delay === undefined ? 'Manual Capture Shop' : `Capture After ${delay} Min` });
  await updateMerchantSettings(service.deps, shop.merchant_key, { dms: true, ...(delay !== undefined ? { autoCaptureDelayMinutes: delay } : {}) });
  return shop;
}

/** A page payment of a DMS merchant, authorized now: status pending, one sale transaction. */
async function authorized(shop: MerchantCredentials, card = '01/38'): Promise<PaidPayment> {
  const paid = await paidPayment(service, shop, { card, order: { amount: '25.00' } });
  expect(paid.page.status).toBe(303);
  expect(paid.status.status).toBe('pending');
  return paid;
}

/** Runs the job as EventBridge would at this instant (the use case, with the service's dependencies). */
function jobAt(when: Date, options?: DrainOptions): Promise<CaptureJobReport> {
  clock.set(when);
  return runCaptureJob(service.deps, options);
}

const status = async (shop: MerchantCredentials, paymentId: string) => (await statusOf(service, shop, paymentId)).status;

const captures = (p: Payment) => p.transactions.filter((t) => t.type === 'capture');

/** The queue entry of a payment as stored (the sparse index's attributes), if it is queued. */
async function queueEntry(paymentId: string): Promise<string | undefined> {
  const item = (await storedPayment(service, paymentId)) as Payment & { workSk?: string };
  return item.workSk?.split('#')[0];
}

/** Empties the capture queue left by earlier tests, so a test can count what the job reads. */
async function drainQueue(): Promise<void> {
  for (let run = 0; run < 20; run++) if ((await jobAt(FAR_FUTURE)).examined === 0) break;
  clock.set(T0);
}

describe('with the default validity of 7 days', () => {
  beforeAll(async () => {
    service = await startTestService({ clock });
  });
  afterAll(() => service.close());
  beforeEach(async () => {
    await drainQueue();
    clock.set(T0);
  });

  describe('an authorization', () => {
    it('is a pending payment with one sale transaction, queued for its automatic capture', async () => {
      const shop = await dmsShop(30);
      const paid = await authorized(shop);
      const item = await storedPayment(service, paid.paymentId);
      expect(item.transactions.map((t) => [t.type, t.status, t.amountMinor])).toEqual([['sale', 'success', 2500]]);
      expect(item.authorizationExpiresAt).toBe(at(7 * DAY).toISOString());
      expect(await queueEntry(paid.paymentId)).toBe(at(30 * MINUTE).toISOString());
    });
  });

  describe('automatic capture after the merchant delay', () => {
    it('leaves the payment pending before the delay has passed, and captures it once it has', async () => {
      const shop = await dmsShop(30);
      const paid = await authorized(shop);

      expect(await jobAt(at(29 * MINUTE + 59_999))).toMatchObject({ examined: 0 });
      expect(await status(shop, paid.paymentId)).toBe('pending');

      expect(await jobAt(at(30 * MINUTE))).toEqual({ examined: 1, captured: 1, declined: 0, released: 0, skipped: 0, failed: 0, errors: [] });
      expect(await status(shop, paid.paymentId)).toBe('settled');
      const item = await storedPayment(service, paid.paymentId);
      expect(item.capturedMinor).toBe(2500);
      expect(captures(item)).toEqual([
        expect.objectContaining({ type: 'capture', status: 'success', amountMinor: 2500, actor: AUTO_CAPTURE_ACTOR, at: at(30 * MINUTE).toISOString() }),
      ]);
      expect(await queueEntry(paid.paymentId)).toBeUndefined();
    });

    it('captures at the next run when the delay is zero minutes', async () => {
      const shop = await dmsShop(0);
      const paid = await authorized(shop);
      expect(await jobAt(at(MINUTE))).toMatchObject({ captured: 1 });
      expect(await status(shop, paid.paymentId)).toBe('settled');
      expect(captures(await storedPayment(service, paid.paymentId))).toEqual([expect.objectContaining({ status: 'success', actor: AUTO_CAPTURE_ACTOR })]);
    });

    it('reads the delay when the job runs: a longer delay postpones the capture, manual capture stops it', async () => {
      const shop = await dmsShop(10);
      const paid = await authorized(shop);
      await updateMerchantSettings(service.deps, shop.merchant_key, { autoCaptureDelayMinutes: 60 });

      expect(await jobAt(at(10 * MINUTE))).toMatchObject({ examined: 1, captured: 0, skipped: 1 });
      expect(await status(shop, paid.paymentId)).toBe('pending');
      expect(await queueEntry(paid.paymentId)).toBe(at(60 * MINUTE).toISOString());

      await updateMerchantSettings(service.deps, shop.merchant_key, { autoCaptureDelayMinutes: undefined });
      expect(await jobAt(at(60 * MINUTE))).toMatchObject({ examined: 1, captured: 0, skipped: 1 });
      expect(await status(shop, paid.paymentId)).toBe('pending');
      expect(await queueEntry(paid.paymentId)).toBe(at(7 * DAY).toISOString());
    });

    it('applies a shortened delay at the time the authorization was queued for, not earlier', async () => {
      const shop = await dmsShop(60);
      const paid = await authorized(shop);
      await updateMerchantSettings(service.deps, shop.merchant_key, { autoCaptureDelayMinutes: 5 });
      expect(await jobAt(at(30 * MINUTE))).toMatchObject({ examined: 0 });
      expect(await status(shop, paid.paymentId)).toBe('pending');
      expect(await jobAt(at(60 * MINUTE))).toMatchObject({ captured: 1 });
    });
  });

  describe('manual capture (no delay)', () => {
    it('is never captured by the job, and is released when the authorization expires: status reversal', async () => {
      const shop = await dmsShop();
      const paid = await authorized(shop);
      for (const offset of [MINUTE, 60 * MINUTE, 3 * DAY, 7 * DAY - 1]) {
        await jobAt(at(offset));
        expect(await status(shop, paid.paymentId)).toBe('pending');
      }

      expect(await jobAt(at(7 * DAY))).toEqual({ examined: 1, captured: 0, declined: 0, released: 1, skipped: 0, failed: 0, errors: [] });
      await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'reversal', reason: EXPIRED_REASON });
      const item = await storedPayment(service, paid.paymentId);
      expect(captures(item)).toEqual([]);
      expect(item.transactions.map((t) => [t.type, t.status, t.actor])).toEqual([
        ['sale', 'success', undefined],
        ['reversal', 'success', 'system:authorization-expiry'],
      ]);
      expect(await queueEntry(paid.paymentId)).toBeUndefined();
    });
  });

  describe('a capture the acquirer declines (03/38)', () => {
    it('stays pending with a failed capture transaction, is not retried, and is released at expiry', async () => {
      const shop = await dmsShop(0);
      const paid = await authorized(shop, '03/38');

      expect(await jobAt(at(MINUTE))).toMatchObject({ examined: 1, declined: 1 });
      await expect(statusOf(service, shop, paid.paymentId)).resolves.toMatchObject({ status: 'pending', reason: SANDBOX_REASONS.captureDeclined });
      const failed = [expect.objectContaining({ status: 'fail', reason: SANDBOX_REASONS.captureDeclined, actor: AUTO_CAPTURE_ACTOR, amountMinor: 2500 })];
      expect(captures(await storedPayment(service, paid.paymentId))).toEqual(failed);
      expect(await queueEntry(paid.paymentId)).toBe(at(7 * DAY).toISOString());

      for (const offset of [2 * MINUTE, DAY, 7 * DAY - 1]) await jobAt(at(offset));
      expect(await status(shop, paid.paymentId)).toBe('pending');
      expect(captures(await storedPayment(service, paid.paymentId))).toEqual(failed);

      expect(await jobAt(at(7 * DAY))).toMatchObject({ released: 1 });
      expect(await status(shop, paid.paymentId)).toBe('reversal');
    });
  });

  describe('an interrupted capture (claimed, never finished)', () => {
    /** The acquirer times out on capture: the claim is written, the answer never recorded. */
    const timingOut = (): Acquirer => {
      const real = service.deps.acquirer;
      return {
        authorize: (r) => real.authorize(r),
        completeAction: (k) => real.completeAction(k),
        lookup: (k) => real.lookup(k),
        close: (k) => real.close(k),
        chargebacks: (k) => real.chargebacks(k),
        capture: () => Promise.reject(new Error('acquirer timed out')),
        void: (r) => real.void(r),
        refund: (r) => real.refund(r),
        reverse: (r) => real.reverse(r),
      };
    };

    it.each([
      ['manual capture', undefined],
      ['a delay of one day', 24 * 60],
    ])('is released by the reconciler once stale when the acquirer never got it (%s); it can be captured again', async (_name, delay) => {
      const shop = await dmsShop(delay);
      const paid = await authorized(shop);
      clock.set(at(MINUTE));
      const before = await storedPayment(service, paid.paymentId);
      await expect(capture({ ...service.deps, acquirer: timingOut() }, { payment: before, amountMinor: 1000, actor: 'operator:alice' })).resolves.toMatchObject({ kind: 'in-progress' });
      expect((await storedPayment(service, paid.paymentId)).operation).toMatchObject({ kind: 'capture', amountMinor: 1000, actor: 'operator:alice' });

      // The capture job leaves an operation in flight alone; the reconciler finishes it once stale.
      expect(await jobAt(at(MINUTE + STALE_CLAIM_MS - 1))).toMatchObject({ captured: 0 });
      clock.set(at(MINUTE + STALE_CLAIM_MS - 1));
      expect(await reconcileDue(service.deps)).toMatchObject({ settled: 0 });
      expect(await status(shop, paid.paymentId)).toBe('pending');

      clock.set(at(MINUTE + STALE_CLAIM_MS));
      expect(await reconcileDue(service.deps)).toMatchObject({ examined: 1, settled: 1 });
      const item = await storedPayment(service, paid.paymentId);
      expect(item).toMatchObject({ status: 'pending' });
      expect(item.operation).toBeUndefined();
      // Closed at the acquirer first: the lost request can never capture later.
      expect(captures(item)).toEqual([expect.objectContaining({ status: 'fail', amountMinor: 1000, actor: 'operator:alice', reason: INTERRUPTED_OPERATION_REASON })]);
      await expect(capture(service.deps, { payment: item, amountMinor: 1000, actor: 'operator:alice' })).resolves.toMatchObject({ kind: 'captured' });
      expect(await storedPayment(service, paid.paymentId)).toMatchObject({ status: 'settled', capturedMinor: 1000 });
    });
  });

  describe('what the job reads', () => {
    /** Records the table reads (operation and key) the SDK sends. */
    function recordReads() {
      const reads: { op: string; pk?: string; index?: string }[] = [];
      type Next = (args: { input: { Key?: { pk?: { S?: string } | string }; IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> } }) => Promise<unknown>;
      (service.deps.db.middlewareStack as unknown as { add(m: unknown, o: unknown): void; remove(name: string): boolean }).add(
        (next: Next, context: { commandName?: string }) => async (args: Parameters<Next>[0]) => {
          // A key read names its key; a query of the table its partition (`:pk`); a query of an index its index.
          const queried = args.input.IndexName ? undefined : (args.input.ExpressionAttributeValues?.[':pk'] as { S?: string } | string | undefined);
          const pk = args.input.Key?.pk ?? queried;
          reads.push({ op: String(context.commandName).replace(/Command$/, ''), pk: typeof pk === 'string' ? pk : pk?.S, ...(args.input.IndexName ? { index: args.input.IndexName } : {}) });
          return next(args);
        },
        { step: 'finalizeRequest', priority: 'low', name: 'record-reads' },
      );
      return {
        reads,
        stop: () => (service.deps.db.middlewareStack as unknown as { remove(name: string): boolean }).remove('record-reads'),
      };
    }

    it(`queries each of the queue's ${LOCAL_SHARDS.work} shards once and fetches only the due payments (3 of 30 authorizations)`, async () => {
      const [later, now] = await Promise.all([dmsShop(60), dmsShop(0)]);
      for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 9 }, () => authorized(later)));
      const due = await Promise.all(Array.from({ length: 3 }, () => authorized(now)));

      const recorder = recordReads();
      try {
        expect(await jobAt(at(MINUTE))).toEqual({ examined: 3, captured: 3, declined: 0, released: 0, skipped: 0, failed: 0, errors: [] });
      } finally {
        recorder.stop();
      }
      const { reads } = recorder;
      expect(reads.filter((r) => r.op === 'Query' && r.index === 'work')).toHaveLength(LOCAL_SHARDS.work);
      expect(reads.filter((r) => r.op === 'Scan' || r.op === 'BatchGetItem')).toEqual([]);
      // Each due payment read once, state and details in one query of its partition.
      const paymentReads = reads.filter((r) => (r.op === 'GetItem' || r.op === 'Query') && r.pk?.startsWith('PAYMENT#')).map((r) => `${r.op} ${r.pk}`);
      expect(paymentReads.sort()).toEqual(due.map((p) => `Query PAYMENT#${p.paymentId}`).sort());
    });

    it('a worker drains only its part of the shards; the workers of a tick together drain everything', async () => {
      const shop = await dmsShop(0);
      const paid = await Promise.all(Array.from({ length: 12 }, () => authorized(shop)));
      for (let worker = 0; worker < 4; worker++) {
        const mine = paid.filter((p) => shardOf(p.paymentId, LOCAL_SHARDS.work) % 4 === worker);
        expect(await jobAt(at(MINUTE), { part: shardPart({ worker, workers: 4 }) })).toMatchObject({ examined: mine.length, captured: mine.length });
        for (const p of mine) expect(await status(shop, p.paymentId)).toBe('settled');
      }
      expect(await Promise.all(paid.map((p) => status(shop, p.paymentId)))).toEqual(Array(12).fill('settled'));
      // A tick without a part (the local runner's) is every shard; a malformed one too.
      expect(shardPart({})).toBeUndefined();
      expect(shardPart({ worker: 4, workers: 4 })).toBeUndefined();
    });

    it('drains everything due in one run, in pages of every shard; a run cut short leaves the rest for the next', async () => {
      const shop = await dmsShop(0);
      const paid = await Promise.all(Array.from({ length: 12 }, () => authorized(shop)));
      const statuses = async () => (await Promise.all(paid.map((p) => status(shop, p.paymentId)))).sort();
      // A run stopped after 5 payments (as its time budget would stop it): the others stay due.
      expect(await jobAt(at(MINUTE), { maxPayments: 5 })).toMatchObject({ examined: 5, captured: 5 });
      expect((await statuses()).filter((s) => s === 'settled')).toHaveLength(5);
      // The next run, reading 1 entry per shard and page, drains all the rest.
      expect(await jobAt(at(2 * MINUTE), { pageSize: 1 })).toMatchObject({ examined: 7, captured: 7 });
      expect(await statuses()).toEqual(Array(12).fill('settled'));
    });
  });

  describe('concurrency', () => {
    it('captures once when two job runs handle the same due payment at the same moment', async () => {
      const shop = await dmsShop(0);
      const paid = await authorized(shop);
      clock.set(at(MINUTE));
      const reports = await Promise.all([runCaptureJob(service.deps), runCaptureJob(service.deps)]);
      expect(reports.reduce((n, r) => n + r.captured, 0)).toBe(1);
      const item = await storedPayment(service, paid.paymentId);
      expect(item.status).toBe('settled');
      expect(captures(item)).toEqual([expect.objectContaining({ status: 'success', actor: AUTO_CAPTURE_ACTOR })]);
      expect((await ledgerOf(service, paid.paymentId)).filter((e) => String(e.idempotencyKey).includes('.capture.'))).toHaveLength(1);
    });

    it('captures once when an operator captures while the job runs; the operator action is audited as done or refused', async () => {
      const shop = await dmsShop(0);
      for (let round = 0; round < 4; round++) {
        clock.set(T0);
        const paid = await authorized(shop);
        clock.set(at(MINUTE));
        const [operator] = await Promise.all([operatorAction(service.deps, { actor: 'alice', paymentId: paid.paymentId, action: 'capture' }), runCaptureJob(service.deps)]);
        const item = await storedPayment(service, paid.paymentId);
        expect(item.status).toBe('settled');
        const successes = captures(item).filter((t) => t.status === 'success');
        expect(successes).toHaveLength(1);
        expect(captures(item)).toHaveLength(1);
        const audit = await service.deps.audit.forTarget(paid.paymentId, 10);
        expect(audit).toEqual([expect.objectContaining({ actor: 'alice', action: 'payment.capture', outcome: operator.outcome })]);
        expect(['done', 'refused']).toContain(operator.outcome);
        expect(successes[0]?.actor).toBe(operator.outcome === 'done' ? 'operator:alice' : AUTO_CAPTURE_ACTOR);
      }
    });
  });

  describe('under the local scheduler', () => {
    it('runs through the CaptureAuthorizations job handler (runNow), as EventBridge invokes it', async () => {
      const shop = await dmsShop(15);
      const paid = await authorized(shop);
      const scheduler = startScheduler(JOBS.filter((j) => j.id === 'CaptureAuthorizations'));
      try {
        clock.set(at(14 * MINUTE));
        expect(await scheduler.runNow('CaptureAuthorizations')).toMatchObject({ examined: 0 });
        expect(await status(shop, paid.paymentId)).toBe('pending');
        clock.set(at(15 * MINUTE));
        expect(await scheduler.runNow('CaptureAuthorizations')).toMatchObject({ examined: 1, captured: 1 });
        expect(await status(shop, paid.paymentId)).toBe('settled');
      } finally {
        scheduler.stop();
      }
    });
  });
});

describe('with AUTHORIZATION_VALIDITY_DAYS=2', () => {
  beforeAll(async () => {
    clock.set(T0);
    service = await startTestService({ clock, env: { AUTHORIZATION_VALIDITY_DAYS: '2' } });
  });
  afterAll(() => service.close());

  it('expires authorizations after 2 days: pending until then, reversal from then', async () => {
    clock.set(T0);
    const shop = await dmsShop();
    const paid = await authorized(shop);
    expect((await storedPayment(service, paid.paymentId)).authorizationExpiresAt).toBe(at(2 * DAY).toISOString());
    await jobAt(at(2 * DAY - 1));
    expect(await status(shop, paid.paymentId)).toBe('pending');
    expect(await jobAt(at(2 * DAY))).toMatchObject({ released: 1 });
    expect(await status(shop, paid.paymentId)).toBe('reversal');
  });

  it('releases at expiry when the merchant delay is longer than the validity', async () => {
    clock.set(T0);
    const shop = await dmsShop(3 * 24 * 60);
    const paid = await authorized(shop);
    expect(await queueEntry(paid.paymentId)).toBe(at(2 * DAY).toISOString());
    expect(await jobAt(at(2 * DAY))).toMatchObject({ released: 1, captured: 0 });
    expect(await status(shop, paid.paymentId)).toBe('reversal');
  });
});
