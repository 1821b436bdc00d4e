import { applyChange, guardHolds, type Payment, type QueueEntry, type Transition } from '../../domain/payment';
import { type Applied, type DaySearch, type PaymentStore, type QueuedPayment, type ShardPart } from '../../ports/payments';
import { SHARDS, shardOf, type ShardCounts } from '../dynamodb/keys';
import { DETAIL_FIELDS } from '../dynamodb/payment-items';

/** A payment as this store keeps it: the payment, the work queue it waits in, the ids of operations started on it. */
interface Held {
  payment: Payment;
  queue?: QueueEntry;
  readonly startedOperations: Set<string>;
}

/**
 * The whole PaymentStore port in memory, for tests that exercise rules rather than the table. It
 * decides every transition with the pure guard (`guardHolds`) and applies it with the pure change
 * (`applyChange`), so it agrees with the DynamoDB store exactly where the contract suite
 * (test/contract/) says they agree. Payments are copied in and out as JSON, as a table would store
 * them: undefined values are dropped, and no caller shares an object with the store. Every call
 * yields to the event loop first, so concurrent requests interleave as they do over a network.
 * Queues are sharded as the DynamoDB work index is, so a worker's part reads the same payments.
 */
export class MemoryPaymentStore implements PaymentStore {
  private readonly held = new Map<string, Held>();

  /** The shard counts of the table it stands in for (every cloud table's by default). */
  constructor(private readonly shards: ShardCounts = SHARDS) {}

  async createPayment(payment: Payment, queue?: QueueEntry): Promise<void> {
    await turn();
    const held = this.held.get(payment.paymentId);
    if (held) {
      // The same payment again is a retried create (the table's answer to the first was lost): done already.
      if (JSON.stringify(held.payment) === JSON.stringify(copy({ refunds: {}, watching: {}, ...payment }))) return;
      throw new Error(`payment ${payment.paymentId} exists`);
    }
    this.held.set(payment.paymentId, { payment: copy({ refunds: {}, watching: {}, ...payment }), ...(queue ? { queue: { ...queue } } : {}), startedOperations: new Set() });
  }

  async findPayment(paymentId: string): Promise<Payment | undefined> {
    await turn();
    return this.read(paymentId);
  }

  async forgetExpiredLink(paymentId: string): Promise<void> {
    await turn();
    this.held.delete(paymentId);
  }

  async paymentsByOrder(merchantKey: string, orderNumber: string, limit: number): Promise<Payment[]> {
    await turn();
    return this.ofOrder(merchantKey, orderNumber).slice(0, limit);
  }

  async findLatestPaymentByOrder(merchantKey: string, orderNumber: string): Promise<Payment | undefined> {
    await turn();
    return this.ofOrder(merchantKey, orderNumber)[0];
  }

  async apply(paymentId: string, { guard, change }: Transition): Promise<Applied> {
    // What the merchant asked is written once, with the payment (as the DynamoDB store keeps it apart).
    for (const field of DETAIL_FIELDS) if (field in change.set) throw new Error(`${field} is written once, with the payment`);
    await turn();
    const held = this.held.get(paymentId);
    if (!held || !guardHolds(guard, held.payment, held.startedOperations)) return { applied: false, payment: this.read(paymentId) };
    held.payment = copy(applyChange(held.payment, change));
    if (guard.newTransaction !== undefined) held.startedOperations.add(guard.newTransaction);
    if (change.queue) held.queue = { ...change.queue };
    else if (change.queue === null) delete held.queue;
    return { applied: true, payment: this.read(paymentId)! };
  }

  async findPayments(paymentIds: readonly string[]): Promise<Payment[]> {
    await turn();
    return [...new Set(paymentIds)].slice(0, 100).flatMap((id) => this.read(id) ?? []);
  }

  async paymentsOfDay(query: DaySearch): Promise<{ payments: Payment[]; cursor?: string }> {
    await turn();
    const newest = this.ofDay(query).filter(([sk]) => query.cursor === undefined || sk < query.cursor);
    const page = newest.slice(0, query.limit);
    const more = newest.length > query.limit;
    return { payments: page.map(([, p]) => copy(p)), ...(more ? { cursor: page[page.length - 1]![0] } : {}) };
  }

  async countPaymentsOfDay(query: Omit<DaySearch, 'limit' | 'cursor'>): Promise<number> {
    await turn();
    return this.ofDay(query).length;
  }

  async *dueBatches(queue: string, until: Date, pageSize: number, part?: ShardPart): AsyncGenerator<QueuedPayment[]> {
    await turn();
    const due = this.dueIn(queue, until, part);
    for (let i = 0; i < due.length; i += pageSize) yield due.slice(i, i + pageSize);
  }

  async due(queue: string, until: Date, limit: number): Promise<QueuedPayment[]> {
    await turn();
    return this.dueIn(queue, until).slice(0, limit);
  }

  async hurry(paymentId: string, queue: string, dueAt: Date): Promise<boolean> {
    await turn();
    const held = this.held.get(paymentId);
    if (!held?.queue || held.queue.name !== queue || held.queue.dueAt <= dueAt.toISOString()) return false;
    held.queue = { name: queue, dueAt: dueAt.toISOString() };
    return true;
  }

  /** Where a payment waits (tests). */
  queueOf(paymentId: string): QueueEntry | undefined {
    const queue = this.held.get(paymentId)?.queue;
    return queue && { ...queue };
  }

  /** A payment as it is now, without waiting a turn (tests). */
  snapshot(paymentId: string): Payment | undefined {
    return this.read(paymentId);
  }

  private read(paymentId: string): Payment | undefined {
    const held = this.held.get(paymentId);
    return held && copy(held.payment);
  }

  private ofOrder(merchantKey: string, orderNumber: string): Payment[] {
    return [...this.held.values()]
      .map((h) => h.payment)
      .filter((p) => p.merchantKey === merchantKey && p.order.number === orderNumber)
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .map(copy);
  }

  /** A merchant's payments of a day, by the search index's sort key, newest first. */
  private ofDay(query: Omit<DaySearch, 'limit' | 'cursor'>): [string, Payment][] {
    return [...this.held.values()]
      .map((h): [string, Payment] => [`${h.payment.createdAt}#${h.payment.paymentId}`, h.payment])
      .filter(([, p]) => p.merchantKey === query.merchantKey && p.createdAt.slice(0, 10) === query.day && (!query.statuses?.length || query.statuses.includes(p.status)))
      .sort(([a], [b]) => b.localeCompare(a));
  }

  private dueIn(queue: string, until: Date, part?: ShardPart): QueuedPayment[] {
    const at = until.toISOString();
    return [...this.held.entries()]
      .filter(([id, h]) => h.queue?.name === queue && h.queue.dueAt <= at && (!part || shardOf(id, this.shards.work) % part.of === part.index))
      .map(([paymentId, h]) => ({ paymentId, dueAt: h.queue!.dueAt }))
      .sort((a, b) => a.dueAt.localeCompare(b.dueAt));
  }
}

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Lets whatever else is running go first, as a call over the network would. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
