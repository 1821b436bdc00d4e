import fc from 'fast-check';
import {
  NOT_SENT,
  awaitsAnotherAttempt,
  closesByExpiryAt,
  declineEffect,
  heldDeclineIndex,
  reportedStatus,
  sentInTurn,
} from '../../lambdas/domain/attempts';
import type { Payment, Transaction } from '../../lambdas/domain/payment';
import { linkPayment as paymentOnLink } from '../support/payment-fixtures';

/**
 * The cascading rule (protocol.md §7; the platform's guide: "you will receive only callback for
 * the last payment attempt, where the final status of the order (settled or declined) is
 * determined"), as the pure rules of domain/attempts.ts state it: first each rule on its own,
 * table-driven; then, over any sequence of attempts, Close and expiry on one link, the properties
 * a merchant relies on: at most one outcome is ever reported, it is the final attempt's, it is
 * reported once the outcome is final, and the status reads decline only when the link takes no
 * further attempt.
 */
const T0 = Date.parse('2030-05-01T09:00:00Z');
const MINUTE = 60_000;
const at = (ms: number) => new Date(T0 + ms);

function tx(type: Transaction['type'], status: Transaction['status'], extra: Partial<Transaction> = {}): Transaction {
  return { transId: `t-${type}-${status}-${Math.random().toString(36).slice(2, 8)}`, type, status, amountMinor: 2500, at: at(0).toISOString(), ...extra };
}

/** A payment on a checkout link that expires `expiresInMs` after T0. */
const linkPayment = (overrides: Partial<Payment> = {}, expiresInMs = 60 * MINUTE): Payment => paymentOnLink(at(0), overrides, expiresInMs);

/** A merchant-initiated payment: no link. */
const recurringPayment = (overrides: Partial<Payment> = {}): Payment => {
  const { checkout: _none, ...p } = linkPayment(overrides);
  return p;
};

const declined = (overrides: Partial<Payment> = {}, expiresInMs?: number) =>
  linkPayment({ status: 'decline', reason: 'Declined by processing.', declines: 1, transactions: [tx('sale', 'fail', { held: true })], ...overrides }, expiresInMs);

