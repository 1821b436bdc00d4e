import { performance } from 'node:perf_hooks';
import { lockSecondsAfter, SIGN_IN_LOCKOUT, type LocalOperatorAuthenticator } from '../../lambdas/adapters/local/operator-auth';
import { ERRORS } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import { firstBreak } from '../../lambdas/domain/audit-chain';
import { UNKNOWN_NAME_FAILURES_PER_HOUR } from '../../lambdas/use-cases/operator-sign-in';
import { adminApi } from '../support/admin';
import { seedOperator, signInRequest, type OperatorCredentials } from '../support/admin';
import { startTestService, type TestService } from '../support/service';

/**
 * The local runner's sign-in makes an address wait after 5 wrong passwords in a row for one user
 * name: 1 minute, doubled by each further failure (32 minutes at the tenth, PCI DSS 8.3.4), with
 * conditional writes so that concurrent attempts all count. Failures count per user name and source
 * address, so a stranger cannot lock an operator (the only admin included) out of their own address.
 * It answers an unknown user name exactly as a known one, in what it says, when it locks and how
 * long it takes, so neither the answer nor the lock tells whether an operator exists. On AWS
 * Cognito's own protections do this per user (ADR 0019).
 */
const T0 = new Date('2030-09-02T10:00:00.000Z');
const clock = new ManualClock(T0);
const WRONG = { error_code: ERRORS.UNAUTHORIZED.code, error_message: 'Wrong user name or password.', errors: [] };
const LOCKED = { error_code: ERRORS.OPERATOR_LOCKED.code, error_message: ERRORS.OPERATOR_LOCKED.message, errors: [] };
const MINUTE = 60_000;

let service: TestService;
let seeded = 0;
const operators = () => service.deps.operators as LocalOperatorAuthenticator;

beforeAll(async () => {
  service = await startTestService({ clock });
});
afterAll(() => service.close());
beforeEach(() => clock.set(T0));

/** A fresh operator per test: each test's failures are its own. */
const anOperator = (): Promise<OperatorCredentials> => seedOperator(service, `locky-${++seeded}`, 'the-right-long-password', 'viewer');

/** One sign-in: 'ok', 'wrong' or 'locked' (any other answer fails the test). */
async function attempt(username: string, password: string): Promise<'ok' | 'wrong' | 'locked'> {
  const res = await signInRequest(service, { username, password });
  if (res.status === 200) return 'ok';
  if (JSON.stringify(res.json) === JSON.stringify(WRONG)) return 'wrong';
  expect([res.status, res.json]).toEqual([401, LOCKED]);
  return 'locked';
}

async function attempts(n: number, username: string, password: string): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await attempt(username, password));
  return out;
}

describe('locking a user name', () => {
  it(`locks after ${SIGN_IN_LOCKOUT.maxFailures} wrong passwords in a row; while locked even the right one is refused`, async () => {
    const op = await anOperator();
    expect(await attempts(5, op.username, 'a-wrong-password')).toEqual(['wrong', 'wrong', 'wrong', 'wrong', 'locked']);
    expect(await attempt(op.username, op.password)).toBe('locked');
    expect(await attempt(op.username, 'a-wrong-password')).toBe('locked');
  });

  it('waits 1 minute after the fifth failure, then twice as long after each further one; a right password after the wait gets in', async () => {
    const op = await anOperator();
    await attempts(5, op.username, 'a-wrong-password');
    for (const minutes of [1, 2, 4, 8, 16, 32]) {
      clock.advance(minutes * MINUTE - 1000);
      expect(await attempt(op.username, op.password)).toBe('locked');
      clock.advance(1000);
      // The wait is over: one more wrong password doubles it.
      if (minutes < 32) expect(await attempt(op.username, 'a-wrong-password')).toBe('locked');
    }
    expect(await attempt(op.username, op.password)).toBe('ok');
    expect(await attempts(4, op.username, 'a-wrong-password')).toEqual(['wrong', 'wrong', 'wrong', 'wrong']);
  });

  it('the tenth failure in a row waits at least 30 minutes, and no wait passes 4 hours', () => {
    expect([5, 6, 7, 8, 9, 10].map(lockSecondsAfter)).toEqual([60, 120, 240, 480, 960, 1920]);
    expect(lockSecondsAfter(10)).toBeGreaterThanOrEqual(30 * 60);
    expect(lockSecondsAfter(4)).toBe(0);
    expect(lockSecondsAfter(40)).toBe(4 * 3600);
  });

  it('a right password resets the count: only failures in a row lock', async () => {
    const op = await anOperator();
    expect(await attempts(4, op.username, 'a-wrong-password')).toEqual(['wrong', 'wrong', 'wrong', 'wrong']);
    expect(await attempt(op.username, op.password)).toBe('ok');
    expect(await attempts(4, op.username, 'a-wrong-password')).toEqual(['wrong', 'wrong', 'wrong', 'wrong']);
    expect(await attempt(op.username, 'a-wrong-password')).toBe('locked');
  });

  it('counts every one of concurrent wrong attempts: 10 at once are 4 wrong, then locked', async () => {
    const op = await anOperator();
    const answers = await Promise.all(Array.from({ length: 10 }, () => attempt(op.username, 'a-wrong-password')));
    expect(answers.filter((a) => a === 'wrong')).toHaveLength(SIGN_IN_LOCKOUT.maxFailures - 1);
    expect(answers.filter((a) => a === 'locked')).toHaveLength(10 - (SIGN_IN_LOCKOUT.maxFailures - 1));
    expect(await attempt(op.username, op.password)).toBe('locked');
  });

  it('a right password is refused while the wait lasts, whatever it is', async () => {
    const op = await anOperator();
    await attempts(5, op.username, 'a-wrong-password');
    clock.advance(MINUTE - 1000);
    expect(await attempt(op.username, op.password)).toBe('locked');
  });

  it('an administrator lifts a lock (npm run operator -- unlock), and a new password does too', async () => {
    const op = await anOperator();
    await attempts(5, op.username, 'a-wrong-password');
    await operators().unlock(op.username);
    expect(await attempt(op.username, op.password)).toBe('ok');
    await attempts(5, op.username, 'a-wrong-password');
    await operators().createOperator(op.username, 'a-new-long-password', 'viewer');
    expect(await attempt(op.username, 'a-new-long-password')).toBe('ok');
  });
});

