import { parseAmount } from '../../lambdas/domain/money';
import type { Payment } from '../../lambdas/domain/payment';

/**
 * The one invariant of money: our records agree with the acquirer's own ledger. For every payment,
 * what the acquirer approved (sales, captures, refunds, voids, reversals, chargebacks) nets to what our status,
 * amounts and transactions say is held; refunded ≤ captured ≤ authorized; and, once the reconciler
 * has run, nothing is left in flight.
 */
export interface AcquirerRecord {
  readonly operation: 'sale' | 'auth' | 'capture' | 'refund' | 'void' | 'reversal' | 'recurring' | 'chargeback';
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
  const chargedBack = sum(['chargeback']);
  // A reversal gives back an uncaptured authorization or a whole (late) sale.
  const heldByAuth = authorized > 0 && captured === 0 ? Math.max(0, authorized - reversed) : 0;
  const reversedSales = authorized > 0 && captured === 0 ? 0 : reversed;
  return {
    authorized,
    collected: charged + captured,
    refunded,
    voided,
    reversed,
    chargedBack,
    heldByAuth,
    /** Money the merchant holds of the customer's: paid, less what was given back or charged back. */
    net: charged + captured - refunded - voided - reversedSales - chargedBack,
    pending: ledger.filter((r) => r.outcome === 'pending').length,
  };
}

