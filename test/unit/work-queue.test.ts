import { ManualClock } from '../../lambdas/ports/clock';
import type { Payment } from '../../lambdas/domain/payment';
import type { PaymentStore } from '../../lambdas/ports/payments';
import { drainDue } from '../../lambdas/use-cases/work-queue';

/** Only what the loop reads of the store: the queue and the payments in it. */
function storeWith(ids: string[]): PaymentStore {
  return {
    due: async (_queue: string, _until: Date, limit: number) => ids.slice(0, limit).map((paymentId) => ({ paymentId, dueAt: '2030-01-01T00:00:00.000Z' })),
    findPayment: async (id: string) => (id === 'gone' ? undefined : ({ paymentId: id } as Payment)),
  } as unknown as PaymentStore;
}

describe('a job run over a work queue', () => {
  const clock = new ManualClock('2030-01-01T00:00:00.000Z');

  it('handles every due payment once and counts the outcomes', async () => {
    const seen: string[] = [];
    const report = await drainDue({ store: storeWith(['a', 'b', 'c']), clock }, 'capture', 10, ['done', 'skipped'], async (p) => {
      seen.push(p.paymentId);
      return p.paymentId === 'b' ? 'skipped' : 'done';
    });
    expect(seen).toEqual(['a', 'b', 'c']);
    expect(report).toEqual({ examined: 3, failed: 0, errors: [], done: 2, skipped: 1 });
  });

  it('keeps going when one payment fails, and reports which', async () => {
    const report = await drainDue({ store: storeWith(['a', 'boom', 'c']), clock }, 'capture', 10, ['done'], async (p) => {
      if (p.paymentId === 'boom') throw Object.assign(new Error('acquirer down'), { name: 'TimeoutError' });
      return 'done';
    });
    expect(report).toEqual({ examined: 3, failed: 1, errors: ['boom: TimeoutError'], done: 2 });
  });

  it('reads at most its batch and skips payments that are gone', async () => {
    const handled: string[] = [];
    const report = await drainDue({ store: storeWith(['a', 'gone', 'c', 'd']), clock }, 'reconcile', 3, ['done'], async (p) => {
      handled.push(p.paymentId);
      return 'done';
    });
    expect(handled).toEqual(['a', 'c']);
    expect(report.examined).toBe(3);
  });

  it('keeps the error list bounded', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `p${i}`);
    const report = await drainDue({ store: storeWith(ids), clock }, 'capture', 50, ['done'], async () => {
      throw new Error('x');
    });
    expect(report.failed).toBe(20);
    expect(report.errors).toHaveLength(5);
  });
});
