import fc from 'fast-check';
import { followUpVerdicts, type GatewayHistoryItem, type GatewayReading } from '../../lambdas/adapters/s2s-card/ledger-reading';
import type { S2SEntry } from '../../lambdas/adapters/s2s-card/records';

/**
 * Follow-ups settled from the gateway's history (ledger-reading.ts) by counting, as the connector
 * applies them: each reading's answers written together or not at all (a write whose entries moved
 * meanwhile is computed again). Whatever the order in which readings of different ages arrive, once
 * the last (complete) reading is applied our approved total equals the gateway's refunded total,
 * per amount, and nothing the gateway carried out is left open or declined.
 */
type Fate = 'success' | 'fail' | 'never' | 'waiting';

const party = { email: 'a@example.com', digits: '4111111111' };
const entry = (i: number, amountMinor: number): S2SEntry => ({
  key: `pay.refund.t${i}`,
  operation: 'refund',
  state: 'sent',
  party,
  amountMinor,
  currency: 'EUR',
  transId: 'gw-1',
  at: `2031-01-01T00:00:${String(i).padStart(2, '0')}.000Z`,
});

/** The connector's write: all of a reading's answers, on condition that none of them was answered since it read. */
function apply(records: Map<string, S2SEntry>, reading: GatewayReading): void {
  for (let round = 0; round < 10; round++) {
    const snapshot = [...records.values()];
    const verdicts = followUpVerdicts(snapshot, reading);
    const answers = [...verdicts].filter(([, v]) => v.kind === 'approved' || v.kind === 'declined');
    if (answers.every(([key]) => records.get(key)?.state === 'sent')) {
      for (const [key, v] of answers) {
        const e = records.get(key)!;
        records.set(key, { ...e, state: 'answered', outcome: v.kind === 'approved' ? { kind: 'approved', acquirerRef: 'gw-1' } : { kind: 'declined', acquirerRef: 'gw-1', reason: 'x' } });
      }
      return;
    }
  }
  throw new Error('never settled');
}