/** What our records say of the same payment. */
export function ourView(p: Payment) {
  const ok = (types: string[]) => p.transactions.filter((t) => types.includes(t.type) && t.status === 'success');
  const total = (types: string[]) => ok(types).reduce((n, t) => n + t.amountMinor, 0);
  const paid = ['settled', 'refund', 'void', 'chargeback'].includes(p.status);
  const captured = !paid ? 0 : (p.capturedMinor ?? p.order.amountMinor);
  const refunded = p.refundedMinor ?? 0;
  const chargedBack = p.chargedBackMinor ?? 0;
  return {
    captured,
    refunded,
    chargedBack,
    heldByAuth: p.status === 'pending' ? p.order.amountMinor : 0,
    net: p.status === 'void' ? 0 : captured - refunded - chargedBack,
    refundTransactions: total(['refund']),
    voidTransactions: total(['void']),
    chargebackTransactions: total(['chargeback']),
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
  expect('charged back', ours.chargedBack, acq.chargedBack);
  expect('chargeback transactions', ours.chargebackTransactions, acq.chargedBack);
  if ((p.status === 'chargeback') !== acq.chargedBack > 0) problems.push(`status ${p.status} with the acquirer's chargebacks ${acq.chargedBack}`);
  if (ours.refunded + ours.chargedBack > ours.captured) problems.push(`refunded ${ours.refunded} + charged back ${ours.chargedBack} > captured ${ours.captured}`);
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

/**
 * The S2S CARD gateway's ledger of one of our payments: every transaction it holds under an order id
 * of the payment (`<payment>.<n>`, one per attempt), as GET_TRANS_DETAILS reports it (the fake
 * gateway's `ledgerOf`).
 */
export interface GatewayLedgerTransaction {
  readonly transId: string;
  readonly orderId: string;
  readonly status: string;
  readonly auth: boolean;
  readonly amountMinor: number;
  readonly capturedMinor: number;
  readonly refundedMinor: number;
  readonly chargedBackMinor?: number;
  /** Paid with this wallet's token (`digital_wallet`), not a card. */
  readonly digitalWallet?: string;
  readonly transactions: readonly { readonly type: string; readonly status: 'success' | 'waiting' | 'fail'; readonly amountMinor: number }[];
}

/** Money a gateway transaction holds of the customer's: an open authorization, or what was captured and not given back. */
export function gatewayHolds(t: GatewayLedgerTransaction): number {
  if (t.status === 'PENDING') return t.amountMinor;
  if (t.status === 'SETTLED') return t.capturedMinor - t.refundedMinor;
  if (t.status === 'CHARGEBACK') return t.capturedMinor - t.refundedMinor - (t.chargedBackMinor ?? 0);
  return 0;
}

/** The gateway statuses each of our statuses may stand beside (the payment's approved transaction). */
const GATEWAY_STATUS: Readonly<Record<string, readonly string[]>> = {
  settled: ['SETTLED'],
  pending: ['PENDING'],
  refund: ['REFUND'],
  void: ['VOID'],
  // A released authorization; a whole sale given back reads REFUND at the gateway.
  reversal: ['REVERSAL', 'REFUND'],
  // Declined, or approved late and given back in full (the reversal of a late approval).
  decline: ['DECLINED', 'REVERSAL', 'REFUND', 'VOID'],
  chargeback: ['CHARGEBACK'],
  prepare: ['PREPARE', 'DECLINED'],
  '3ds': ['3DS', 'PREPARE'],
  redirect: ['REDIRECT', 'PREPARE'],
};

const successful = (t: GatewayLedgerTransaction, types: readonly string[]) => t.transactions.filter((i) => i.status === 'success' && types.includes(i.type));
const sorted = (xs: readonly number[]) => [...xs].sort((a, b) => a - b).join(',');

/**
 * One payment of ours against the S2S CARD gateway's ledger of it, per the gateway's own words:
 * - status: ours beside the gateway's status of the transaction our authorization names (ours
 *   `settled` = SETTLED with refunds below the captured amount, `refund` = REFUND, `void` = VOID,
 *   `reversal` = REVERSAL, `pending` = PENDING, `decline` = DECLINED or no transaction…);
 * - money: what that transaction holds (an open authorization, or captured minus refunded) equals
 *   what we say is held, and every other transaction of the payment (other attempts, late
 *   approvals) holds nothing;
 * - refunded: ours equals the sum of the gateway's successful refunds of that transaction;
 * - captured: ours equals the gateway's (the sale, or the successful capture of an authorization);
 * - the successful money transactions (captures, voids, refunds and reversals), by count and amount;
 * - what paid: the wallet we record (Apple Pay, Google Pay) is the one that transaction was paid
 *   with, and a payment we record as a card's was paid with a card;
 * - once settled: nothing in flight on our side, nothing `waiting` at the gateway.
 */
export function checkAgainstGateway(p: Payment, ledger: readonly GatewayLedgerTransaction[], options: { readonly settled: boolean }): Divergence[] {
  const problems: string[] = [];
  const ours = ourView(p);
  const main = p.authorization ? ledger.find((t) => t.transId === p.authorization!.acquirerRef) : undefined;
  const others = ledger.filter((t) => t !== main);
  const expect = (what: string, a: number | string, b: number | string) => {
    if (a !== b) problems.push(`${what}: ours ${a}, gateway ${b}`);
  };

  const allowed = GATEWAY_STATUS[p.status];
  if (main) {
    if (allowed && !allowed.includes(main.status)) problems.push(`status: ours ${p.status}, gateway ${main.status} (${main.transId})`);
  } else if (['settled', 'pending', 'refund', 'void', 'reversal', 'chargeback'].includes(p.status)) {
    problems.push(`status: ours ${p.status}, the gateway has no transaction ${p.authorization?.acquirerRef ?? '(no authorization recorded)'}`);
  }
  // What the merchant is told paid (status digital_wallet, callbacks) is what the gateway charged.
  if (main) expect('paid with', p.wallet?.wallet ?? 'a card', main.digitalWallet ?? 'a card');
  if (p.status === 'settled' && ours.refunded >= ours.captured) problems.push(`status settled with refunded ${ours.refunded} ≥ captured ${ours.captured}`);

  const held = main ? gatewayHolds(main) : 0;
  expect('money held', ours.net + ours.heldByAuth, held);
  for (const t of others) {
    const h = gatewayHolds(t);
    if (h) problems.push(`the gateway holds ${h} on ${t.transId} (order ${t.orderId}, ${t.status}), which we do not count`);
  }

  const gatewayRefunded = main ? successful(main, ['refund']).reduce((n, i) => n + i.amountMinor, 0) : 0;
  expect('refunded', ours.refunded, gatewayRefunded);
  expect('refund transactions', ours.refundTransactions, gatewayRefunded);
  const gatewayCaptured = !main ? 0 : main.auth ? successful(main, ['capture']).reduce((n, i) => n + i.amountMinor, 0) : successful(main, ['sale']).reduce((n, i) => n + i.amountMinor, 0);
  expect('captured', ['settled', 'refund', 'void', 'chargeback'].includes(p.status) ? ours.captured : 0, ['SETTLED', 'REFUND', 'VOID', 'CHARGEBACK'].includes(main?.status ?? '') ? gatewayCaptured : 0);
  const gatewayChargedBack = main ? successful(main, ['chargeback']).reduce((n, i) => n + i.amountMinor, 0) : 0;
  expect('charged back', ours.chargedBack, gatewayChargedBack);

  // Follow-ups by count and amount: captures and voids exactly; refunds and reversals together (a
  // reversal of a whole sale is a full CREDITVOID, which the gateway lists as a refund).
  const ourOk = (types: string[]) => p.transactions.filter((t) => t.status === 'success' && types.includes(t.type)).map((t) => t.amountMinor);
  const theirs = (types: string[]) => ledger.flatMap((t) => successful(t, types).map((i) => i.amountMinor));
  expect('successful captures', sorted(ourOk(['capture'])), sorted(theirs(['capture'])));
  expect('successful voids', sorted(ourOk(['void'])), sorted(theirs(['void'])));
  expect('successful refunds and reversals', sorted(ourOk(['refund', 'reversal'])), sorted(theirs(['refund', 'reversal'])));
  expect('chargebacks', sorted(ourOk(['chargeback'])), sorted(theirs(['chargeback'])));

  if (ours.refunded > ours.captured) problems.push(`refunded ${ours.refunded} > captured ${ours.captured}`);
  if (options.settled) {
    if (ours.inFlight.length) problems.push(`left in flight: ${ours.inFlight.join(', ')}`);
    if ((p.refundHeldMinor ?? 0) !== ours.refunded) problems.push(`refunds held ${p.refundHeldMinor ?? 0} ≠ refunded ${ours.refunded} with nothing in flight`);
    const last = new Map(p.transactions.map((t) => [t.transId, t.status]));
    const waiting = [...last].filter(([, status]) => status === 'waiting').map(([id]) => id);
    if (waiting.length) problems.push(`transactions left waiting: ${waiting.join(', ')}`);
    if (Object.keys(p.watching ?? {}).length) problems.push(`still watching ${Object.keys(p.watching ?? {}).join(', ')}`);
    const gatewayWaiting = ledger.flatMap((t) => t.transactions.filter((i) => i.status === 'waiting').map((i) => `${t.transId} ${i.type} ${i.amountMinor}`));
    if (gatewayWaiting.length) problems.push(`the gateway still has waiting: ${gatewayWaiting.join(', ')}`);
  }
  return problems.map((problem) => ({ paymentId: p.paymentId, problem }));
}
