import type { Payment, Transition } from '../../lambdas/domain/payment';
import type { PaymentStore } from '../../lambdas/ports/payments';
import { SEARCH_SHARDS_CHANGED, SHARDS, searchShardsOf, shardOf } from '../../lambdas/adapters/dynamodb/keys';

/**
 * What every PaymentStore does, whatever it stores in: one file per store runs these same tests
 * (memory-payment-store.test.ts, dynamodb-payment-store.test.ts). A use case tested on one store
 * behaves the same on the other as far as these say.
 */
export interface OpenedStore {
  readonly store: PaymentStore;
  close(): Promise<void>;
}

export const T0 = new Date('2031-03-03T10:00:00.000Z');
const iso = (offsetMs = 0) => new Date(T0.getTime() + offsetMs).toISOString();

let serial = 0;
/** A settled link payment made at T0 (a fresh id each call). */
export function aPayment(extra: Partial<Payment> = {}): Payment {
  const paymentId = `contract-${process.pid}-${++serial}-${Math.random().toString(36).slice(2, 8)}`;
  return {
    paymentId,
    merchantKey: 'contract-shop',
    status: 'settled',
    order: { number: `o-${paymentId}`, amount: '10.00', amountMinor: 1000, currency: 'USD', description: 'Contract order' },
    customer: { name: 'Jane Roe' },
    createdAt: iso(),
    updatedAt: iso(),
    transactions: [{ transId: 'sale-1', type: 'sale', status: 'success', amountMinor: 1000, at: iso(), orderStatus: 'settled' }],
    authorization: { idempotencyKey: `${paymentId}.1`, acquirerRef: 'ref-1' },
    voidableUntil: iso(3600_000),
    ...extra,
  };
}

const touch = (extra: Partial<Transition['change']> = {}): Transition['change'] => ({ set: { updatedAt: iso(1000) }, ...extra });

