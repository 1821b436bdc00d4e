import fc from 'fast-check';
import {
  applyChange,
  decideAuthorization,
  decideFollowUp,
  guardHolds,
  judgeChallengeAnswer,
  SANDBOX_FOLLOW_UP_REASONS as R,
  type SandboxFollowUp,
} from '../../lambdas/adapters/sandbox-acquirer/bank';
import type { CardFacts, LedgerEntry } from '../../lambdas/adapters/sandbox-acquirer/ledger';
import { SANDBOX_OTP, SANDBOX_REASONS, SANDBOX_TEST_CARDS, SANDBOX_TEST_PAN_MASK } from '../../lambdas/adapters/sandbox-acquirer/rules';

/**
 * The sandbox's bank (bank.ts) on its own: no DynamoDB, no clock. The same rules run end to end in
 * test/integration/sandbox-ledger.test.ts and test/acquirers/sandbox.test.ts.
 */
const card = (month: number, mask = SANDBOX_TEST_PAN_MASK): CardFacts => ({ mask, expMonth: month, expYear: 2038 });
const ask = (amountMinor: number, over: Partial<{ currency: string; recurringOnStored: boolean; attempt: number }> = {}) => ({
  amountMinor,
  currency: 'EUR',
  recurringOnStored: false,
  attempt: 1,
  ...over,
});

describe('first authorizations', () => {
  it.each([
    ['01/38', card(1), { kind: 'approve' }],
    ['02/38', card(2), { kind: 'decline', reason: SANDBOX_REASONS.declined }],
    ['05/38', card(5), { kind: 'challenge', flow: '3ds', then: 'approve' }],
    ['06/38', card(6), { kind: 'challenge', flow: '3ds', then: 'decline' }],
    ['12/38', card(12), { kind: 'challenge', flow: 'redirect', then: 'approve' }],
    ['08/38', card(8), { kind: 'no-answer' }],
    ['another card', card(2, '520082****0007'), { kind: 'approve' }],
  ])('%s', (_name, facts, expected) => {
    expect(decideAuthorization(ask(2500), facts)).toEqual(expected);
  });

  // Mastercard and American Express test numbers have every outcome the Visa one has (docs/sandbox.md).
  it.each(SANDBOX_TEST_CARDS.map((c) => [c.brand, c.mask] as const))('%s (%s): the expiry chooses the outcome as for 4111', (_brand, mask) => {
    for (const month of [1, 2, 5, 6, 8, 12]) expect(decideAuthorization(ask(2500), card(month, mask))).toEqual(decideAuthorization(ask(2500), card(month)));
    expect(decideAuthorization(ask(2500), card(2, mask))).toEqual({ kind: 'decline', reason: SANDBOX_REASONS.declined });
  });

  it.each([
    ['a zero amount', ask(0), R.invalidAmount],
    ['a fraction', ask(1.5), R.invalidAmount],
    ['an unsafe integer', ask(2 ** 53), R.invalidAmount],
    ['an unknown currency', ask(100, { currency: 'XXX' }), R.unknownCurrency],
  ])('declines %s before looking at the card', (_name, request, reason) => {
    expect(decideAuthorization(request, card(1))).toEqual({ kind: 'decline', reason });
  });

  it('declines a stored credential it does not know', () => {
    expect(decideAuthorization(ask(100, { recurringOnStored: true }), undefined)).toEqual({ kind: 'decline', reason: SANDBOX_REASONS.recurringUnavailable });
  });
});

describe('merchant-initiated charges on a stored card', () => {
  it.each([
    ['01/38, any amount', card(1), 2500, 1, { kind: 'approve' }],
    ['01/38, an amount ending in 51', card(1), 2551, 1, { kind: 'decline', reason: SANDBOX_REASONS.recurringDeclined }],
    ['01/38, an amount ending in 52, first try', card(1), 2552, 1, { kind: 'decline', reason: SANDBOX_REASONS.softDeclined, soft: true }],
    ['01/38, an amount ending in 52, a retry', card(1), 2552, 2, { kind: 'approve' }],
    ['another card', card(5), 2500, 1, { kind: 'decline', reason: SANDBOX_REASONS.recurringUnavailable }],
  ])('%s', (_name, facts, amountMinor, attempt, expected) => {
    expect(decideAuthorization(ask(amountMinor, { recurringOnStored: true, attempt }), facts)).toEqual(expected);
  });
});

