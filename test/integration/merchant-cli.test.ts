import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signFields } from '../../lambdas/domain/hash';
import { readConfig } from '../../lambdas/config';
import { parseCommand, runMerchantCommand, stageEnvironment } from '../../local/merchant-command';
import { validSessionBody } from '../support/fixtures';
import { freePort, runTs, startTs, type Service } from '../support/processes';

/**
 * `npm run merchant`: spawned as a developer runs it, against a local data directory, with and
 * without the local runner holding that directory.
 */
jest.setTimeout(60_000);

const CLI = 'local/merchant-cli.ts';
const dataDir = mkdtempSync(join(tmpdir(), 'checkout-cli-'));
let runner: Service | undefined;

afterAll(() => {
  runner?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const merchant = (...args: string[]) => runTs(CLI, args, { DATA_DIR: dataDir, CHECKOUT_STAGE: undefined });
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

describe('the merchant CLI on the local store', () => {
  let key: string;
  const passwords: string[] = [];

  it('create prints the new merchant_key and password as JSON', async () => {
    const run = await merchant('create', '--name', 'Acme Shop');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const created = json(run.stdout);
    expect(Object.keys(created)).toEqual(['merchant_key', 'password']);
    expect(created).toEqual({ merchant_key: expect.stringMatching(/^[0-9a-f-]{36}$/), password: expect.stringMatching(/^[0-9a-f]{32}$/) });
    key = created.merchant_key as string;
    passwords.push(created.password as string);
  });

  it('show prints the settings, with the defaults, and never the password', async () => {
    const run = await merchant('show', key);
    expect(run.code).toBe(0);
    expect(json(run.stdout)).toEqual({
      merchantKey: key,
      name: 'Acme Shop',
      dms: false,
      returnParams: false,
      maxDeclines: 3,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(run.stdout).not.toContain(passwords[0]);
  });

  it('set changes every setting and prints the result', async () => {
    const run = await merchant(
      'set', key,
      '--name', 'Acme Store',
      '--dms', 'on',
      '--auto-capture-delay', '30',
      '--return-params', 'on',
      '--notification-url', 'https://acme.example/callbacks',
      '--methods', 'card',
      '--max-declines', '5',
      '--brand-color', '#0A7B83',
      '--logo-url', 'https://cdn.acme.example/logo.svg',
      '--frame-ancestors', 'https://acme.example, https://*.acme.example',
    );
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(json(run.stdout)).toMatchObject({
      merchantKey: key,
      name: 'Acme Store',
      dms: true,
      autoCaptureDelayMinutes: 30,
      returnParams: true,
      notificationUrl: 'https://acme.example/callbacks',
      methods: ['card'],
      maxDeclines: 5,
      branding: { primaryColor: '#0A7B83', logoUrl: 'https://cdn.acme.example/logo.svg' },
      frameAncestors: ['https://acme.example', 'https://*.acme.example'],
    });
  });

  it('set with "off" clears optional settings and keeps the rest of the branding', async () => {
    const run = await merchant('set', key, '--logo-url', 'off', '--auto-capture-delay', 'off', '--notification-url', 'off', '--dms', 'off');
    expect(run.code).toBe(0);
    const shown = json(run.stdout);
    expect(shown).toMatchObject({ dms: false, branding: { primaryColor: '#0A7B83' }, frameAncestors: ['https://acme.example', 'https://*.acme.example'] });
    expect(shown).not.toHaveProperty('autoCaptureDelayMinutes');
    expect(shown).not.toHaveProperty('notificationUrl');
    expect(shown.branding).not.toHaveProperty('logoUrl');
  });

  it('rotate-password prints a new password for the same key', async () => {
    const run = await merchant('rotate-password', key);
    expect(run.code).toBe(0);
    const rotated = json(run.stdout);
    expect(rotated).toEqual({ merchant_key: key, password: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(rotated.password).not.toBe(passwords[0]);
    passwords.push(rotated.password as string);
  });

  it('an unknown merchant is an error: exit 1 with a message, nothing on stdout', async () => {
    const run = await merchant('show', 'no-such-merchant');
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain('merchant no-such-merchant not found');
  });

  it('--help prints the usage with exit 0, bad usage exits 2 with a message', async () => {
    const [help, bad] = await Promise.all([merchant('--help'), merchant('set', 'some-key', '--dms', 'maybe')]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: npm run -s merchant -- <command> [options]');
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toContain('--dms must be on or off, not "maybe"');
  });
});

describe('the merchant CLI while the local runner is running', () => {
  const demo = { DEMO_MERCHANT_KEY: 'cli-demo', DEMO_MERCHANT_PASSWORD: 'cli-demo-password-0123456789' };
  let created: { merchant_key: string; password: string };
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    runner = startTs('local/main.ts', { DATA_DIR: dataDir, PORT: String(port), CHECKOUT_STAGE: undefined, ...demo });
    await runner.waitForLine(/^curl /);
  });

  it('creates a merchant through the runner backend', async () => {
    const run = await merchant('create', '--name', 'Runner Shop');
    expect(run.code).toBe(0);
    created = json(run.stdout) as typeof created;
  });

  it('the new merchant can create a session on the running service with the printed password', async () => {
    const body = validSessionBody(created.merchant_key, {
      order: { number: 'cli-1', amount: '12.50', currency: 'EUR', description: 'First order' },
    });
    const hash = signFields(['cli-1', '12.50', 'EUR', 'First order'], created.password);
    const res = await fetch(`${base}/api/v1/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, hash }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { redirect_url: string }).redirect_url).toMatch(new RegExp(`^${base}/auth/`));
  });

  it('after the runner stops, the merchant is in the data directory', async () => {
    expect(await (runner as Service).stop('SIGINT')).toEqual({ code: 0, signal: null });
    runner = undefined;
    const run = await merchant('show', created.merchant_key);
    expect(run.code).toBe(0);
    expect(json(run.stdout)).toMatchObject({ merchantKey: created.merchant_key, name: 'Runner Shop' });
  });
});

describe('merchant CLI usage', () => {
  const run = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runMerchantCommand(args, { out: (t) => out.push(t), err: (t) => err.push(t) }, { DATA_DIR: dataDir });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  };

  it.each([
    [[], 'a command is needed: create, show, set or rotate-password'],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['show', 'k', '--bogus'], "Unknown option '--bogus'"],
    [['create'], 'create needs --name NAME'],
    [['create', 'key', '--name', 'X'], 'create takes no merchant key; one is generated'],
    [['show'], 'show needs a merchant key: show KEY'],
    [['show', 'k', 'extra'], 'unexpected arguments: extra'],
    [['rotate-password', 'k', '--dms', 'on'], 'rotate-password takes no settings (--dms)'],
    [['set', 'k'], 'set needs at least one setting'],
    [['set'], 'set needs a merchant key'],
    [['set', 'k', '--dms', 'yes'], '--dms must be on or off, not "yes"'],
    [['set', 'k', '--return-params', '1'], '--return-params must be on or off, not "1"'],
    [['set', 'k', '--auto-capture-delay=-5'], '--auto-capture-delay must be a whole number, not "-5"'],
    [['set', 'k', '--auto-capture-delay', '1.5'], '--auto-capture-delay must be a whole number, not "1.5"'],
    [['set', 'k', '--auto-capture-delay', '20000'], 'auto capture delay must be a whole number of minutes from 0 to 10080'],
    [['set', 'k', '--max-declines', '0'], 'max declines must be a whole number from 1 to 10'],
    [['set', 'k', '--max-declines', 'many'], '--max-declines must be a whole number, not "many"'],
    [['set', 'k', '--notification-url', 'ftp://acme.example/cb'], 'notification URL must be an http(s) URL'],
    [['set', 'k', '--methods', 'card,bitcoin'], 'methods must be a list without repeats of: card (unknown: bitcoin)'],
    [['set', 'k', '--methods', 'card,card'], 'methods must be a list without repeats of: card'],
    [['set', 'k', '--brand-color', 'red'], 'brand color must be #RRGGBB'],
    [['set', 'k', '--logo-url', 'http://acme.example/logo.png'], 'logo URL must be an https URL'],
    [['set', 'k', '--frame-ancestors', "https://acme.example; script-src 'unsafe-inline'"], 'not an origin: https://acme.example; script-src'],
    [['set', 'k', '--frame-ancestors', 'https://acme.example/path'], 'not an origin: https://acme.example/path'],
    [['set', 'k', '--name', ''], 'name must be 1-64 characters'],
    [['show', 'k', '--stage', 'Prod!'], '--stage must be a stage name like dev or prod, not "Prod!"'],
  ])('%j exits 2: %s', async (args, message) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Run with --help for usage.');
  });
});

describe('merchant CLI targets', () => {
  it('--stage targets the deployed table and secret prefix of that stage, with no local endpoints', () => {
    const config = readConfig(stageEnvironment('prod'));
    expect(config).toMatchObject({ TABLE_NAME: 'checkout-prod', MERCHANT_SECRET_PREFIX: 'checkout/prod/merchants/', STAGE: 'prod' });
    expect(config.DYNAMODB_ENDPOINT).toBeUndefined();
    expect(config.SECRETS_MANAGER_ENDPOINT).toBeUndefined();
  });

  it('CHECKOUT_STAGE selects a stage when --stage is not given, and --stage wins over it', () => {
    expect(parseCommand(['show', 'k'], { CHECKOUT_STAGE: 'staging' })).toMatchObject({ stage: 'staging' });
    expect(parseCommand(['show', 'k', '--stage', 'dev'], { CHECKOUT_STAGE: 'staging' })).toMatchObject({ stage: 'dev' });
  });

  it('without either, the local store is the target', () => {
    expect(parseCommand(['show', 'k'], {})).toMatchObject({ stage: undefined });
    expect(parseCommand(['show', 'k'], { CHECKOUT_STAGE: '' })).toMatchObject({ stage: undefined });
  });
});
