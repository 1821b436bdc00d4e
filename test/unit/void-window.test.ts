import {
  VOID_CUTOFF_HOUR,
  VOID_REFUNDED_REASON,
  VOID_WINDOW_REASON,
  VOID_ZONE_OFFSET_MINUTES,
  canVoidAt,
  voidBlockedReason,
  voidWindowEndsAt,
} from '../../lambdas/domain/void-window';

/**
 * The void window (seed spec §3, §8): a settled payment can be voided on the day of the payment,
 * before 21:00 UTC+3; from 21:00 to 24:00 UTC+3 no void is accepted, nor on any later day.
 */

/** A wall-clock time at UTC+3, e.g. at3('2030-03-01T20:59:59'). */
const at3 = (local: string): Date => new Date(`${local}+03:00`);
const DAY = '2030-03-01';
const NEXT_DAY = '2030-03-02';
const CUTOFF = at3(`${DAY}T21:00:00`);

it('works at a fixed UTC+3 with a 21:00 cut-off (no daylight saving)', () => {
  expect(VOID_ZONE_OFFSET_MINUTES).toBe(180);
  expect(VOID_CUTOFF_HOUR).toBe(21);
});

describe('voidWindowEndsAt: when the window of a payment settled at a given time closes', () => {
  it.each([
    // paid at (UTC+3)                    window closes at (UTC+3), or never opens
    [`${DAY}T00:00:00`, `${DAY}T21:00:00`],
    [`${DAY}T00:00:01`, `${DAY}T21:00:00`],
    [`${DAY}T09:30:00`, `${DAY}T21:00:00`],
    [`${DAY}T20:59:58`, `${DAY}T21:00:00`],
    [`${DAY}T20:59:59.999`, `${DAY}T21:00:00`],
    [`${DAY}T21:00:00`, undefined],
    [`${DAY}T22:15:00`, undefined],
    [`${DAY}T23:59:59`, undefined],
    [`${DAY}T23:59:59.999`, undefined],
    // The day at UTC+3 starts at 21:00 UTC of the day before: the local date counts, not the UTC one.
    [`${NEXT_DAY}T00:00:00`, `${NEXT_DAY}T21:00:00`],
    [`${NEXT_DAY}T02:59:59`, `${NEXT_DAY}T21:00:00`],
    // Year and leap-day boundaries.
    ['2030-12-31T23:30:00', undefined],
    ['2031-01-01T00:00:00', '2031-01-01T21:00:00'],
    ['2032-02-29T08:00:00', '2032-02-29T21:00:00'],
  ])('paid %s → %s', (paidLocal, endsLocal) => {
    const ends = voidWindowEndsAt(at3(paidLocal));
    expect(ends?.toISOString()).toBe(endsLocal === undefined ? undefined : at3(endsLocal).toISOString());
  });

  it('gives the same answer whatever the host time zone, since it never reads it', () => {
    const paid = at3(`${NEXT_DAY}T00:30:00`);
    expect(paid.toISOString()).toBe(`${DAY}T21:30:00.000Z`);
    expect(voidWindowEndsAt(paid)?.toISOString()).toBe(`${NEXT_DAY}T18:00:00.000Z`);
  });
});

describe('canVoidAt: payments settled at different times of the day, the clock at the cut-off and after', () => {
  const NOW = [`${DAY}T20:59:59`, `${DAY}T21:00:00`, `${DAY}T23:59:59`, `${NEXT_DAY}T00:00:00`] as const;
  /** true = voidable, false = refused, null = the clock is before the payment (no such request). */
  const TABLE: readonly [paidLocal: string, expected: readonly (boolean | null)[]][] = [
    //                        20:59:59  21:00:00  23:59:59  00:00:00 (next day)
    [`${DAY}T00:00:00`, [true, false, false, false]],
    [`${DAY}T09:30:00`, [true, false, false, false]],
    [`${DAY}T20:59:58`, [true, false, false, false]],
    [`${DAY}T21:00:00`, [null, false, false, false]],
    [`${DAY}T23:59:59`, [null, null, false, false]],
  ];
  const cases = TABLE.flatMap(([paid, expected]) =>
    NOW.flatMap((now, i) => {
      const voidable = expected[i];
      return typeof voidable === 'boolean' ? [{ paid, now, voidable }] : [];
    }),
  );

  it('covers every payment time with every clock time not before it', () => {
    expect(cases).toHaveLength(17);
  });

  it.each(cases)('paid $paid, void at $now → voidable: $voidable', ({ paid, now, voidable }) => {
    const ends = voidWindowEndsAt(at3(paid));
    expect(canVoidAt(ends?.toISOString(), at3(now))).toBe(voidable);
  });

  it('closes exactly at 21:00:00.000 UTC+3: one millisecond before is still inside', () => {
    const ends = voidWindowEndsAt(at3(`${DAY}T09:30:00`))?.toISOString();
    expect(ends).toBe(CUTOFF.toISOString());
    expect(canVoidAt(ends, new Date(CUTOFF.getTime() - 1))).toBe(true);
    expect(canVoidAt(ends, CUTOFF)).toBe(false);
  });

  it('never voids a payment without a window (settled after the cut-off, or never settled)', () => {
    expect(canVoidAt(undefined, at3(`${DAY}T10:00:00`))).toBe(false);
  });
});

describe('voidBlockedReason: the window, then refunds', () => {
  const voidableUntil = CUTOFF.toISOString();
  const before = at3(`${DAY}T12:00:00`);
  it.each([
    ['inside the window, nothing refunded', { voidableUntil }, before, undefined],
    ['inside the window, a refund given back (0 refunded)', { voidableUntil, refundedMinor: 0 }, before, undefined],
    ['inside the window, part refunded', { voidableUntil, refundedMinor: 1 }, before, VOID_REFUNDED_REASON],
    ['after the cut-off, nothing refunded', { voidableUntil }, CUTOFF, VOID_WINDOW_REASON],
    ['after the cut-off, part refunded (the window is the first reason)', { voidableUntil, refundedMinor: 500 }, CUTOFF, VOID_WINDOW_REASON],
    ['no window at all', {}, before, VOID_WINDOW_REASON],
  ] as const)('%s → %s', (_name, payment, now, expected) => {
    expect(voidBlockedReason(payment, now)).toBe(expected);
  });
});
