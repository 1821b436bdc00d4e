import { ERRORS, type ErrorName } from '../../lambdas/domain/errors';
import { PAYMENT_STATUSES, type PaymentStatus } from '../../lambdas/domain/payment';
import { OPERATIONS, TRANSITIONS, refusalOf, transitionTable, type Operation } from '../../lambdas/domain/state-machine';

/**
 * Which operation may act on a payment in which status (seed spec §3, protocol.md §4), and the
 * catalogued refusal otherwise. Every status × operation pair is checked against this table.
 */
const ok = 'allowed' as const;
type Expected = typeof ok | ErrorName;

const EXPECTED: Readonly<Record<PaymentStatus, Readonly<Record<Operation, Expected>>>> = {
  //            pay (customer, on the link)   capture                  release                  void                   refund                  retry                  chargeback (the acquirer's)
  prepare: { pay: ok, capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: 'CHARGEBACK_NOT_SETTLED' },
  settled: { pay: 'PAYMENT_NOT_FOUND', capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: ok, refund: ok, retry: 'RETRY_NOT_ALLOWED', chargeback: ok },
  pending: { pay: 'PAYMENT_NOT_FOUND', capture: ok, release: ok, void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: 'CHARGEBACK_NOT_SETTLED' },
  '3ds': { pay: 'PAYMENT_NOT_FOUND', capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: 'CHARGEBACK_NOT_SETTLED' },
  redirect: { pay: 'PAYMENT_NOT_FOUND', capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: 'CHARGEBACK_NOT_SETTLED' },
  decline: { pay: ok, capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: ok, chargeback: 'CHARGEBACK_NOT_SETTLED' },
  refund: { pay: 'PAYMENT_NOT_FOUND', capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: 'CHARGEBACK_NOT_SETTLED' },
  void: { pay: 'PAYMENT_NOT_FOUND', capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: 'CHARGEBACK_NOT_SETTLED' },
  reversal: { pay: 'PAYMENT_NOT_FOUND', capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: 'CHARGEBACK_NOT_SETTLED' },
  chargeback: { pay: 'PAYMENT_NOT_FOUND', capture: 'CAPTURE_NOT_PENDING', release: 'CAPTURE_NOT_PENDING', void: 'VOID_NOT_SETTLED', refund: 'REFUND_NOT_ALLOWED', retry: 'RETRY_NOT_ALLOWED', chargeback: ok },
};

/** A payment that meets every condition beyond its status (so the status alone decides). */
const payment = (status: PaymentStatus) => ({ status, softDecline: true, recurringChainToken: 'c'.repeat(64), inFlight: undefined });

describe('every status × every operation', () => {
  const cases = PAYMENT_STATUSES.flatMap((status) => OPERATIONS.map((operation) => ({ status, operation, expected: EXPECTED[status][operation] })));

  it('the expected table names every status and every operation, and nothing else', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...PAYMENT_STATUSES].sort());
    for (const status of PAYMENT_STATUSES) expect(Object.keys(EXPECTED[status]).sort()).toEqual([...OPERATIONS].sort());
    expect(cases).toHaveLength(PAYMENT_STATUSES.length * OPERATIONS.length);
  });

  it.each(cases)('$operation on a $status payment → $expected', ({ status, operation, expected }) => {
    expect(refusalOf(operation, payment(status)) ?? ok).toBe(expected);
  });

  it('refuses only with codes of the catalog, and void, refund, capture and retry with their documented ones', () => {
    const refusals = new Set(cases.map((c) => c.expected).filter((e): e is ErrorName => e !== ok));
    for (const name of refusals) expect(ERRORS[name]).toBeDefined();
    expect(ERRORS[TRANSITIONS.void.refusal].code).toBe(208013);
    expect(ERRORS[TRANSITIONS.refund.refusal].code).toBe(208005);
    expect(ERRORS[TRANSITIONS.capture.refusal].code).toBe(208003);
    expect(ERRORS[TRANSITIONS.retry.refusal].code).toBe(208011);
    expect(ERRORS[TRANSITIONS.chargeback.refusal].code).toBe(208014);
    // The platform's own code for a chargeback bigger than the payment (shared spec, S2S CARD error list).
    expect(ERRORS.CHARGEBACK_AMOUNT_TOO_BIG.code).toBe(208010);
  });

  it('transitionTable (for the docs) agrees with the table above', () => {
    expect(transitionTable()).toEqual(cases.map(({ status, operation, expected }) => ({ status, operation, allowed: expected === ok })));
  });
});

describe('retry: beyond the decline status', () => {
  const inFlight = { attempt: 2, transId: 't', startedAt: '2030-01-01T00:00:00.000Z', idempotencyKey: 'p.2' };
  it.each([
    ['a soft decline of a recurring charge, nothing in flight', ok, { softDecline: true, recurringChainToken: 'chain' }],
    ['a hard decline', 'RETRY_NOT_ALLOWED', { softDecline: false, recurringChainToken: 'chain' }],
    ['a decline with no softness recorded (a page payment)', 'RETRY_NOT_ALLOWED', { recurringChainToken: 'chain' }],
    ['a soft decline outside a recurring chain', 'RETRY_NOT_ALLOWED', { softDecline: true }],
    ['a soft decline with an attempt still in flight', 'RETRY_NOT_ALLOWED', { softDecline: true, recurringChainToken: 'chain', inFlight }],
  ] as const)('%s → %s', (_name, expected, facts) => {
    expect(refusalOf('retry', { status: 'decline', ...facts }) ?? ok).toBe(expected);
  });

  it('the extra conditions never make another operation refuse', () => {
    for (const status of PAYMENT_STATUSES) {
      for (const operation of OPERATIONS.filter((o) => o !== 'retry')) {
        expect(refusalOf(operation, { status })).toBe(refusalOf(operation, payment(status)));
      }
    }
  });
});
