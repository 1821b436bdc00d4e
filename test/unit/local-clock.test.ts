import { localClock } from '../../local/clock';
import { voidWindowEndsAt } from '../../lambdas/domain/void-window';
import { insideVoidWindow, voidWindowClockStart } from '../support/void-window';

describe('the local tools clock (CLOCK_START)', () => {
  it('is the system clock without CLOCK_START', () => {
    const before = Date.now();
    const now = localClock({}).now().getTime();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('starts at CLOCK_START and runs at real speed', async () => {
    const clock = localClock({ CLOCK_START: '2026-03-02T09:00:00Z' });
    const first = clock.now().getTime();
    expect(Math.abs(first - Date.parse('2026-03-02T09:00:00Z'))).toBeLessThan(1_000);
    await new Promise((r) => setTimeout(r, 30));
    expect(clock.now().getTime() - first).toBeGreaterThanOrEqual(25);
  });

  it.each(['tomorrow', '2026-03-02', '1700000000000', '2026-13-40T00:00:00Z'])('refuses CLOCK_START=%s with what it expects', (value) => {
    expect(() => localClock({ CLOCK_START: value })).toThrow(/CLOCK_START must be an ISO 8601 time/);
  });
});

describe('the tests time inside the void window', () => {
  it.each(['2026-11-26T00:00:00Z', '2026-11-26T17:59:59Z', '2026-11-26T18:30:00Z', '2026-11-26T20:59:59Z', '2026-11-26T23:59:59Z'])('on a real clock at %s, a payment made then can be voided for hours', (real) => {
    const at = new Date(insideVoidWindow(new Date(real)));
    expect(voidWindowEndsAt(at)!.getTime() - at.getTime()).toBeGreaterThanOrEqual(8 * 3_600_000);
  });

  it('gives processes started later a later start, never an earlier one', async () => {
    const start = voidWindowClockStart();
    const first = Date.parse(start());
    await new Promise((r) => setTimeout(r, 20));
    expect(Date.parse(start())).toBeGreaterThan(first);
    expect(voidWindowEndsAt(new Date(first))).toBeDefined();
  });
});
