import { systemClock, type Clock } from '../lambdas/ports/clock';

/**
 * The local tools' clock. With `CLOCK_START=<ISO time>` it starts there and runs at real speed, so
 * what depends on the time of day (the void window closes at 21:00 UTC+3, a DMS authorization's
 * capture deadline) can be tried at any hour. The runner, the merchant CLI on the local store and
 * the callback receiver read the same variable, so they agree (a callback signature's age, a
 * rotated secret's day of grace). Without it, the system clock.
 */
export function localClock(env: NodeJS.ProcessEnv = process.env): Clock {
  const start = env.CLOCK_START?.trim();
  if (!start) return systemClock;
  const at = Date.parse(start);
  if (!Number.isFinite(at) || !/^\d{4}-\d{2}-\d{2}T/.test(start)) throw new Error(`CLOCK_START must be an ISO 8601 time such as 2026-03-02T09:00:00Z, not ${JSON.stringify(start)}`);
  const offset = at - Date.now();
  return { now: () => new Date(Date.now() + offset) };
}
