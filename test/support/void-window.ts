/**
 * A time inside the void window, for tests that void: today (UTC) at 09:00 UTC, 12:00 at UTC+3,
 * nine hours before the window closes. A test that voids on the real clock fails every evening
 * from 18:00 UTC (21:00 UTC+3), when no void is accepted; it runs on this time instead (the
 * service's clock, or a local process's CLOCK_START), so it proves the same at any hour.
 */
export function insideVoidWindow(now: Date = new Date()): string {
  return `${now.toISOString().slice(0, 10)}T09:00:00.000Z`;
}

/**
 * CLOCK_START for the local processes of one test (the runner, again after a restart, and the
 * callback receiver): one shift from the real clock into the void window, so that their clocks
 * agree with each other and never go back.
 */
export function voidWindowClockStart(): () => string {
  const shift = Date.parse(insideVoidWindow()) - Date.now();
  return () => new Date(Date.now() + shift).toISOString();
}