export function paymentStoreContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`${name}: the PaymentStore contract`, () => {
    let opened: OpenedStore;
    let store: PaymentStore;
    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    }, 60_000);
    afterAll(() => opened?.close());

    it('keeps a created payment, with empty maps of what is in flight; another under its id is refused, the same one again is done already', async () => {
      const p = aPayment();
      await store.createPayment(p);
      expect(await store.findPayment(p.paymentId)).toEqual({ ...p, refunds: {}, watching: {} });
      await expect(store.createPayment({ ...p, order: { ...p.order, amountMinor: p.order.amountMinor + 1 } })).rejects.toThrow();
      await expect(store.createPayment({ ...p, updatedAt: iso(999_999) })).rejects.toThrow();
      // A retried create (its first answer lost) finds its own payment: nothing changes.
      await store.createPayment(p);
      expect(await store.findPayment(p.paymentId)).toEqual({ ...p, refunds: {}, watching: {} });
      expect(await store.findPayment('contract-none')).toBeUndefined();
    });

    it('applies a transition whose guard holds, and answers with the payment as it is now', async () => {
      const p = aPayment({ status: 'pending', voidableUntil: undefined });
      await store.createPayment(p);
      const result = await store.apply(p.paymentId, {
        guard: { statusIn: ['pending'], operation: 'none' },
        change: touch({ set: { status: 'settled', capturedMinor: 1000, updatedAt: iso(1000) }, append: [{ transId: 'cap-1', type: 'capture', status: 'success', amountMinor: 1000, at: iso(1000) }] }),
      });
      expect(result.applied).toBe(true);
      expect(result.payment).toMatchObject({ status: 'settled', capturedMinor: 1000, updatedAt: iso(1000) });
      // An appended transaction carries the status it left the payment in.
      expect(result.payment!.transactions.at(-1)).toEqual({ transId: 'cap-1', type: 'capture', status: 'success', amountMinor: 1000, at: iso(1000), orderStatus: 'settled' });
      expect(await store.findPayment(p.paymentId)).toEqual(result.payment);
    });

    it('refuses a transition whose guard does not hold, changes nothing and answers with the payment as it is', async () => {
      const p = aPayment();
      await store.createPayment(p);
      const before = await store.findPayment(p.paymentId);
      const result = await store.apply(p.paymentId, { guard: { statusIn: ['pending'] }, change: touch({ set: { status: 'reversal', updatedAt: iso(1000) } }) });
      expect(result).toEqual({ applied: false, payment: before });
      expect(await store.findPayment(p.paymentId)).toEqual(before);
    });

    it('refuses a change of what the merchant asked (written once, with the payment) before it is sent', async () => {
      const p = aPayment();
      await store.createPayment(p);
      await expect(store.apply(p.paymentId, { guard: {}, change: { set: { order: p.order, updatedAt: iso(1000) } as never } })).rejects.toThrow('order is written once, with the payment');
    });

    it('refuses any transition of a payment it does not have', async () => {
      expect(await store.apply('contract-missing', { guard: {}, change: touch() })).toEqual({ applied: false, payment: undefined });
    });

    it('starts an operation id once: the same id again is refused', async () => {
      const p = aPayment();
      await store.createPayment(p);
      const start = { guard: { newTransaction: 'op-1' }, change: touch() };
      expect((await store.apply(p.paymentId, start)).applied).toBe(true);
      expect((await store.apply(p.paymentId, start)).applied).toBe(false);
      expect((await store.apply(p.paymentId, { guard: { newTransaction: 'op-2' }, change: touch() })).applied).toBe(true);
    });

    it('puts refunds in flight and takes them out, adds to totals, watches attempts and removes fields', async () => {
      const p = aPayment();
      await store.createPayment(p);
      const refund = { amountMinor: 300, idempotencyKey: 'k-r1', startedAt: iso(), actor: 'merchant:contract-shop' };
      let r = await store.apply(p.paymentId, { guard: { refundHeldAtMost: 700, noRefundsInFlight: true }, change: touch({ add: { refundHeldMinor: 300 }, refund: { put: ['r-1', refund] } }) });
      expect(r.payment).toMatchObject({ refundHeldMinor: 300, refunds: { 'r-1': refund } });
      r = await store.apply(p.paymentId, { guard: { refundInFlight: 'r-1', refundedIs: 0, refundsInFlightCount: 1 }, change: touch({ add: { refundedMinor: 300 }, refund: { delete: 'r-1' } }) });
      expect(r.payment).toMatchObject({ refundHeldMinor: 300, refundedMinor: 300, refunds: {} });
      const watched = { attempt: 2, transId: 't-2', idempotencyKey: 'k-2', type: 'sale' as const, until: iso(86_400_000) };
      r = await store.apply(p.paymentId, { guard: {}, change: touch({ watch: { put: watched }, remove: ['voidableUntil'] }) });
      expect(r.payment!.watching).toEqual({ 2: watched });
      expect(r.payment!.voidableUntil).toBeUndefined();
      expect((await store.apply(p.paymentId, { guard: { watching: 2 }, change: touch({ watch: { delete: 2 } }) })).payment!.watching).toEqual({});
      expect((await store.apply(p.paymentId, { guard: { watching: 2 }, change: touch() })).applied).toBe(false);
    });

    it('lets exactly one of two racing transitions under the same guard through', async () => {
      const p = aPayment({ status: 'prepare', voidableUntil: undefined });
      await store.createPayment(p);
      const claim = (transId: string) =>
        store.apply(p.paymentId, { guard: { statusIn: ['prepare'], attemptIs: 0, inFlight: 'none' }, change: touch({ set: { attempt: 1, inFlight: { attempt: 1, transId, startedAt: iso(), idempotencyKey: 'k' }, updatedAt: iso(1000) } }) });
      const results = await Promise.all([claim('a'), claim('b')]);
      expect(results.filter((x) => x.applied)).toHaveLength(1);
      const loser = results.find((x) => !x.applied)!;
      expect(loser.payment?.inFlight?.transId).toBe(results.find((x) => x.applied)!.payment!.inFlight!.transId);
    });

    it('keeps work queues: what is due, soonest first; a worker reads its part; a hint moves a payment earlier only', async () => {
      const queue = `contract-${serial}`;
      const ps = [aPayment(), aPayment(), aPayment()];
      await store.createPayment(ps[0]!, { name: queue, dueAt: iso(3 * 60_000) });
      await store.createPayment(ps[1]!);
      await store.createPayment(ps[2]!);
      await store.apply(ps[1]!.paymentId, { guard: {}, change: touch({ queue: { name: queue, dueAt: iso(60_000) } }) });
      await store.apply(ps[2]!.paymentId, { guard: {}, change: touch({ queue: { name: queue, dueAt: iso(3600_000) } }) });
      const ids = ps.map((p) => p.paymentId);
      expect((await store.due(queue, new Date(iso(5 * 60_000)), 10)).map((q) => q.paymentId)).toEqual([ids[1], ids[0]]);
      expect(await store.due(queue, new Date(iso(5 * 60_000)), 1)).toEqual([{ paymentId: ids[1], dueAt: iso(60_000) }]);
      const batches: string[] = [];
      for await (const batch of store.dueBatches(queue, new Date(iso(5 * 60_000)), 10)) batches.push(...batch.map((q) => q.paymentId));
      expect(batches.sort()).toEqual([ids[0], ids[1]].sort());
      const part = { index: shardOf(ids[0]!, SHARDS.work) % 2, of: 2 };
      const inPart: string[] = [];
      for await (const batch of store.dueBatches(queue, new Date(iso(5 * 60_000)), 10, part)) inPart.push(...batch.map((q) => q.paymentId));
      expect(inPart).toContain(ids[0]);
      expect(inPart.every((id) => shardOf(id, SHARDS.work) % 2 === part.index)).toBe(true);
      expect(await store.hurry(ids[2]!, queue, new Date(iso(2 * 60_000)))).toBe(true);
      expect(await store.hurry(ids[2]!, queue, new Date(iso(10 * 60_000)))).toBe(false);
      expect(await store.hurry(ids[2]!, 'contract-other', new Date(iso(0)))).toBe(false);
      await store.apply(ids[0]!, { guard: {}, change: touch({ queue: null }) });
      expect((await store.due(queue, new Date(iso(5 * 60_000)), 10)).map((q) => q.paymentId)).toEqual([ids[1], ids[2]]);
    });

    it('finds payments by id and by order number, newest first', async () => {
      const older = aPayment();
      const newer = { ...aPayment(), order: older.order, createdAt: iso(60_000) };
      await store.createPayment(older);
      await store.createPayment(newer);
      expect((await store.findPayments([older.paymentId, 'contract-none', newer.paymentId, older.paymentId])).map((p) => p.paymentId).sort()).toEqual([older.paymentId, newer.paymentId].sort());
      expect((await store.paymentsByOrder(older.merchantKey, older.order.number, 10)).map((p) => p.paymentId)).toEqual([newer.paymentId, older.paymentId]);
      expect((await store.findLatestPaymentByOrder(older.merchantKey, older.order.number))?.paymentId).toBe(newer.paymentId);
    });

    it("pages through a merchant's payments of a day, newest first, of the statuses asked, and counts them", async () => {
      const merchantKey = `contract-day-${serial}`;
      const made = [0, 1, 2, 3, 4].map((i) => aPayment({ merchantKey, createdAt: new Date(Date.parse('2031-03-04T01:00:00.000Z') + i * 60_000).toISOString(), status: i % 2 ? 'decline' : 'settled' }));
      for (const p of made) await store.createPayment(p);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.paymentsOfDay({ merchantKey, day: '2031-03-04', limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...page.payments.map((p) => p.paymentId));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toEqual(made.map((p) => p.paymentId).reverse());
      const declined = await store.paymentsOfDay({ merchantKey, day: '2031-03-04', statuses: ['decline'], limit: 10 });
      expect(declined.payments.map((p) => p.paymentId)).toEqual([made[3]!.paymentId, made[1]!.paymentId]);
      expect(await store.countPaymentsOfDay({ merchantKey, day: '2031-03-04' })).toBe(5);
      expect(await store.countPaymentsOfDay({ merchantKey, day: '2031-03-05' })).toBe(0);
      // A status is counted by paging through the payments of it, each once, newest first.
      const settled: string[] = [];
      do {
        const page = await store.paymentsOfDay({ merchantKey, day: '2031-03-04', statuses: ['settled'], limit: 1, ...(cursor ? { cursor } : {}) });
        settled.push(...page.payments.map((p) => p.paymentId));
        cursor = page.cursor;
      } while (cursor);
      expect(settled).toEqual([made[4]!.paymentId, made[2]!.paymentId, made[0]!.paymentId]);
    });

    it('lists and counts a day written before the search shard count changed over the shards it was written with', async () => {
      const merchantKey = `contract-old-day-${serial}`;
      const before = new Date(Date.parse(SEARCH_SHARDS_CHANGED.on) - 86_400_000).toISOString().slice(0, 10);
      // Payments until three of them sit in shards a day of the current count would not read.
      const made: Payment[] = [];
      while (made.filter((p) => shardOf(p.paymentId, searchShardsOf(before, SHARDS)) >= SHARDS.search).length < 3 || made.length < 6) {
        made.push(aPayment({ merchantKey, createdAt: new Date(Date.parse(`${before}T08:00:00.000Z`) + made.length * 1000).toISOString() }));
      }
      for (const p of made) await store.createPayment(p);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.paymentsOfDay({ merchantKey, day: before, limit: 4, ...(cursor ? { cursor } : {}) });
        seen.push(...page.payments.map((p) => p.paymentId));
        cursor = page.cursor;
      } while (cursor);
      expect(seen).toEqual(made.map((p) => p.paymentId).reverse());
      expect(await store.countPaymentsOfDay({ merchantKey, day: before })).toBe(made.length);
      // And the day of the change on: the current count.
      const after = aPayment({ merchantKey, createdAt: `${SEARCH_SHARDS_CHANGED.on}T00:00:00.000Z` });
      await store.createPayment(after);
      expect((await store.paymentsOfDay({ merchantKey, day: SEARCH_SHARDS_CHANGED.on, limit: 10 })).payments.map((p) => p.paymentId)).toEqual([after.paymentId]);
      expect(searchShardsOf(SEARCH_SHARDS_CHANGED.on, SHARDS)).toBe(SHARDS.search);
    });

    it('forgets a link the table expired', async () => {
      const p = aPayment();
      await store.createPayment(p);
      await store.forgetExpiredLink(p.paymentId);
      expect(await store.findPayment(p.paymentId)).toBeUndefined();
    });
  });
}
