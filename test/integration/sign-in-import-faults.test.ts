import fc from 'fast-check';
import { createCognitoSignIns } from '../../lambdas/adapters/cognito/sign-ins';
import { ManualClock } from '../../lambdas/ports/clock';
import { verifyAuditDays } from '../../lambdas/use-cases/admin/audit';
import { importSignIns, SIGN_IN_IMPORT, signInEntryId } from '../../lambdas/use-cases/import-sign-ins';
import { NO_FAULTS, startCognitoPool, type CognitoPool, type PoolEvent } from '../support/cognito-pool';
import { soakCount } from '../support/soak';
import { serviceForFile } from '../support/suites';

/**
 * The sign-in import on Cognito's worst days: throttling, its errors, answers that never come,
 * connections cut, a page's events of one second in any order, pages repeating an event as new ones
 * arrive, a user removed between the list and its events; runs that fail, and two runs at once (a
 * stage without the job's reserved concurrency). Over random runs: once the pool answers again,
 * every sign-in of the window is in the audit log exactly once, none twice, and the chain verifies.
 */
const clock = new ManualClock('2033-01-01T12:00:00.000Z');
const { service } = serviceForFile({ clock });
let pool: CognitoPool;

beforeAll(async () => {
  pool = await startCognitoPool();
  process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER = pool.url;
});
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER;
  await pool.close();
});

const USERS = ['ana', 'ben', 'cleo', 'dev', 'eli'];
const eventArb = fc.record({
  user: fc.constantFrom(...USERS),
  // Minutes before the run it arrives at: a few seconds shared by many (one second's events come in any order), some past the window.
  minutesAgo: fc.oneof(fc.constantFrom(1, 1, 7, 20, 20), fc.integer({ min: 1, max: SIGN_IN_IMPORT.windowHours * 60 + 120 })),
  response: fc.constantFrom('Pass', 'Fail', 'InProgress', 'Pass') as fc.Arbitrary<PoolEvent['EventResponse']>,
  type: fc.constantFrom('SignIn', 'SignIn', 'SignIn', 'PasswordChange'),
});
type EventDraw = { user: string; minutesAgo: number; response: PoolEvent['EventResponse']; type: string };
const runArb = fc.record({ together: fc.boolean(), arrivals: fc.array(eventArb, { maxLength: 4 }) });

test('property: whatever Cognito does, every sign-in of the window is recorded once', async () => {
  let round = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(eventArb, { minLength: 1, maxLength: 14 }),
      fc.array(runArb, { minLength: 1, maxLength: 4 }),
      fc.record({
        seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        throttle: fc.constantFrom(0, 0.1, 0.3),
        internalError: fc.constantFrom(0, 0.1),
        hang: fc.constantFrom(0, 0.05),
        cut: fc.constantFrom(0, 0.05),
        reorder: fc.constantFrom(0, 0.5, 1),
        repeat: fc.constantFrom(0, 0.5),
      }),
      fc.boolean(),
      async (initial, runs, faults, ghost) => {
        round++;
        // A day of its own for each run, later than the last: the pool keeps every run's events, and none may lie ahead of the clock.
        clock.set(new Date(Date.parse('2033-01-01T08:00:00.000Z') + round * 2 * 24 * 3600_000));
        const all: (PoolEvent & { user: string })[] = [];
        const arrive = (e: EventDraw) => {
          const event: PoolEvent = { EventId: `r${round}-${all.length}`, EventType: e.type, CreationDate: Math.floor(clock.now().getTime() / 1000) - e.minutesAgo * 60, EventResponse: e.response };
          all.push({ ...event, user: e.user });
          pool.addEvent(e.user, event);
        };
        initial.forEach(arrive);
        if (ghost) pool.addGhost(`ghost-${round}`);
        pool.faults = faults;
        const signIns = createCognitoSignIns(pool.poolId, { connectionTimeoutMs: 500, requestTimeoutMs: 250 });
        const once = () => importSignIns({ signIns, audit: service.deps.audit, clock }).catch((e: Error) => e);
        for (const run of runs) {
          const outcomes = await Promise.all(run.together ? [once(), once()] : [once()]);
          // A run may fail on the pool's bad day (the job's errors alarm); it never fails on the log.
          for (const o of outcomes) if (o instanceof Error) expect(o.name).toMatch(/TooManyRequests|InternalError|TimeoutError|ECONNRESET|socket hang up|RequestTimeout|Error$/);
          clock.advance(5 * 60_000);
          run.arrivals.forEach(arrive);
        }
        // The pool answers again (its pages still reorder and repeat: that is how it answers); the second-factor sign-ins have had their time.
        pool.faults = { ...NO_FAULTS, seed: faults.seed, reorder: faults.reorder, repeat: faults.repeat };
        clock.advance((SIGN_IN_IMPORT.settleMinutes + 1) * 60_000);
        const last = await importSignIns({ signIns, audit: service.deps.audit, clock });
        const now = clock.now().getTime();
        const entries = (await service.deps.audit.list({ limit: 1000, until: clock.now(), days: 2 })).entries.filter((e) => e.id.startsWith(`signin-r${round}-`));
        const recorded = entries.map((e) => e.id);
        // None twice.
        expect(new Set(recorded).size).toBe(recorded.length);
        // Every sign-in of the last run's window is there (older ones may be, from earlier runs); nothing else.
        const due = all.filter((e) => e.EventType === 'SignIn' && e.CreationDate * 1000 >= now - SIGN_IN_IMPORT.windowHours * 3600_000);
        for (const e of due) expect(recorded).toContain(signInEntryId(e.EventId));
        const signInIds = new Set(all.filter((e) => e.EventType === 'SignIn').map((e) => signInEntryId(e.EventId)));
        for (const id of recorded) expect(signInIds.has(id)).toBe(true);
        expect(last.waiting).toBe(0);
        const days = [...new Set(entries.map((e) => e.at.slice(0, 10)))];
        for (const report of await verifyAuditDays(service.deps, days)) expect(report.break).toBeUndefined();
      },
    ),
    { numRuns: soakCount({ fast: 5, soak: 20 }), endOnFailure: true },
  );
  // The runs met every kind of bad day.
  if (soakCount({ fast: 5, soak: 20 }) >= 20) for (const kind of ['throttled', 'reordered']) expect(pool.counts[kind] ?? 0).toBeGreaterThan(0);
}, 600_000);