describe('each rule', () => {
  it.each([
    ['a declined link, open, before expiry: yes', declined(), at(0), true],
    ['a declined link closed by the customer: no', declined({ linkClosed: { at: at(0).toISOString(), why: 'customer' } }), at(0), false],
    ['a declined link at its expiry: no', declined(), at(60 * MINUTE), false],
    ['a link not declined (prepare): no', linkPayment(), at(0), false],
    ['a settled link: no', linkPayment({ status: 'settled' }), at(0), false],
    ['a declined merchant-initiated payment: no', recurringPayment({ status: 'decline' }), at(0), false],
  ] as const)('awaitsAnotherAttempt: %s', (_what, p, now, expected) => {
    expect(awaitsAnotherAttempt(p, now)).toBe(expected);
  });

  it.each([
    ['a declined link still open: its expiry', declined(), at(60 * MINUTE)],
    ['a declined link already closed: never', declined({ linkClosed: { at: at(0).toISOString(), why: 'declines' } }), undefined],
    ['a settled link: never', linkPayment({ status: 'settled' }), undefined],
    ['a link in prepare (no decline to report): never', linkPayment(), undefined],
    ['a declined merchant-initiated payment: never', recurringPayment({ status: 'decline' }), undefined],
  ] as const)('closesByExpiryAt: %s', (_what, p, expected) => {
    expect(closesByExpiryAt(p)).toEqual(expected);
  });

  it.each([
    ['merchant-initiated: never held, no link to close', recurringPayment(), 1, 3, at(0), { held: false }],
    ['the link is already closed', declined({ linkClosed: { at: at(0).toISOString(), why: 'customer' } }), 2, 3, at(0), { held: false }],
    ['declines left, link open: held', linkPayment(), 1, 3, at(0), { held: true }],
    ['the last allowed decline closes the link', linkPayment(), 3, 3, at(0), { held: false, linkClosed: { at: at(0).toISOString(), why: 'declines' } }],
    ['a decline recorded after the expiry closes it', linkPayment(), 1, 3, at(60 * MINUTE), { held: false, linkClosed: { at: at(60 * MINUTE).toISOString(), why: 'expired' } }],
    ['used up and expired: the declines are the reason', linkPayment(), 3, 3, at(61 * MINUTE), { held: false, linkClosed: { at: at(61 * MINUTE).toISOString(), why: 'declines' } }],
  ] as const)('declineEffect: %s', (_what, p, declinesAfter, maxDeclines, now, expected) => {
    expect(declineEffect(p, declinesAfter, maxDeclines, now)).toEqual(expected);
  });

  it.each([
    ['no transactions: none', [], undefined],
    ['one held decline: it', [tx('sale', 'fail', { held: true })], 0],
    ['a 3-D Secure step, then its held decline: the decline', [tx('3ds', 'success'), tx('sale', 'fail', { held: true })], 1],
    ['a held decline, then an approval: none', [tx('sale', 'fail', { held: true }), tx('sale', 'success')], undefined],
    ['a held decline, then the step of the next attempt: none', [tx('sale', 'fail', { held: true }), tx('redirect', 'success')], undefined],
    ['a decline already reported (not held): none', [tx('sale', 'fail')], undefined],
    ['a held decline, then a ledger-only approval: the decline', [tx('sale', 'fail', { held: true }), tx('sale', 'success', { internal: true })], 0],
  ] as const)('heldDeclineIndex: %s', (_what, transactions, expected) => {
    expect(heldDeclineIndex(linkPayment({ transactions }))).toBe(expected);
  });

  it.each([
    ['a declined link awaiting another attempt: prepare, no reason', declined(), at(0), { status: 'prepare' }],
    ['a declined link closed: decline with its reason', declined({ linkClosed: { at: at(0).toISOString(), why: 'customer' } }), at(0), { status: 'decline', reason: 'Declined by processing.' }],
    ['a declined link past its expiry: decline with its reason', declined(), at(60 * MINUTE), { status: 'decline', reason: 'Declined by processing.' }],
    ['a settled payment', linkPayment({ status: 'settled' }), at(0), { status: 'settled' }],
    ['a declined merchant-initiated payment', recurringPayment({ status: 'decline', reason: 'Insufficient funds. Retry later.' }), at(0), { status: 'decline', reason: 'Insufficient funds. Retry later.' }],
  ] as const)('reportedStatus: %s', (_what, p, now, expected) => {
    expect(reportedStatus(p, now)).toEqual(expected);
  });

  it.each([
    ['an outcome', tx('sale', 'success'), { send: true }],
    ['a step to the challenge', tx('3ds', 'success'), { send: true }],
    ['a decline that is final', tx('sale', 'fail'), { send: true }],
    ['a held decline', tx('sale', 'fail', { held: true }), { send: false, why: NOT_SENT.held }],
    ['a ledger-only entry', tx('sale', 'success', { internal: true }), { send: false, why: NOT_SENT.internal }],
  ] as const)('sentInTurn: %s', (_what, t, expected) => {
    expect(sentInTurn(t)).toEqual(expected);
  });
});

/**
 * One link driven as the use cases drive it (record-outcome, checkout's Close, the reconciler's
 * expiry), with the rules under test deciding: what is held, what closes, what gets queued.
 */
type Flow = 'card' | '3ds' | 'redirect';
type Step =
  | { readonly kind: 'attempt'; readonly flow: Flow; readonly approved: boolean; readonly afterMs: number; readonly challengeMs: number }
  | { readonly kind: 'close'; readonly afterMs: number }
  | { readonly kind: 'reconcile'; readonly afterMs: number };

interface Link {
  payment: Payment;
  now: Date;
  /** Indexes of transactions whose callback a closure queued (the store's sendCallback). */
  readonly queued: number[];
  readonly maxDeclines: number;
}