describe('follow-ups settled from the gateway history by counting', () => {
  it('agree with the gateway per amount, whatever the order and age of the readings', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ amount: fc.constantFrom(10, 10, 20, 150), fate: fc.constantFrom<Fate>('success', 'success', 'fail', 'never', 'waiting') }), { minLength: 1, maxLength: 22 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (refunds, order) => {
          // The gateway's history in the order it carried the requests out (never-received ones missing).
          const carried = refunds.map((r, i) => ({ ...r, i })).filter((r) => r.fate !== 'never');
          const history = (upTo: number, settled: boolean): GatewayHistoryItem[] =>
            carried.slice(0, upTo).map((r) => ({ type: 'refund', amountMinor: r.amount, status: r.fate === 'waiting' || !settled ? 'waiting' : r.fate === 'fail' ? 'fail' : 'success' }));
          const records = new Map(refunds.map((r, i) => [entry(i, r.amount).key, entry(i, r.amount)]));
          // Readings of every age, in a random order (a later request's reading may land first).
          for (const n of order) apply(records, { status: 'SETTLED', history: history(n % (carried.length + 1), n % 2 === 0) });
          apply(records, { status: 'SETTLED', history: history(carried.length, true) });

          for (const amount of new Set(refunds.map((r) => r.amount))) {
            const ours = [...records.values()].filter((e) => e.amountMinor === amount);
            const gateway = carried.filter((r) => r.amount === amount);
            const approved = ours.filter((e) => e.outcome?.kind === 'approved').length;
            const declined = ours.filter((e) => e.outcome?.kind === 'declined').length;
            const open = ours.filter((e) => e.state === 'sent').length;
            expect(approved).toBe(gateway.filter((r) => r.fate === 'success').length);
            expect(declined).toBe(gateway.filter((r) => r.fate === 'fail').length);
            // Still open: the ones the gateway has waiting, and the ones it never received (the reconciler bars those).
            expect(open).toBe(ours.length - approved - declined);
            const verdicts = followUpVerdicts([...records.values()], { status: 'SETTLED', history: history(carried.length, true) });
            const absent = ours.filter((e) => verdicts.get(e.key)?.kind === 'absent').length;
            expect(absent).toBe(refunds.filter((r) => r.amount === amount && r.fate === 'never').length);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a refusal before processing is not one of the gateway\'s failures', () => {
    const refused: S2SEntry = { ...entry(1, 10), state: 'answered', refused: true, outcome: { kind: 'declined', acquirerRef: 'gw-1', reason: 'Refund amount exceeds the payment amount.' } };
    const open = entry(2, 10);
    const verdicts = followUpVerdicts([refused, open], { status: 'SETTLED', history: [{ type: 'refund', status: 'fail', amountMinor: 10 }] });
    expect(verdicts.get(open.key)).toMatchObject({ kind: 'declined' });
  });

  it('a capture and a void are read from the status when the history does not list them', () => {
    const capture: S2SEntry = { ...entry(1, 1000), key: 'pay.capture.t1', operation: 'capture' };
    expect(followUpVerdicts([capture], { status: 'SETTLED', history: [] }).get(capture.key)).toEqual({ kind: 'approved' });
    expect(followUpVerdicts([capture], { status: 'PENDING', history: [] }).get(capture.key)).toEqual({ kind: 'absent' });
    const voided: S2SEntry = { ...entry(1, 1000), key: 'pay.void.t1', operation: 'void' };
    expect(followUpVerdicts([voided], { status: 'VOID', history: [] }).get(voided.key)).toEqual({ kind: 'approved' });
    expect(followUpVerdicts([voided], { status: 'SETTLED', history: [] }).get(voided.key)).toEqual({ kind: 'absent' });
    const released: S2SEntry = { ...entry(1, 1000), key: 'pay.reversal.t1', operation: 'reversal' };
    expect(followUpVerdicts([released], { status: 'REVERSAL', history: [] }).get(released.key)).toEqual({ kind: 'approved' });
    // A hold still PENDING with no reversal in its history never received the release.
    expect(followUpVerdicts([released], { status: 'PENDING', history: [{ type: 'auth', status: 'success', amountMinor: 1000 }] }).get(released.key)).toEqual({ kind: 'absent' });
    expect(followUpVerdicts([released], { status: 'SETTLED', history: [{ type: 'refund', status: 'waiting', amountMinor: 1000 }] }).get(released.key)).toEqual({ kind: 'open' });
  });

  // A void (or capture) whose answer was lost while the payment went on at the gateway — charged back,
  // refunded, reversed — was left open for ever: the reconciler asked about it at every run and the
  // money model's runs grew slower until one timed out.
  it.each([
    ['void', 'CHARGEBACK'], ['void', 'REFUND'], ['void', 'REVERSAL'], ['void', 'DECLINED'],
    ['capture', 'REVERSAL'], ['capture', 'DECLINED'],
    ['reversal', 'CHARGEBACK'], ['reversal', 'VOID'],
  ] as const)('a %s the history does not list, on a payment now %s, never happened: absent, never open', (operation, status) => {
    const e: S2SEntry = { ...entry(1, 1000), key: `pay.${operation}.t1`, operation };
    expect(followUpVerdicts([e], { status, history: [{ type: 'sale', status: 'success', amountMinor: 1000 }] }).get(e.key)).toEqual({ kind: 'absent' });
  });

  it('no status leaves a capture, void or reversal open unless a refund of its amount is still waiting', () => {
    const statuses = ['PENDING', 'SETTLED', 'VOID', 'REFUND', 'REVERSAL', 'CHARGEBACK', 'DECLINED', '3DS', 'REDIRECT', 'SOMETHING NEW'];
    for (const operation of ['capture', 'void', 'reversal'] as const) {
      for (const status of statuses) {
        const e: S2SEntry = { ...entry(1, 1000), key: `pay.${operation}.t1`, operation };
        expect([operation, status, followUpVerdicts([e], { status, history: [] }).get(e.key)?.kind]).not.toEqual([operation, status, 'open']);
      }
    }
  });
});
