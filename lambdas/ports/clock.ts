/** Time is injected: domain code never reads the wall clock, tests move it instead of sleeping. */
export interface Clock {
  now(): Date;
  /** Waits (a retry's backoff); a test clock only yields, so tests never sleep. */
  sleep?(ms: number): Promise<void>;
}

export const systemClock: Clock = { now: () => new Date() };

/** Real time: the pause of a retry outside tests (lambdas/domain/retry-policy.ts). */
export const realSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A clock tests and the local runner can set and move. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date | string = new Date()) {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date | string): void {
    this.current = new Date(at).getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
  sleep(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }
}