describe('a stranger cannot lock an operator out', () => {
  const STRANGER = '198.51.100.23';

  it("a stranger's wrong passwords for the only admin lock the stranger's address only: the admin signs in from theirs", async () => {
    const admin = await seedOperator(service, `only-admin-${++seeded}`, 'the-admins-long-password', 'admin');
    const stranger = () => operators().signIn(admin.username, 'a-guess-at-the-password', STRANGER);
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push((await stranger()).kind);
    expect(answers).toEqual([...Array(4).fill('refused'), ...Array(8).fill('locked')]);
    // The admin, from their own address (the runner's client here), is neither locked nor counted against.
    expect(await attempt(admin.username, admin.password)).toBe('ok');
    // And the stranger's address still waits, even with the right password.
    expect((await operators().signIn(admin.username, admin.password, STRANGER)).kind).toBe('locked');
  });

  it('an address that waits for one user name does not wait for another', async () => {
    const [a, b] = [await anOperator(), await anOperator()];
    await attempts(5, a.username, 'a-wrong-password');
    expect(await attempt(b.username, b.password)).toBe('ok');
  });

  it('unlock lifts the waits of every address', async () => {
    const op = await anOperator();
    for (let i = 0; i < 5; i++) await operators().signIn(op.username, 'a-wrong-password', STRANGER);
    await attempts(5, op.username, 'a-wrong-password');
    await operators().unlock(op.username);
    expect((await operators().signIn(op.username, op.password, STRANGER)).kind).toBe('signed-in');
    expect(await attempt(op.username, op.password)).toBe('ok');
  });
});

describe('telling nothing about who exists', () => {
  it('an unknown user name is answered the same, wrong then locked, and its lock ends the same way', async () => {
    const op = await anOperator();
    const known = await attempts(6, op.username, 'a-wrong-password');
    const unknown = await attempts(6, `nobody-${seeded}`, 'a-wrong-password');
    expect(unknown).toEqual(known);
    clock.advance(MINUTE);
    // After the wait, one more wrong password makes each wait twice as long, alike.
    expect([await attempt(op.username, 'a-wrong-password'), await attempt(`nobody-${seeded}`, 'a-wrong-password')]).toEqual(['locked', 'locked']);
    clock.advance(2 * MINUTE - 1000);
    expect([await attempt(op.username, 'a-wrong-password'), await attempt(`nobody-${seeded}`, 'a-wrong-password')]).toEqual(['locked', 'locked']);
    clock.advance(1000);
    expect(await attempt(op.username, op.password)).toBe('ok');
  });

  it('takes as long for an unknown user name as for a known one with a wrong password (the same password hash is computed)', async () => {
    const timed = async (username: string) => {
      const started = performance.now();
      expect(await attempt(username, 'a-wrong-password')).toBe('wrong');
      return performance.now() - started;
    };
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const known: number[] = [];
    const unknown: number[] = [];
    // Fresh names each time, one failure each: no lock gets in the way.
    for (let i = 0; i < 9; i++) {
      known.push(await timed((await anOperator()).username));
      unknown.push(await timed(`ghost-${seeded}-${i}`));
    }
    // A known name is not answered faster or slower than by a factor that would tell them apart
    // (skipping the hash would make an unknown one several times faster).
    expect(median(unknown) / median(known)).toBeGreaterThan(0.5);
    expect(median(unknown) / median(known)).toBeLessThan(2);
  }, 90_000);

  it("cannot lock an operator out through another casing of the name, nor guess with one", async () => {
    const op = await seedOperator(service, 'casey', 'caseys-long-password', 'viewer');
    expect(await attempts(6, 'CASEY', 'a-wrong-password')).toEqual(['wrong', 'wrong', 'wrong', 'wrong', 'locked', 'locked']);
    expect(await attempts(5, 'Casey', 'a-wrong-password')).toEqual(['wrong', 'wrong', 'wrong', 'wrong', 'locked']);
    // Names are exact: the other casings are other (unknown) names, so the operator is not locked,
    // and the right password under another casing is no sign-in.
    expect(await attempt('casey', op.password)).toBe('ok');
    expect(await attempt('cAsEy', op.password)).toBe('wrong');
  });

  it('keeps no password in what it stores about failures, and forgets it after a day', async () => {
    const op = await anOperator();
    await attempts(2, op.username, 'a-password-to-forget');
    const [record] = (await service.tableItems()).filter((i) => i.pk === `OPERATOR#${op.username}` && String(i.sk).startsWith('SIGNIN'));
    expect(record).toEqual({
      pk: `OPERATOR#${op.username}`,
      sk: 'SIGNIN#127.0.0.1',
      kind: 'operator-sign-in',
      failures: 2,
      ttl: Math.floor(T0.getTime() / 1000) + SIGN_IN_LOCKOUT.forgetAfterSeconds,
    });
  });
});