const linkClosedOrUsedUp = (l: Link) => (l.payment.declines ?? 0) >= l.maxDeclines || l.payment.linkClosed?.why === 'declines' || l.payment.linkClosed?.why === 'customer';
const expired = (l: Link) => Date.parse(l.payment.checkout!.expiresAt) <= l.now.getTime();
/** What the customer finds on the link (checkout's viewOf): a form that takes another attempt, or not. */
const takesAttempt = (l: Link) => !l.payment.paidAt && !linkClosedOrUsedUp(l) && !expired(l);

function append(l: Link, t: Transaction, set: Partial<Payment>) {
  l.payment = { ...l.payment, ...set, transactions: [...l.payment.transactions, t] };
}

function apply(l: Link, step: Step) {
  l.now = new Date(l.now.getTime() + step.afterMs);
  switch (step.kind) {
    case 'attempt': {
      if (!takesAttempt(l)) return;
      if (step.flow !== 'card') {
        append(l, tx(step.flow, 'success'), { status: step.flow });
        l.now = new Date(l.now.getTime() + step.challengeMs);
      }
      if (step.approved) {
        append(l, tx('sale', 'success'), { status: 'settled', paidAt: l.now.toISOString() });
        return;
      }
      const declines = (l.payment.declines ?? 0) + 1;
      const effect = declineEffect(l.payment, declines, l.maxDeclines, l.now);
      append(l, tx('sale', 'fail', effect.held ? { held: true } : {}), {
        status: 'decline',
        reason: 'Declined by processing.',
        declines,
        ...(!effect.held && effect.linkClosed ? { linkClosed: effect.linkClosed } : {}),
      });
      return;
    }
    case 'close': {
      // Close changes something only on a declined link that still shows its form.
      if (l.payment.paidAt || linkClosedOrUsedUp(l) || expired(l) || l.payment.status !== 'decline') return;
      const held = heldDeclineIndex(l.payment);
      l.payment = { ...l.payment, linkClosed: { at: l.now.toISOString(), why: 'customer' } };
      if (held !== undefined) l.queued.push(held);
      return;
    }
    case 'reconcile': {
      const closesAt = closesByExpiryAt(l.payment);
      if (!closesAt || closesAt > l.now) return;
      const held = heldDeclineIndex(l.payment);
      l.payment = { ...l.payment, linkClosed: { at: l.now.toISOString(), why: 'expired' } };
      if (held !== undefined) l.queued.push(held);
      return;
    }
  }
}

/** The outcome transactions (type sale) whose callback is sent in its turn or was queued by a closure. */
const reportedOutcomes = (l: Link) =>
  l.payment.transactions.flatMap((t, i) => (t.type === 'sale' && (sentInTurn(t).send || l.queued.includes(i)) ? [i] : []));

const lastOutcomeIndex = (l: Link) => l.payment.transactions.map((t) => t.type).lastIndexOf('sale');

const steps: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('attempt' as const),
    flow: fc.constantFrom<Flow>('card', '3ds', 'redirect'),
    approved: fc.boolean(),
    afterMs: fc.integer({ min: 0, max: 25 * MINUTE }),
    challengeMs: fc.integer({ min: 0, max: 25 * MINUTE }),
  }),
  fc.record({ kind: fc.constant('close' as const), afterMs: fc.integer({ min: 0, max: 25 * MINUTE }) }),
  fc.record({ kind: fc.constant('reconcile' as const), afterMs: fc.integer({ min: 0, max: 25 * MINUTE }) }),
);

const links = fc.record({
  maxDeclines: fc.integer({ min: 1, max: 5 }),
  expiresInMs: fc.integer({ min: 1, max: 120 }).map((m) => m * MINUTE),
  steps: fc.array(steps, { maxLength: 12 }),
});

