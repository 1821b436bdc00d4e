import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DepsWithCallbacks } from '../lambdas/callback-container';
import type { DueCallback } from '../lambdas/ports/callbacks';
import type { PaymentStore } from '../lambdas/ports/payments';
import { runCallbackJob } from '../lambdas/use-cases/deliver-callbacks';
import { key } from '../lambdas/adapters/dynamodb/keys';
import { STREAM_LEASE_TAG } from '../lambdas/adapters/dynamodb/payment-items';

/**
 * The local runner's stand-in for the table's DynamoDB stream and its dispatcher
 * (lambdas/handlers/callback-dispatch.ts): a write that makes a callback due hands the payment to
 * the same delivery as the cloud's dispatcher (`fromStream`, taking the lease the write left), a
 * moment after the write, in batches. So the local runner writes what the cloud writes: no outbox
 * entry for the answer's callback, no lease write (transition-expression.ts `net`), and the relay
 * and the reconciler stay the safety net for what this loses.
 *
 * A real stream keeps its records for a day and a restarted consumer goes on from where it was;
 * this one lives in the process, so at start `resume` hands over every payment whose callback was
 * left to the stream and is still due (a process killed between a write and its delivery).
 */
export class LocalStream {
  private readonly pending = new Map<string, DueCallback>();
  private busy = false;
  private stopped = false;
  private wake: (() => void) | undefined;
  private idlers: (() => void)[] = [];
  /** Records handed over, batches dispatched, payments whose delivery failed (tests and the benchmark read them). */
  readonly stats = { records: 0, runs: 0, failed: 0 };
  private readonly loop: Promise<void>;

  /**
   * `around` runs the dispatcher's loop in the context of its own function (the tests check its
   * table calls against the dispatcher's grant): the loop starts here, outside any request, so no
   * request's context carries over into the deliveries.
   */
  constructor(
    private readonly dispatch: (payments: readonly DueCallback[]) => Promise<{ readonly failed: number }>,
    around: (run: () => Promise<void>) => Promise<void> = (run) => run(),
  ) {
    this.loop = around(() => this.run());
  }

  /** A record of a write that made a callback of the payment due. */
  record(due: DueCallback): void {
    if (this.stopped) return;
    this.stats.records++;
    this.pending.set(due.paymentId, { ...this.pending.get(due.paymentId), ...due });
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.pending.size) {
        this.idlers.splice(0).forEach((resolve) => resolve());
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        // After the write's own request has answered, as a stream's record arrives after its write.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const batch = [...this.pending.values()].slice(0, STREAM_BATCH);
      for (const due of batch) this.pending.delete(due.paymentId);
      this.busy = true;
      this.stats.runs++;
      try {
        this.stats.failed += (await this.dispatch(batch)).failed;
      } catch (e) {
        // What a failed batch held stays due: the reconciler hands it to the relay (the net).
        this.stats.failed += batch.length;
        console.error(`local stream: a batch of ${batch.length} failed: ${(e as Error).name}`);
      } finally {
        this.busy = false;
      }
    }
    this.idlers.splice(0).forEach((resolve) => resolve());
  }

  /** Resolves once every record handed over so far has been dispatched. */
  idle(): Promise<void> {
    if (this.stopped || (!this.pending.size && !this.busy)) return Promise.resolve();
    return new Promise((resolve) => this.idlers.push(resolve));
  }

  /**
   * Hands over the payments whose callbacks were left to the stream and are not delivered: due with
   * no outbox entry (the relay cannot see them), or under a lease a write left the stream (the relay
   * keeps off it for a minute). One scan of the local table at start.
   */
  async resume(db: DynamoDBDocumentClient, tableName: string): Promise<number> {
    let found = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new ScanCommand({
          TableName: tableName,
          FilterExpression: 'sk = :sk AND attribute_exists(sendSk) AND (attribute_not_exists(sendPk) OR contains(sendLease, :tag))',
          ExpressionAttributeValues: { ':sk': key.payment('').sk, ':tag': `#${STREAM_LEASE_TAG}` },
          ProjectionExpression: 'pk, merchantKey',
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        found++;
        this.record({ paymentId: String(item.pk).slice('PAYMENT#'.length), ...(typeof item.merchantKey === 'string' ? { merchantKey: item.merchantKey } : {}) });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  }

  /** Stops taking records; resolves when a batch in progress has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pending.clear();
    this.wake?.();
    await this.loop;
  }
}

/** Records a stream batch holds at most (the event source mapping's batch size). */
const STREAM_BATCH = 100;
/** What the cloud's dispatcher leaves itself before its function's end (callback-dispatch.ts). */
const DISPATCH_BUDGET_MS = 55_000;

/**
 * A payment store whose writes that make a callback due (a transaction appended, a callback queued
 * again) are recorded on the stream, as DynamoDB's stream records every write of the item.
 */
export function streamingWrites(store: PaymentStore, stream: LocalStream): PaymentStore {
  const recorded = Object.create(store) as PaymentStore;
  recorded.apply = async (paymentId, transition) => {
    const applied = await store.apply(paymentId, transition);
    if (applied.applied && (transition.change.append?.length || transition.change.sendCallback !== undefined)) {
      stream.record({ paymentId, merchantKey: applied.payment.merchantKey });
    }
    return applied;
  };
  recorded.createPayment = async (payment, queue) => {
    await store.createPayment(payment, queue);
    if (payment.transactions.length) stream.record({ paymentId: payment.paymentId, merchantKey: payment.merchantKey });
  };
  return recorded;
}

/**
 * The dependencies with the local stream in place: the handlers' store records, the stream delivers
 * with the rest. `around`: the context each of its runs is in (LocalStream).
 */
export function withLocalStream<D extends DepsWithCallbacks>(deps: D, around?: (run: () => Promise<void>) => Promise<void>): D & { readonly localStream: LocalStream } {
  const stream = new LocalStream((payments) => runCallbackJob(streamed, { payments, deferSlow: true, fromStream: true, stopAt: Date.now() + DISPATCH_BUDGET_MS }), around);
  const streamed: D & { readonly localStream: LocalStream } = { ...deps, store: streamingWrites(deps.store, stream), localStream: stream };
  return streamed;
}
