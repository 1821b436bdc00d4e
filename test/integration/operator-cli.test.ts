import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ERRORS } from '../../lambdas/domain/errors';
import { runOperatorCommand } from '../../local/operator-command';
import { inProcess } from '../support/cli';
import { freePort, runTs, startTs, type Service } from '../support/processes';

/**
 * `npm run operator`: the local runner's operators and their roles, as an administrator manages
 * them; and `npm start`, whose own operator is an admin.
 */
jest.setTimeout(60_000);

const dataDir = mkdtempSync(join(tmpdir(), 'checkout-operators-'));
let runner: Service | undefined;
afterAll(() => {
  runner?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The command in this process, its output captured. */
const operator = (args: string[], env: Record<string, string> = {}) => inProcess(runOperatorCommand, { DATA_DIR: dataDir, ...env })(...args);

describe('the operator CLI on the local store', () => {
  it('creates an operator with a role and a generated password, or the one in OPERATOR_PASSWORD', async () => {
    const generated = await operator(['create', 'vera', '--role', 'viewer']);
    expect(generated).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(generated.stdout)).toEqual({ username: 'vera', password: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/), role: 'viewer' });
    const chosen = await operator(['create', 'otto', '--role', 'operator'], { OPERATOR_PASSWORD: 'ottos-long-password' });
    expect(JSON.parse(chosen.stdout)).toEqual({ username: 'otto', password: 'ottos-long-password', role: 'operator' });
  });

  it('changes a role and lists the operators with theirs', async () => {
    expect(JSON.parse((await operator(['set-role', 'vera', 'operator'])).stdout)).toEqual({ username: 'vera', role: 'operator' });
    expect(JSON.parse((await operator(['list'])).stdout)).toEqual([
      { username: 'otto', role: 'operator' },
      { username: 'vera', role: 'operator' },
    ]);
  });

  it.each([
    [['create', 'vera'], 'the role is one of viewer, operator, admin, not ""'],
    [['create', 'vera', '--role', 'root'], 'the role is one of viewer, operator, admin, not "root"'],
    [['set-role', 'vera'], 'the role is one of viewer, operator, admin, not ""'],
    [['unlock'], 'unlock needs an operator name'],
    [['fire', 'vera'], 'unknown command "fire"'],
    [['list', '--stage', 'prod'], 'operators of a deployed stage are Cognito users and their role is their group: see docs/operations.md'],
  ])('refuses %j as bad usage (exit 2)', async (args, message) => {
    const run = await operator(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`operator: ${message}\nRun with --help for usage.\n`);
  });

  it.each([
    [['set-role', 'nobody', 'admin'], 'operator: no operator nobody'],
    [['create', 'x', '--role', 'admin'], 'operator: operator names are 3-64 letters, digits, dots, @, _ or -'],
  ])('fails %j with a reason (exit 1)', async (args, message) => {
    const run = await operator(args, { OPERATOR_PASSWORD: 'a-long-enough-password' });
    expect([run.code, run.stderr]).toEqual([1, `${message}\n`]);
  });
});

describe('npm start and npm run operator together', () => {
  let base: string;
  const signIn = async (username: string, password: string) => {
    const res = await fetch(`${base}/admin/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
  const session = async (token: string) => (await fetch(`${base}/admin/api/session`, { headers: { authorization: `Bearer ${token}` } })).json();

  beforeAll(async () => {
    const port = await freePort();
    runner = startTs('local/main.ts', { DATA_DIR: dataDir, PORT: String(port), ADMIN_USER: undefined, ADMIN_PASSWORD: undefined, CHECKOUT_STAGE: undefined });
    await runner.waitForLine(/^curl /);
    base = `http://127.0.0.1:${port}`;
  });

  it("npm start's own operator is an admin", async () => {
    const line = /^Admin portal: \S+ \(operator (\{.*?\})/m.exec(runner!.output())?.[1];
    const seeded = JSON.parse(line ?? 'null') as { username: string; password: string; role: string };
    expect(seeded).toMatchObject({ username: 'operator', role: 'admin' });
    const res = await signIn(seeded.username, seeded.password);
    expect(res.status).toBe(200);
    expect(await session(res.json.token as string)).toMatchObject({ username: 'operator', role: 'admin' });
  });

  it('an operator created while the runner runs signs in with its role; a viewer may not capture', async () => {
    const run = await runTs('local/operator-cli.ts', ['create', 'viewer-v', '--role', 'viewer'], { DATA_DIR: dataDir, OPERATOR_PASSWORD: 'viewers-long-password' });
    expect(run.code).toBe(0);
    const res = await signIn('viewer-v', 'viewers-long-password');
    expect(await session(res.json.token as string)).toMatchObject({ username: 'viewer-v', role: 'viewer' });
    const capture = await fetch(`${base}/admin/api/payments/any/capture`, { method: 'POST', headers: { authorization: `Bearer ${res.json.token as string}`, 'content-type': 'application/json' }, body: '{}' });
    expect([capture.status, await capture.json()]).toEqual([403, { error_code: ERRORS.FORBIDDEN.code, error_message: ERRORS.FORBIDDEN.message, errors: [] }]);
  });

  it('unlock lifts a lock at once', async () => {
    for (let i = 0; i < 5; i++) await signIn('otto', 'not-ottos-password');
    expect((await signIn('otto', 'ottos-long-password')).json.error_code).toBe(ERRORS.OPERATOR_LOCKED.code);
    expect(JSON.parse((await operator(['list'])).stdout)).toContainEqual({ username: 'otto', role: 'operator', lockedUntil: expect.any(String) });
    expect(JSON.parse((await operator(['unlock', 'otto'])).stdout)).toEqual({ username: 'otto', unlocked: true });
    expect((await signIn('otto', 'ottos-long-password')).status).toBe(200);
  });
});