function run(input: { maxDeclines: number; expiresInMs: number; steps: readonly Step[] }, check: (l: Link) => void): Link {
  const l: Link = { payment: linkPayment({}, input.expiresInMs), now: at(0), queued: [], maxDeclines: input.maxDeclines };
  for (const step of input.steps) {
    apply(l, step);
    check(l);
  }
  return l;
}

describe('over any sequence of attempts, Close and expiry on one link', () => {
  it('at most one outcome is ever reported (sent in turn or queued), and it is the final attempt\'s', () => {
    fc.assert(
      fc.property(links, (input) => {
        run(input, (l) => {
          const reported = reportedOutcomes(l);
          expect(reported.length).toBeLessThanOrEqual(1);
          if (reported.length === 1) expect(reported[0]).toBe(lastOutcomeIndex(l));
        });
      }),
      { numRuns: 500 },
    );
  });

  it('an outcome is reported exactly when it is final: paid, or a decline whose link closed', () => {
    fc.assert(
      fc.property(links, (input) => {
        run(input, (l) => {
          const final = l.payment.paidAt !== undefined || (l.payment.status === 'decline' && l.payment.linkClosed !== undefined);
          expect(reportedOutcomes(l)).toHaveLength(final ? 1 : 0);
          // A closure queues a callback once at most: a link closes once.
          expect(new Set(l.queued).size).toBe(l.queued.length);
          expect(l.queued.length).toBeLessThanOrEqual(1);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('status reads decline only when the link takes no further attempt, and prepare (no reason) while it does', () => {
    fc.assert(
      fc.property(links, (input) => {
        run(input, (l) => {
          const reported = reportedStatus(l.payment, l.now);
          if (reported.status === 'decline') {
            expect(takesAttempt(l)).toBe(false);
            expect(reported.reason).toBe('Declined by processing.');
          }
          if (l.payment.status === 'decline') {
            expect(reported).toEqual(takesAttempt(l) ? { status: 'prepare' } : { status: 'decline', reason: 'Declined by processing.' });
            expect(awaitsAnotherAttempt(l.payment, l.now)).toBe(takesAttempt(l));
          }
        });
      }),
      { numRuns: 500 },
    );
  });

  it('once the link has expired and the reconciler has looked, every attempted link has reported exactly one outcome', () => {
    fc.assert(
      fc.property(links, (input) => {
        const l = run(input, () => undefined);
        // Some time after the expiry, whenever the steps ended.
        const pastExpiry = Math.max(0, Date.parse(l.payment.checkout!.expiresAt) - l.now.getTime()) + MINUTE;
        apply(l, { kind: 'reconcile', afterMs: pastExpiry });
        expect(expired(l)).toBe(true);
        const attempted = l.payment.transactions.some((t) => t.type === 'sale');
        expect(reportedOutcomes(l)).toHaveLength(attempted ? 1 : 0);
        expect(closesByExpiryAt(l.payment)).toBeUndefined();
        expect(heldDeclineIndex(l.payment) === undefined || l.queued.includes(heldDeclineIndex(l.payment)!)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('only declines are held, and a held decline is the last attempt on the link until another attempt follows it', () => {
    fc.assert(
      fc.property(links, (input) => {
        run(input, (l) => {
          l.payment.transactions.forEach((t, i) => {
            if (!t.held) return;
            expect(`${t.type}/${t.status}`).toBe('sale/fail');
            const later = l.payment.transactions.slice(i + 1);
            if (later.length === 0) expect(heldDeclineIndex(l.payment)).toBe(i);
          });
          if (l.payment.paidAt) expect(heldDeclineIndex(l.payment)).toBeUndefined();
          const closesAt = closesByExpiryAt(l.payment);
          expect(closesAt === undefined).toBe(!(l.payment.status === 'decline' && l.payment.linkClosed === undefined));
          if (closesAt) expect(closesAt.toISOString()).toBe(l.payment.checkout!.expiresAt);
        });
      }),
      { numRuns: 500 },
    );
  });
});
