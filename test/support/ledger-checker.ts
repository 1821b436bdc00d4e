import { parseAmount } from '../../lambdas/domain/money';
import type { Payment } from '../../lambdas/domain/payment';

/**
 * The one invariant of money: our records agree with the acquirer's own ledger. For every payment,
 * what the acquirer approved (sales, captures, refunds, voids, reversals) nets to what our status,
 * amounts and transactions say is held; refunded ≤ captured ≤ authorized; and, once the reconciler
 * has run, nothing is left in flight.
 */
export interface AcquirerRecord {
  readonly operation: 'sale' | 'auth' | 'capture' | 'refund' | 'void' | 'reversal' | 'recurring';
  readonly amount: string;
  readonly currency: string;
  readonly outcome: 'approved' | 'declined' | 'pending';
  readonly idempotency_key: string;
}

export interface Divergence {
  readonly paymentId: string;
  readonly problem: string;
}

const minor = (r: AcquirerRecord): number => {
  const parsed = parseAmount(r.amount, r.currency);
  if (typeof parsed === 'string') throw new Error(`ledger amount ${r.amount} ${r.currency} is not readable`);
  return parsed.amountMinor;
};

/** What the acquirer's ledger says of one payment, in minor units. */
export function acquirerView(ledger: readonly AcquirerRecord[]) {
  const approved = ledger.filter((r) => r.outcome === 'approved');
  const sum = (ops: AcquirerRecord['operation'][]) => approved.filter((r) => ops.includes(r.operation)).reduce((n, r) => n + minor(r), 0);
  const authorized = sum(['auth']);
  const charged = sum(['sale', 'recurring']);
  const captured = sum(['capture']);
  const refunded = sum(['refund']);
  const voided = sum(['void']);
  const reversed = sum(['reversal']);
  // A reversal gives back an uncaptured authorization or a whole (late) sale.
  const heldByAuth = authorized > 0 && captured === 0 ? Math.max(0, authorized - reversed) : 0;
  const reversedSales = authorized > 0 && captured === 0 ? 0 : reversed;
  return {
    authorized,
    collected: charged + captured,
    refunded,
    voided,
    reversed,
    heldByAuth,
    /** Money the customer has paid and not got back. */
    net: charged + captured - refunded - voided - reversedSales,
    pending: ledger.filter((r) => r.outcome === 'pending').length,
  };
}

/** What our records say of the same payment. */
export function ourView(p: Payment) {
  const ok = (types: string[]) => p.transactions.filter((t) => types.includes(t.type) && t.status === 'success');
  const total = (types: string[]) => ok(types).reduce((n, t) => n + t.amountMinor, 0);
  const paid = ['settled', 'refund', 'void'].includes(p.status);
  const captured = !paid ? 0 : (p.capturedMinor ?? p.order.amountMinor);
  const refunded = p.refundedMinor ?? 0;
  return {
    captured,
    refunded,
    heldByAuth: p.status === 'pending' ? p.order.amountMinor : 0,
    net: p.status === 'void' ? 0 : captured - refunded,
    refundTransactions: total(['refund']),
    voidTransactions: total(['void']),
    inFlight: [
      p.inFlight ? `attempt ${p.inFlight.attempt}` : undefined,
      p.action ? `challenge of attempt ${p.action.attempt}` : undefined,
      p.operation ? `${p.operation.kind} ${p.operation.transId}` : undefined,
      ...Object.keys(p.refunds ?? {}).map((id) => `refund ${id}`),
    ].filter((x): x is string => Boolean(x)),
  };
}

export function checkPayment(p: Payment, ledger: readonly AcquirerRecord[], options: { readonly settled: boolean }): Divergence[] {
  const problems: string[] = [];
  const acq = acquirerView(ledger);
  const ours = ourView(p);
  const expect = (what: string, a: number, b: number) => {
    if (a !== b) problems.push(`${what}: ours ${a}, acquirer ${b}`);
  };
  expect('money held (paid − given back)', ours.net, acq.net);
  expect('refunded', ours.refunded, acq.refunded);
  expect('refund transactions', ours.refundTransactions, acq.refunded);
  expect('authorization held', ours.heldByAuth, acq.heldByAuth);
  expect('voided', p.status === 'void' ? ours.captured : 0, acq.voided);
  expect('void transactions', ours.voidTransactions, acq.voided);
  if (ours.refunded > ours.captured) problems.push(`refunded ${ours.refunded} > captured ${ours.captured}`);
  if (ours.captured > p.order.amountMinor) problems.push(`captured ${ours.captured} > authorized ${p.order.amountMinor}`);
  if ((p.refundHeldMinor ?? 0) < ours.refunded) problems.push(`refunds held ${p.refundHeldMinor ?? 0} < refunded ${ours.refunded}`);
  if (options.settled) {
    if (ours.inFlight.length) problems.push(`left in flight: ${ours.inFlight.join(', ')}`);
    if ((p.refundHeldMinor ?? 0) !== ours.refunded) problems.push(`refunds held ${p.refundHeldMinor ?? 0} ≠ refunded ${ours.refunded} with nothing in flight`);
    // The history is a log: an operation reported `waiting` must have its outcome recorded after it.
    const last = new Map(p.transactions.map((t) => [t.transId, t.status]));
    const waiting = [...last].filter(([, status]) => status === 'waiting').map(([id]) => id);
    if (waiting.length) problems.push(`transactions left waiting: ${waiting.join(', ')}`);
    // A challenge still pending at an acquirer that cannot close it holds no money: not a divergence.
    if (Object.keys(p.watching ?? {}).length) problems.push(`still watching ${Object.keys(p.watching ?? {}).join(', ')}`);
  }
  return problems.map((problem) => ({ paymentId: p.paymentId, problem }));
}
