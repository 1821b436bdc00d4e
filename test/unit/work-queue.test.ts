import { ManualClock } from '../../lambdas/ports/clock';
import type { Payment } from '../../lambdas/domain/payment';
import type { PaymentStore, QueuedPayment } from '../../lambdas/ports/payments';
import { drainDue } from '../../lambdas/use-cases/work-queue';

const DUE = '2030-01-01T00:00:00.000Z';

/**
 * Only what the loop reads of the store: the queue, in batches of `pageSize` as the sharded store
 * hands them over, and the payments in it. `stillDue` ids stay in the queue after their handling,
 * so a later batch hands them over again (as a payment whose capture is in flight does).
 */
function storeWith(ids: string[], options: { stillDue?: string[]; reads?: { n: number } } = {}): PaymentStore {
  return {
    async *dueBatches(_queue: string, _until: Date, pageSize: number): AsyncIterable<QueuedPayment[]> {
      const again = options.stillDue ?? [];
      const all = [...ids, ...again];
      for (let i = 0; i < all.length; i += pageSize) {
        if (options.reads) options.reads.n++;
        yield all.slice(i, i + pageSize).map((paymentId) => ({ paymentId, dueAt: DUE }));
      }
    },
    findPayment: async (id: string) => (id === 'gone' ? undefined : ({ paymentId: id } as Payment)),
  } as unknown as PaymentStore;
}

describe('a job run over a work queue', () => {
  const clock = new ManualClock(DUE);

  it('handles every due payment once and counts the outcomes', async () => {
    const seen: string[] = [];
    const report = await drainDue({ store: storeWith(['a', 'b', 'c']), clock }, 'capture', ['done', 'skipped'], async (p) => {
      seen.push(p.paymentId);
      return p.paymentId === 'b' ? 'skipped' : 'done';
    });
    expect(seen.sort()).toEqual(['a', 'b', 'c']);
    expect(report).toEqual({ examined: 3, failed: 0, errors: [], done: 2, skipped: 1 });
  });

  it('keeps going when one payment fails, and reports which', async () => {
    const report = await drainDue({ store: storeWith(['a', 'boom', 'c']), clock }, 'capture', ['done'], async (p) => {
      if (p.paymentId === 'boom') throw Object.assign(new Error('acquirer down'), { name: 'TimeoutError' });
      return 'done';
    });
    expect(report).toEqual({ examined: 3, failed: 1, errors: ['boom: TimeoutError'], done: 2 });
  });

  it('drains batch after batch until nothing is due, skipping payments that are gone', async () => {
    const ids = Array.from({ length: 250 }, (_, i) => (i === 7 ? 'gone' : `p${i}`));
    const handled: string[] = [];
    const reads = { n: 0 };
    const report = await drainDue({ store: storeWith(ids, { reads }), clock }, 'reconcile', ['done'], async (p) => {
      handled.push(p.paymentId);
      return 'done';
    }, { pageSize: 100 });
    expect(reads.n).toBe(3);
    expect(handled).toHaveLength(249);
    expect(report).toMatchObject({ examined: 250, done: 249 });
  });

  it('handles a payment once per run even when its handling leaves it due', async () => {
    const handled: string[] = [];
    const report = await drainDue({ store: storeWith(['a', 'b'], { stillDue: ['a', 'b'] }), clock }, 'capture', ['skipped'], async (p) => {
      handled.push(p.paymentId);
      return 'skipped';
    }, { pageSize: 1 });
    expect(handled).toEqual(['a', 'b']);
    expect(report.examined).toBe(2);
  });

  it('handles up to `concurrency` payments at once', async () => {
    let running = 0;
    let most = 0;
    await drainDue({ store: storeWith(Array.from({ length: 40 }, (_, i) => `p${i}`)), clock }, 'capture', ['done'], async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return 'done';
    }, { concurrency: 8 });
    expect(most).toBe(8);
  });

  it('starts no payment once its time budget is spent, and leaves the rest for the next run', async () => {
    const handled: string[] = [];
    const stopAt = Date.now() + 60;
    const report = await drainDue({ store: storeWith(Array.from({ length: 50 }, (_, i) => `p${i}`)), clock }, 'capture', ['done'], async (p) => {
      handled.push(p.paymentId);
      await new Promise((r) => setTimeout(r, 25));
      return 'done';
    }, { concurrency: 2, stopAt });
    expect(handled.length).toBeGreaterThan(0);
    expect(handled.length).toBeLessThan(50);
    expect(report.examined).toBe(handled.length);
  });

  it('stops at maxPayments', async () => {
    const report = await drainDue({ store: storeWith(['a', 'b', 'c', 'd']), clock }, 'capture', ['done'], async () => 'done', { maxPayments: 3 });
    expect(report.examined).toBe(3);
  });

  it('keeps the error list bounded', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `p${i}`);
    const report = await drainDue({ store: storeWith(ids), clock }, 'capture', ['done'], async () => {
      throw new Error('x');
    });
    expect(report.failed).toBe(20);
    expect(report.errors).toHaveLength(5);
  });
});