describe('in the audit log: every sign-in, refusal and sign-out, never a password', () => {
  // A day of its own: the tests above fill T0's hour with unknown names.
  const DAY2 = new Date(T0.getTime() + 2 * 24 * 3600_000);
  const day = DAY2.toISOString().slice(0, 10);
  const signIns = async () => (await service.deps.audit.day(day)).filter((e) => e.action.startsWith('operator.'));

  it("records an operator's wrong password, the wait it starts, the refusal while waiting, the sign-in and the sign-out; the day's chain verifies", async () => {
    clock.set(DAY2);
    const op = await anOperator();
    await attempts(5, op.username, 'a-typed-wrong-password');
    expect(await attempt(op.username, op.password)).toBe('locked');
    clock.advance(MINUTE);
    const res = await signInRequest(service, { username: op.username, password: op.password });
    expect(res.status).toBe(200);
    await adminApi(service, res.json.token).signOut();
    const mine = (await signIns()).filter((e) => e.target === `operator:${op.username}`);
    expect(mine.map((e) => [e.actor, e.actorRole, e.action, e.targetKind, e.outcome, e.detail])).toEqual([
      ...Array.from({ length: 4 }, () => [op.username, undefined, 'operator.sign-in', 'operator', 'refused', 'wrong password from 127.0.0.1']),
      [op.username, undefined, 'operator.sign-in', 'operator', 'refused', 'wrong password, too many in a row: this name waits from this address until 2030-09-04 10:01:00 UTC from 127.0.0.1'],
      [op.username, undefined, 'operator.sign-in', 'operator', 'refused', 'not checked: this name waits from this address after too many wrong passwords from 127.0.0.1'],
      [op.username, 'viewer', 'operator.sign-in', 'operator', 'done', 'signed in from 127.0.0.1'],
      [op.username, 'viewer', 'operator.sign-out', 'operator', 'done', undefined],
    ]);
    expect(JSON.stringify(await service.deps.audit.day(day))).not.toContain('a-typed-wrong-password');
    expect(JSON.stringify(await service.deps.audit.day(day))).not.toContain(op.password);
    expect(firstBreak(await service.deps.audit.day(day))).toBeUndefined();
  });

  it(`records failed sign-ins of unknown names ${UNKNOWN_NAME_FAILURES_PER_HOUR} an hour at most, each name masked; past that a failure stores nothing`, async () => {
    clock.set(new Date(DAY2.getTime() + 3600_000));
    const before = (await service.tableItems()).length;
    // A password typed into the name field by mistake must not land in the log.
    const names = Array.from({ length: UNKNOWN_NAME_FAILURES_PER_HOUR + 5 }, (_, i) => `my-secret-pass-${i}`);
    for (const name of names) expect(await attempt(name, 'a-wrong-password')).toBe('wrong');
    const unknown = (await signIns()).filter((e) => e.detail?.startsWith('no operator has this name'));
    expect(unknown).toHaveLength(UNKNOWN_NAME_FAILURES_PER_HOUR);
    expect(unknown[0]).toMatchObject({ actor: 'my… (16 characters)', target: 'operator:my… (16 characters)', outcome: 'refused', detail: 'no operator has this name from 127.0.0.1' });
    expect(unknown.at(-1)?.detail).toBe(`no operator has this name; the ${UNKNOWN_NAME_FAILURES_PER_HOUR}th of unknown names this hour: later ones are not recorded until 12:00 UTC from 127.0.0.1`);
    expect(JSON.stringify(await service.deps.audit.day(day))).not.toContain('my-secret-pass');
    expect(firstBreak(await service.deps.audit.day(day))).toBeUndefined();
    // The 5 past the limit: each name's failure count (as before), and nothing in the audit log.
    const added = (await service.tableItems()).length - before;
    const perEntry = 3; // the entry, its id marker, and the name's failure count
    expect(added).toBe(UNKNOWN_NAME_FAILURES_PER_HOUR * perEntry + 5 + 1 /* the hour's counter */);
  }, 90_000);
});