const auth = (over: Partial<LedgerEntry> = {}): LedgerEntry => ({
  idempotencyKey: 'pay.1',
  operation: 'auth',
  acquirerRef: 'sbx_a',
  card: card(1),
  amountMinor: 1000,
  currency: 'EUR',
  at: '2031-01-01T00:00:00.000Z',
  seq: 1,
  outcome: { kind: 'approved', acquirerRef: 'sbx_a' },
  status: 'approved',
  capture: false,
  capturedMinor: 0,
  refundedMinor: 0,
  ...over,
});
const sale = (over: Partial<LedgerEntry> = {}) => auth({ operation: 'sale', capture: true, capturedMinor: 1000, ...over });
const follow = (amountMinor: number, over: Partial<{ currency: string; acquirerRef: string }> = {}) => ({
  authorization: { idempotencyKey: 'pay.1', acquirerRef: over.acquirerRef ?? 'sbx_a' },
  amountMinor,
  currency: over.currency ?? 'EUR',
});
const refusal = (kind: SandboxFollowUp, on: LedgerEntry | undefined, amountMinor: number, over = {}) => {
  const d = decideFollowUp(kind, on, follow(amountMinor, over));
  return 'refused' in d ? d.refused : undefined;
};

describe('follow-ups', () => {
  it.each<[string, SandboxFollowUp, LedgerEntry | undefined, number, object, string | undefined]>([
    ['capture of an authorization', 'capture', auth(), 600, {}, undefined],
    ['capture of more than authorized', 'capture', auth(), 1001, {}, R.captureTooBig],
    ['capture twice', 'capture', auth({ capturedMinor: 600 }), 100, {}, R.alreadyCaptured],
    ['capture of a sale', 'capture', sale(), 100, {}, R.capturedAtAuthorization],
    ['capture on 03/38', 'capture', auth({ card: card(3) }), 100, {}, SANDBOX_REASONS.captureDeclined],
    ['capture of zero', 'capture', auth(), 0, {}, R.invalidAmount],
    ['void of a sale', 'void', sale(), 1000, {}, undefined],
    ['void with refunds', 'void', sale({ refundedMinor: 1 }), 1000, {}, R.refunded],
    ['void of nothing captured', 'void', auth(), 1000, {}, R.notCaptured],
    ['void on 04/38', 'void', sale({ card: card(4) }), 1000, {}, SANDBOX_REASONS.voidDeclined],
    ['refund within the captured amount', 'refund', sale({ refundedMinor: 400 }), 600, {}, undefined],
    ['refund beyond it', 'refund', sale({ refundedMinor: 400 }), 601, {}, R.refundTooBig],
    ['refund of nothing captured', 'refund', auth(), 1, {}, R.notCaptured],
    ['refund on 07/38', 'refund', sale({ card: card(7) }), 1, {}, SANDBOX_REASONS.refundDeclined],
    ['release of an authorization', 'reversal', auth(), 0, {}, undefined],
    ['release of a captured authorization', 'reversal', auth({ capturedMinor: 1 }), 0, {}, R.alreadyCaptured],
    ['reversal of a sale', 'reversal', sale(), 0, {}, undefined],
    ['reversal of a refunded sale', 'reversal', sale({ refundedMinor: 1 }), 0, {}, R.refunded],
    ['anything after a void', 'refund', sale({ voided: true }), 1, {}, R.voided],
    ['anything after a release', 'capture', auth({ reversed: true }), 1, {}, R.released],
    ['anything after a reversal', 'refund', sale({ reversed: true }), 1, {}, R.reversed],
    ['an unknown authorization', 'capture', undefined, 1, {}, R.unknownAuthorization],
    ['another authorization', 'capture', auth(), 1, { acquirerRef: 'sbx_b' }, R.unknownAuthorization],
    ['a follow-up of a follow-up', 'refund', sale({ operation: 'refund' }), 1, {}, R.unknownAuthorization],
    ['a declined authorization', 'capture', auth({ status: 'declined' }), 1, {}, R.notApproved],
    ['another currency', 'capture', auth(), 1, { currency: 'USD' }, R.currencyMismatch],
  ])('%s', (_name, kind, on, amountMinor, over, expected) => {
    expect(refusal(kind, on, amountMinor, over)).toBe(expected);
  });

  it('moves what each follow-up gives back', () => {
    const moved = (kind: SandboxFollowUp, on: LedgerEntry, amountMinor: number) => {
      const d = decideFollowUp(kind, on, follow(amountMinor));
      return 'refused' in d ? d.refused : d.amountMinor;
    };
    expect(moved('void', sale({ capturedMinor: 700 }), 1)).toBe(700);
    expect(moved('reversal', auth(), 0)).toBe(1000);
    expect(moved('reversal', sale({ capturedMinor: 800 }), 0)).toBe(800);
    expect(moved('refund', sale(), 250)).toBe(250);
  });
});

