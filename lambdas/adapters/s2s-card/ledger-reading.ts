import type { S2SEntry } from './records';
import { minorOfWireAmount } from './transformers';

/**
 * What the gateway reports of a payment (GET_TRANS_DETAILS): its status and its history, one item
 * per transaction with a type, a lowercase status (`success`, `waiting`, `fail`) and an amount, but
 * no id of its own. The connector's follow-ups are settled from this reading, never from a callback
 * (docs/acquirers/s2s-card.md, "How follow-ups are settled").
 */
export interface GatewayReading {
  readonly status: string;
  readonly history: readonly GatewayHistoryItem[];
}

export interface GatewayHistoryItem {
  readonly type: string;
  readonly status: 'success' | 'waiting' | 'fail' | 'other';
  readonly amountMinor?: number;
}

/** The `transactions[]` of a GET_TRANS_DETAILS answer, read as open strings (unknown values kept as `other`). */
export function historyOf(transactions: unknown, currency: string): GatewayHistoryItem[] {
  if (!Array.isArray(transactions)) return [];
  return transactions.map((raw) => {
    const t = (raw ?? {}) as Record<string, unknown>;
    const status = String(t.status ?? '').toLowerCase();
    return {
      type: String(t.type ?? '').toLowerCase(),
      status: status === 'success' || status === '1' ? 'success' : status === 'fail' || status === '0' ? 'fail' : status === 'waiting' ? 'waiting' : 'other',
      amountMinor: minorOfWireAmount(t.amount, currency),
    };
  });
}

/**
 * What the reading says of one follow-up we sent: approved, declined, still open at the gateway
 * (`waiting`, or nothing that can tell yet), or absent (the gateway has no transaction left for it:
 * it never received it).
 */
export type FollowUpVerdict =
  | { readonly kind: 'approved' }
  | { readonly kind: 'declined'; readonly reason: string }
  | { readonly kind: 'open' }
  | { readonly kind: 'absent' };

export const DECLINED_AT_GATEWAY = 'Declined by the acquirer.';

type FollowUp = S2SEntry & { operation: Exclude<S2SEntry['operation'], 'authorization'> };

/**
 * The verdict for every follow-up of one payment that has no final answer yet, from the gateway's
 * reading. The history names no follow-up, so they are matched by counting: per kind (and, for
 * refunds, per amount) the gateway's successes beyond the ones we recorded approved go to our open
 * ones oldest first, then its failures beyond the ones we recorded declined, then its waiting ones;
 * an open one left over is absent. Two follow-ups of one kind and amount move the same money, so
 * which of them gets which answer never changes a total; the counts make every reading, however
 * many run at once or in which order, assign the same totals (a write that lost a race is computed
 * again from the entries as they are now).
 */
export function followUpVerdicts(entries: readonly S2SEntry[], reading: GatewayReading): Map<string, FollowUpVerdict> {
  const verdicts = new Map<string, FollowUpVerdict>();
  const followUps = entries.filter((e): e is FollowUp => e.operation !== 'authorization' && e.state !== 'barred');
  const status = reading.status.toUpperCase();
  const history = [...reading.history];

  // A reversal of a captured sale (CREDITVOID without an amount on SETTLED) is a refund at the
  // gateway; its refund item belongs to the reversal, not to a partial refund of the same amount.
  const reversals = followUps.filter((e) => e.operation === 'reversal');
  const gatewayReversals = history.filter((h) => h.type === 'reversal');
  if (reversals.length && !gatewayReversals.length && status === 'REFUND') {
    const amount = reversals[0]!.amountMinor;
    const at = history.findIndex((h) => h.type === 'refund' && h.status === 'success' && h.amountMinor === amount);
    if (at >= 0) history.splice(at, 1);
  }

  const bucket = (kind: FollowUp['operation'], amount?: number) => {
    const items = history.filter((h) => h.type === kind && (amount === undefined || h.amountMinor === amount));
    const ours = followUps.filter((e) => e.operation === kind && (amount === undefined || e.amountMinor === amount));
    return { items, ours };
  };
  const assign = (items: readonly GatewayHistoryItem[], ours: readonly FollowUp[]) => {
    const count = (s: GatewayHistoryItem['status']) => items.filter((i) => i.status === s).length;
    // A refusal before processing left no transaction at the gateway: it is not one of its failures.
    const recorded = (k: 'approved' | 'declined') => ours.filter((e) => e.state === 'answered' && e.outcome?.kind === k && !e.refused).length;
    const open = ours.filter((e) => e.state !== 'answered').sort((a, b) => a.at.localeCompare(b.at) || a.key.localeCompare(b.key));
    let approve = Math.max(0, count('success') - recorded('approved'));
    let decline = Math.max(0, count('fail') - recorded('declined'));
    let waiting = count('waiting') + count('other');
    for (const e of open) {
      if (approve > 0) {
        approve--;
        verdicts.set(e.key, { kind: 'approved' });
      } else if (decline > 0) {
        decline--;
        verdicts.set(e.key, { kind: 'declined', reason: DECLINED_AT_GATEWAY });
      } else if (waiting > 0) {
        waiting--;
        verdicts.set(e.key, { kind: 'open' });
      } else verdicts.set(e.key, { kind: 'absent' });
    }
  };

  const refundAmounts = new Set(followUps.filter((e) => e.operation === 'refund').map((e) => e.amountMinor));
  for (const amount of refundAmounts) {
    const { items, ours } = bucket('refund', amount);
    assign(items, ours);
  }
  for (const kind of ['capture', 'void', 'reversal'] as const) {
    const { items, ours } = bucket(kind);
    if (!ours.length) continue;
    if (items.length) {
      assign(items, ours);
      continue;
    }
    // A gateway whose history does not list this kind: what the status proves (one of each at most).
    const proven =
      kind === 'capture' ? ['SETTLED', 'REFUND', 'VOID', 'CHARGEBACK'].includes(status) : kind === 'void' ? status === 'VOID' : status === 'REVERSAL' || status === 'REFUND';
    // CAPTURE and VOID are answered at once, so a status that does not prove one proves it never
    // happened: a hold still PENDING (or reversed) was never captured, and a payment SETTLED, refunded
    // or charged back was never voided (a voided one can be neither). A reversal the gateway had
    // would show: REVERSAL (of a hold), REFUND (of a sale), or a refund of its amount still waiting;
    // any other status without one never received it. Nothing is left open for ever: an open verdict
    // keeps the operation in flight, asked about again at every reconcile run.
    const reversalWaiting = kind === 'reversal' && history.some((h) => h.type === 'refund' && h.status === 'waiting' && h.amountMinor === ours[0]!.amountMinor);
    const synthetic: GatewayHistoryItem[] = proven ? [{ type: kind, status: 'success' }] : reversalWaiting ? [{ type: kind, status: 'waiting' }] : [];
    assign(synthetic, ours);
  }
  return verdicts;
}
