import type { AcquirerChargeback, DisputeNews, OperationRef } from '../../ports/acquirer';
import type { Clock } from '../../ports/clock';
import { decideChargeback, type ChargebackRefusal } from './bank';
import { canonicalKey, type LedgerEntry } from './ledger';
import type { SandboxLedgerStore } from './ledger-store';
import { SANDBOX_CHARGEBACK_AFTER_MS, SANDBOX_CHARGEBACK_REASON } from './rules';

/**
 * The sandbox's disputes, as an acquirer's dispute desk would have them: a chargeback is raised
 * against the approved authorization of a payment (by `npm run -s sandbox -- chargeback`, or a
 * minute after the chargeback test card's money settles), written with the balance change in one
 * conditional write, and reported as news of the payment, which the platform's reconciler takes
 * (`Acquirer.disputeNews`) and then reads the payment's chargebacks (`Acquirer.chargebacks`).
 */
export class SandboxDisputes {
  constructor(
    private readonly store: SandboxLedgerStore,
    private readonly clock: Clock,
    private readonly newRef: () => string,
    private readonly stamp: (entry: Omit<LedgerEntry, 'at' | 'seq'>) => LedgerEntry,
  ) {}

  /** The chargebacks of the payment whose authorization this is, oldest first. */
  async chargebacks(authorization: OperationRef): Promise<readonly AcquirerChargeback[]> {
    const ledger = await this.store.ledger(authorization.paymentId);
    const of = canonicalKey(authorization.idempotencyKey);
    return Object.values(ledger?.entries ?? {})
      .filter((e) => e.operation === 'chargeback' && e.of === of && e.status === 'approved')
      .sort((a, b) => a.seq - b.seq)
      .map((e) => ({ amountMinor: e.amountMinor, acquirerRef: e.acquirerRef, ...(e.dispute ?? {}) }));
  }

  /**
   * Raises a chargeback of a payment's approved authorization: `amountMinor` of it, or all that is
   * left; refused as the platform refuses (208010 more than is left, 208014 nothing captured). The
   * news is due at once.
   */
  async raise(paymentId: string, amountMinor: number | undefined, reasonCode = SANDBOX_CHARGEBACK_REASON, report = true): Promise<{ readonly raised: AcquirerChargeback } | { readonly refused: ChargebackRefusal }> {
    for (let round = 0; round < 20; round++) {
      const ledger = await this.store.ledger(paymentId);
      const entries = Object.values(ledger?.entries ?? {});
      const auth = entries.find((e) => ['sale', 'auth', 'recurring'].includes(e.operation) && e.status === 'approved');
      const decision = decideChargeback(auth, amountMinor);
      if ('refused' in decision) return decision;
      const n = entries.filter((e) => e.operation === 'chargeback').length + 1;
      const acquirerRef = this.newRef();
      const date = this.clock.now().toISOString().slice(0, 10);
      const entry = this.stamp({
        idempotencyKey: canonicalKey(`${paymentId}.chargeback.${n}`),
        operation: 'chargeback',
        acquirerRef,
        card: auth!.card,
        amountMinor: decision.amountMinor,
        currency: auth!.currency,
        of: auth!.idempotencyKey,
        outcome: { kind: 'approved', acquirerRef },
        status: 'approved',
        dispute: { reasonCode, chargebackDate: date, bankDate: date },
      });
      if (await this.store.recordChargeback(paymentId, entry, auth!.idempotencyKey, decision.guard)) {
        if (report) await this.store.putNews(paymentId, this.clock.now());
        return { raised: { amountMinor: entry.amountMinor, acquirerRef, reasonCode, chargebackDate: date, bankDate: date } };
      }
      // Lost to a refund or another chargeback: decided again on the balances as they are now.
    }
    throw new Error(`sandbox: the chargeback of ${paymentId} kept losing races`);
  }

  /** The chargeback test card's: news a minute after its money settled, raising a chargeback of all that is left then. */
  plan(paymentId: string): Promise<void> {
    return this.store.putNews(paymentId, new Date(this.clock.now().getTime() + SANDBOX_CHARGEBACK_AFTER_MS), { reasonCode: SANDBOX_CHARGEBACK_REASON });
  }

  /**
   * News due by `now`: a planned chargeback is raised first (nothing is, when refunds left nothing
   * to take), and each is reported until taken.
   */
  async news(now: Date, limit: number): Promise<readonly DisputeNews[]> {
    const due = await this.store.dueNews(now, limit);
    const out: DisputeNews[] = [];
    for (const item of due) {
      // Raised now (or refused for good, when refunds left nothing): reported like the rest.
      if (item.plan) await this.raise(item.paymentId, undefined, item.plan.reasonCode, false);
      out.push({ paymentId: item.paymentId, taken: () => this.store.takeNews(item.sk, this.clock.now()) });
    }
    return out;
  }
}