describe('the guard a follow-up is written under', () => {
  // Follow-ups decided on one reading of the balances and applied in any order, each only where its
  // guard still holds on the balances as they are then (the ledger store's conditional write): the
  // money rules hold whatever the interleaving.
  const step = fc.record({
    kind: fc.constantFrom<SandboxFollowUp>('capture', 'void', 'refund', 'reversal'),
    amountMinor: fc.integer({ min: 1, max: 1200 }),
    staleBy: fc.integer({ min: 0, max: 3 }),
  });
  it('keeps captured ≤ authorized, refunded ≤ captured, and nothing after a void or reversal', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(step, { maxLength: 12 }), (isSale, steps) => {
        const history: LedgerEntry[] = [isSale ? sale() : auth()];
        let moved = 0;
        for (const s of steps) {
          const read = history[Math.max(0, history.length - 1 - s.staleBy)]!;
          const now = history[history.length - 1]!;
          const d = decideFollowUp(s.kind, read, follow(s.amountMinor));
          if ('refused' in d || !guardHolds(d.guard, now, 'sbx_a')) continue;
          expect(now.voided || now.reversed).toBeFalsy();
          history.push(applyChange(now, d.change));
          moved++;
        }
        const last = history[history.length - 1]!;
        expect(last.capturedMinor!).toBeLessThanOrEqual(last.amountMinor);
        expect(last.refundedMinor!).toBeLessThanOrEqual(last.capturedMinor!);
        if (last.voided) expect(last.refundedMinor).toBe(0);
        expect(history.length).toBe(moved + 1);
      }),
    );
  });

  it('holds on the balances it was decided on', () => {
    fc.assert(
      fc.property(step, fc.boolean(), fc.integer({ min: 0, max: 1000 }), (s, isSale, refunded) => {
        const on = isSale ? sale({ refundedMinor: refunded }) : auth();
        const d = decideFollowUp(s.kind, on, follow(s.amountMinor));
        if (!('refused' in d)) expect(guardHolds(d.guard, on, 'sbx_a')).toBe(true);
      }),
    );
  });
});

describe('answers on the challenge page', () => {
  const pending = (flow: '3ds' | 'redirect', then: 'approve' | 'decline' = 'approve', wrongCodes?: number) => ({ flow, then, capture: true, storeCredential: false, ...(wrongCodes === undefined ? {} : { wrongCodes }) });
  it.each([
    ['the code on a card that passes', pending('3ds'), { code: SANDBOX_OTP, confirm: true }, { kind: 'approve' }],
    ['the code on a card that fails', pending('3ds', 'decline'), { code: SANDBOX_OTP, confirm: true }, { kind: 'decline', reason: SANDBOX_REASONS.threeDsFailed }],
    ['a wrong code, first', pending('3ds'), { code: '000000', confirm: true }, { kind: 'retry', wrongCodes: 1, codeTriesLeft: 2 }],
    ['a wrong code, second', pending('3ds', 'approve', 1), { code: '000000', confirm: true }, { kind: 'retry', wrongCodes: 2, codeTriesLeft: 1 }],
    ['a wrong code, the last allowed', pending('3ds', 'approve', 2), { code: '000000', confirm: true }, { kind: 'decline', reason: SANDBOX_REASONS.threeDsFailed }],
    ['a refusal of 3-D Secure', pending('3ds'), { confirm: false }, { kind: 'decline', reason: SANDBOX_REASONS.threeDsFailed }],
    ['a confirmed redirect', pending('redirect'), { confirm: true }, { kind: 'approve' }],
    ['a refused redirect', pending('redirect'), { confirm: false }, { kind: 'decline', reason: SANDBOX_REASONS.redirectFailed }],
  ])('%s', (_name, p, answer, expected) => {
    expect(judgeChallengeAnswer(p, answer)).toEqual(expected);
  });
});
