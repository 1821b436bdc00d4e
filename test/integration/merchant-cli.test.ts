import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CALLBACK_POLICY } from '../../lambdas/domain/callback';
import { signFields } from '../../lambdas/domain/hash';
import { readConfig } from '../../lambdas/config';
import { ManualClock } from '../../lambdas/ports/clock';
import type { CallbackView } from '../../lambdas/protocol/admin/callbacks';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { announceBackend } from '../../local/local-store';
import { cliActor, parseCommand, runMerchantCommand, stageEnvironment, type DeadCallback } from '../../local/merchant-command';
import { inProcess } from '../support/cli';
import { type CallbackReceiver, saleCallbackDeliveredSecondTime, startCallbackReceiver, verifiesWith } from '../support/callback-receiver';
import { validSessionBody } from '../support/fixtures';
import { paidPayment } from '../support/payments';
import { freePort, runTs, startTs, type Service } from '../support/processes';
import { startTestService, type TestService } from '../support/service';

/**
 * `npm run merchant`: against a local data directory, with and without the local runner holding
 * that directory. The commands run in this process through the entry point's function; one test
 * spawns the CLI as a developer runs it.
 */
jest.setTimeout(60_000);

const CLI = 'local/merchant-cli.ts';
const dataDir = mkdtempSync(join(tmpdir(), 'checkout-cli-'));
let runner: Service | undefined;

afterAll(() => {
  runner?.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const merchant = inProcess(runMerchantCommand, { DATA_DIR: dataDir, CHECKOUT_STAGE: undefined });
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

describe('the merchant CLI on the local store', () => {
  let key: string;
  const passwords: string[] = [];
  const webhookSecrets: string[] = [];

  it('create prints the new merchant_key, password and webhook_secret as JSON', async () => {
    const run = await merchant('create', '--name', 'Acme Shop');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const created = json(run.stdout);
    expect(Object.keys(created)).toEqual(['merchant_key', 'password', 'webhook_secret']);
    expect(created).toEqual({
      merchant_key: expect.stringMatching(/^[0-9a-f-]{36}$/),
      password: expect.stringMatching(/^[0-9a-f]{32}$/),
      webhook_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    key = created.merchant_key as string;
    passwords.push(created.password as string);
    webhookSecrets.push(created.webhook_secret as string);
  });

  it('show prints the settings, with the defaults, and the webhook secret, never the password', async () => {
    const run = await merchant('show', key);
    expect(run.code).toBe(0);
    expect(json(run.stdout)).toEqual({
      merchantKey: key,
      name: 'Acme Shop',
      dms: false,
      returnParams: false,
      maxDeclines: 3,
      webhook_secret: webhookSecrets[0],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(run.stdout).not.toContain(passwords[0]);
    expect(json(run.stdout).webhook_secret).toBe(webhookSecrets[0]);
  });

  it('rotate-webhook-secret prints a new secret; the previous one signs beside it for 24 hours', async () => {
    const run = await merchant('rotate-webhook-secret', key);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const rotated = json(run.stdout);
    expect(rotated).toEqual({ merchant_key: key, webhook_secret: expect.stringMatching(/^whsec_/), previous_valid_until: expect.any(String) });
    expect(rotated.webhook_secret).not.toBe(webhookSecrets[0]);
    expect(Date.parse(rotated.previous_valid_until as string) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(json((await merchant('show', key)).stdout).webhook_secret).toBe(rotated.webhook_secret);
    webhookSecrets.push(rotated.webhook_secret as string);
  });

  it('on the local store it keeps the runner\'s clock: under CLOCK_START a rotated secret signs for 24 hours from that time', async () => {
    const created = json((await merchant('create', '--name', 'Clocked Shop')).stdout);
    const shifted = inProcess(runMerchantCommand, { DATA_DIR: dataDir, CHECKOUT_STAGE: undefined, CLOCK_START: '2031-01-01T00:00:00Z' });
    const run = await shifted('rotate-webhook-secret', created.merchant_key as string);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const until = Date.parse(json(run.stdout).previous_valid_until as string);
    expect(Math.abs(until - Date.parse('2031-01-02T00:00:00Z'))).toBeLessThan(60_000);
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
      '--email-receipts', 'on',
      '--wallets', 'applepay,googlepay',
      '--apple-pay-merchant-id', 'merchant.com.acme',
      '--google-pay-gateway-merchant-id', 'acme-at-gateway',
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
      emailReceipts: true,
      wallets: ['applepay', 'googlepay'],
      applePayMerchantId: 'merchant.com.acme',
      googlePayGatewayMerchantId: 'acme-at-gateway',
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

  it('rotate-password prints a new password for the same key, and until when the previous one is still accepted', async () => {
    const run = await merchant('rotate-password', key);
    expect(run.code).toBe(0);
    const rotated = json(run.stdout);
    expect(rotated).toEqual({ merchant_key: key, password: expect.stringMatching(/^[0-9a-f]{32}$/), previous_valid_until: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(Date.parse(rotated.previous_valid_until as string) - Date.now()).toBeGreaterThan(23 * 3600_000);
    expect(rotated.password).not.toBe(passwords[0]);
    passwords.push(rotated.password as string);
  });

  it('an unknown merchant is an error: exit 1 with a message, nothing on stdout', async () => {
    const run = await merchant('show', 'no-such-merchant');
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain('merchant no-such-merchant not found');
  });

  it('spawned as a developer runs it: --help prints the usage with exit 0, bad usage exits 2 with a message', async () => {
    const spawned = (...args: string[]) => runTs(CLI, args, { DATA_DIR: dataDir, CHECKOUT_STAGE: undefined });
    const [help, bad] = await Promise.all([spawned('--help'), spawned('set', 'some-key', '--dms', 'maybe')]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: npm run -s merchant -- <command> [options]');
    for (const command of ['callbacks PAYMENT_ID', 'resend-callback PAYMENT_ID NO', 'dead-callbacks KEY', 'resend-dead KEY', '--json']) expect(help.stdout).toContain(command);
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
    base = `http://127.0.0.1:${port}`;
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
  const run = merchant;

  it.each([
    [[], 'a command is needed: create, show, set, rotate-password, rotate-webhook-secret, callbacks, resend-callback, dead-callbacks, resend-dead, verify-audit, migrate-indexes, accounts, account-create, account-set, sign, status, refund or void'],
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
    [['callbacks'], 'callbacks needs a payment id: callbacks PAYMENT_ID'],
    [['callbacks', 'p', 'extra'], 'unexpected arguments: extra'],
    [['callbacks', 'p', '--dms', 'on'], 'callbacks takes no settings (--dms)'],
    [['resend-callback'], 'resend-callback needs a payment id and a callback number: resend-callback PAYMENT_ID NO'],
    [['resend-callback', 'p'], 'resend-callback needs a payment id and a callback number: resend-callback PAYMENT_ID NO'],
    [['resend-callback', 'p', 'first'], 'NO must be a callback\'s number as callbacks lists it (1, 2, …), not "first"'],
    [['resend-callback', 'p', '1.5'], 'NO must be a callback\'s number as callbacks lists it (1, 2, …), not "1.5"'],
    [['resend-callback', 'p', '0'], 'NO must be a callback\'s number as callbacks lists it (1, 2, …), not "0"'],
    [['resend-callback', 'p', '-1'], "Unknown option '-1'"],
    [['resend-callback', 'p', '0', 'extra'], 'unexpected arguments: extra'],
    [['dead-callbacks'], 'dead-callbacks needs a merchant key: dead-callbacks KEY'],
    [['resend-dead'], 'resend-dead needs a merchant key: resend-dead KEY'],
    [['resend-dead', 'k', '--name', 'X'], 'resend-dead takes no settings (--name)'],
    [['verify-audit', '--day', '2030-02-30'], 'verify-audit takes days as YYYY-MM-DD, not "2030-02-30"'],
    [['verify-audit', '2030-01-01', '--day', '2030-01-02'], 'verify-audit takes days, --day, or --from/--to: one of them'],
    [['verify-audit', '--to', '2030-01-02'], 'verify-audit --to needs --from'],
    [['verify-audit', '--from', '2030-01-03', '--to', '2030-01-02'], 'verify-audit --from must not be after --to'],
    [['verify-audit', '--from', '2020-01-01', '--to', '2030-01-01'], 'verify-audit checks at most 366 days at once'],
    [['show', 'k', '--day', '2030-01-01'], '--day: only verify-audit takes days'],
  ])('%j exits 2: %s', async (args, message) => {
    const result = await run(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Run with --help for usage.');
  });
});

describe('callbacks through the merchant CLI', () => {
  // The service runs in this process, as the local runner would, and announces its backend in a data
  // directory the CLI reads, so the tests can move the clock the callback job runs on.
  const callbackDataDir = mkdtempSync(join(tmpdir(), 'checkout-cli-callbacks-'));
  const clock = new ManualClock();
  let service: TestService;
  let receiver: CallbackReceiver;
  let withdraw: () => void;
  let shop: MerchantCredentials;

  beforeAll(async () => {
    receiver = await startCallbackReceiver();
    service = await startTestService({ clock });
    withdraw = announceBackend(callbackDataDir, service.backend);
    shop = await service.createMerchant({ name: 'Callback Shop', settings: { notificationUrl: receiver.url } });
  });
  afterAll(async () => {
    withdraw?.();
    await service?.close();
    await receiver?.close();
    rmSync(callbackDataDir, { recursive: true, force: true });
  });

  const cli = inProcess(runMerchantCommand, { DATA_DIR: callbackDataDir, CHECKOUT_STAGE: undefined });
  const deliver = () => runCallbackJob(service.deps);
  /** The next minute's job run. The CLI queues a resend at wall-clock time, so a minute past the later of the two. */
  const nextRun = () => {
    clock.set(new Date(Math.max(clock.now().getTime(), Date.now()) + 60_000));
    return deliver();
  };
  const callbacksOf = async (paymentId: string): Promise<CallbackView[]> => {
    const run = await cli('callbacks', paymentId, '--json');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(run.stdout) as CallbackView[];
  };
  const lines = (text: string) => text.trimEnd().split('\n');
  /** A table, not just words: a cell starts where its column's header does. */
  const expectAligned = (header: string, name: string, row: string, cellText: string) => {
    const start = header.indexOf(name);
    expect(row.slice(start, start + cellText.length)).toBe(cellText);
  };

  let paymentId: string;
  let transId: string;

  it('audits settings changes and rotations made with the CLI as cli:<login>, never with a secret', async () => {
    const set = await cli('set', shop.merchant_key, '--max-declines', '4');
    expect(set.code).toBe(0);
    const rotated = await cli('rotate-password', shop.merchant_key);
    expect(rotated.code).toBe(0);
    const newPassword = (JSON.parse(rotated.stdout) as { password: string }).password;
    const entries = await service.deps.audit.forTarget(`merchant:${shop.merchant_key}`, 10);
    const settings = entries.find((e) => e.action === 'merchant.settings');
    expect(settings).toMatchObject({ actor: cliActor(), outcome: 'done', before: expect.objectContaining({ maxDeclines: 3 }), after: expect.objectContaining({ maxDeclines: 4 }) });
    expect(settings?.actorRole).toBeUndefined();
    const rotation = entries.find((e) => e.action === 'merchant.rotate-password');
    expect(rotation).toMatchObject({ actor: cliActor(), after: { rotated: 'password' } });
    expect(JSON.stringify(entries)).not.toContain(newPassword);
    // Put back for the tests below.
    expect((await cli('set', shop.merchant_key, '--max-declines', '3')).code).toBe(0);
    shop = { ...shop, password: newPassword };
  });

  it('callbacks shows a callback that failed once and then got through: both attempts, HTTP 500 then 200', async () => {
    receiver.script(500);
    paymentId = (await paidPayment(service, shop)).paymentId;
    const failedAt = clock.now().toISOString();
    expect(await deliver()).toMatchObject({ retrying: 1, delivered: 0 });
    expect(await nextRun()).toMatchObject({ delivered: 1 });
    const deliveredAt = clock.now().toISOString();

    const [table, asJson] = await Promise.all([cli('callbacks', paymentId), callbacksOf(paymentId)]);
    expect(asJson).toEqual([saleCallbackDeliveredSecondTime({ transId: expect.any(String), url: receiver.url, failedAt, deliveredAt })]);
    transId = asJson[0]!.trans_id;

    expect(table).toMatchObject({ code: 0, stderr: '' });
    const [title, , header, row, , attemptsTitle, attemptsHeader, failed, delivered, ...rest] = lines(table.stdout);
    expect(title).toBe(`Payment ${paymentId}: 1 callback`);
    expect(header).toMatch(/^NO\. +TYPE +STATUS +TRANS ID +STATE +ATTEMPTS +WHEN +LAST ERROR$/);
    expect(row).toMatch(new RegExp(`^1 +sale +success +${transId} +delivered +2 +delivered ${deliveredAt} +-$`));
    expectAligned(header!, 'STATE', row!, 'delivered');
    expectAligned(header!, 'WHEN', row!, `delivered ${deliveredAt}`);
    expect(attemptsTitle).toBe('Callback 1 (sale success): 2 attempts');
    expect(attemptsHeader).toMatch(/^ {2}TIME +HTTP +LATENCY MS +URL +ERROR$/);
    expect(failed).toMatch(new RegExp(`^  ${failedAt} +500 +\\d+ +${receiver.url} +HTTP 500$`));
    expect(delivered).toMatch(new RegExp(`^  ${deliveredAt} +200 +\\d+ +${receiver.url} +-$`));
    expectAligned(attemptsHeader!, 'HTTP', failed!, '500');
    expectAligned(attemptsHeader!, 'ERROR', failed!, 'HTTP 500');
    expect(rest).toEqual([]);
  });

  it('resend-callback queues the callback again, once, and the next job run sends it again', async () => {
    const sentBefore = receiver.received.length;
    const resend = await cli('resend-callback', paymentId, '1');
    expect(resend).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(resend.stdout)).toEqual({ payment_id: paymentId, index: 0, number: 1, outcome: 'queued' });
    const again = await cli('resend-callback', paymentId, '1');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ payment_id: paymentId, index: 0, number: 1, outcome: 'already-queued' });
    expect(await callbacksOf(paymentId)).toMatchObject([{ state: 'pending', next_attempt_at: expect.any(String), attempt_count: 2, resendable: false }]);

    expect(await nextRun()).toMatchObject({ delivered: 1 });
    const resent = (await receiver.waitFor(sentBefore + 1)).slice(sentBefore);
    expect(resent).toHaveLength(1);
    expect(resent[0]!.fields).toMatchObject({ id: paymentId, type: 'sale', status: 'success', trans_id: transId });
    expect(verifiesWith(resent[0]!, shop.password)).toBe(true);
    const [shown] = await callbacksOf(paymentId);
    expect(shown).toMatchObject({ state: 'delivered', attempt_count: 3, delivered_at: clock.now().toISOString() });
    expect(shown!.attempts.map((a) => a.httpStatus)).toEqual([500, 200, 200]);

    expect(await service.deps.audit.forTarget(paymentId, 10)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ actor: cliActor(), action: 'callback.resend no. 1', targetKind: 'payment', outcome: 'done' }),
        expect.objectContaining({ actor: cliActor(), action: 'callback.resend no. 1', targetKind: 'payment', outcome: 'refused' }),
      ]),
    );
    expect(cliActor()).toMatch(/^cli:[^:]+$/);
  });

  it('dead-callbacks lists the callbacks still failing after 24 hours; resend-dead queues them all and they go out again', async () => {
    receiver.fallback = 500;
    const dead = [(await paidPayment(service, shop)).paymentId, (await paidPayment(service, shop)).paymentId].sort();
    expect(await deliver()).toMatchObject({ retrying: 2 });
    clock.advance(CALLBACK_POLICY.retryForMs);
    expect(await nextRun()).toMatchObject({ dead: 2 });
    const deadAt = clock.now().toISOString();

    const [table, asJson] = await Promise.all([cli('dead-callbacks', shop.merchant_key), cli('dead-callbacks', shop.merchant_key, '--json')]);
    expect(asJson).toMatchObject({ code: 0, stderr: '' });
    const listed = JSON.parse(asJson.stdout) as { merchant_key: string; callbacks: DeadCallback[]; more: boolean };
    expect(listed).toEqual({
      merchant_key: shop.merchant_key,
      callbacks: dead.map((id) => ({ payment_id: id, index: 0, number: 1, trans_id: expect.any(String), type: 'sale', status: 'success', dead_at: deadAt, attempt_count: 2, last_error: 'HTTP 500' })),
      more: false,
    });
    expect(table).toMatchObject({ code: 0, stderr: '' });
    const [title, , header, ...rows] = lines(table.stdout);
    expect(title).toBe(`Merchant ${shop.merchant_key}: 2 dead callbacks; resend-dead ${shop.merchant_key} queues them all again.`);
    expect(header).toMatch(/^DEAD AT +PAYMENT +NO\. +TYPE +STATUS +TRANS ID +ATTEMPTS +LAST ERROR$/);
    expect(rows).toEqual(dead.map((id) => expect.stringMatching(new RegExp(`^${deadAt} +${id} +1 +sale +success +\\S+ +2 +HTTP 500$`))));
    expect(lines((await cli('callbacks', dead[0]!)).stdout)[3]).toMatch(new RegExp(`^1 +sale +success +\\S+ +dead +2 +dead ${deadAt} +HTTP 500$`));

    receiver.fallback = 200;
    const sentBefore = receiver.received.length;
    const resend = await cli('resend-dead', shop.merchant_key);
    expect(resend).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(resend.stdout)).toEqual({ merchant_key: shop.merchant_key, queued: 2, more: false });
    const after = await cli('dead-callbacks', shop.merchant_key);
    expect(after.stdout.trim()).toBe(`Merchant ${shop.merchant_key} has no dead callbacks.`);

    expect(await nextRun()).toMatchObject({ delivered: 2 });
    const resent = (await receiver.waitFor(sentBefore + 2)).slice(sentBefore);
    expect(resent.map((cb) => cb.fields.id).sort()).toEqual(dead);
    for (const id of dead) expect((await callbacksOf(id))[0]).toMatchObject({ state: 'delivered', attempt_count: 3 });
    expect(await service.deps.audit.forTarget(`merchant:${shop.merchant_key}`, 10)).toEqual(
      expect.arrayContaining([expect.objectContaining({ actor: cliActor(), action: 'callback.resend-dead', targetKind: 'merchant', after: { queued: 2 } })]),
    );
  });

  it('verify-audit walks the chain of the days with the resends above: whole, exit 0; a day that is not a date is bad usage', async () => {
    const run = await cli('verify-audit');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const report = json(run.stdout) as { ok: boolean; days: { day: string; entries: number }[] };
    expect(report.ok).toBe(true);
    expect(report.days).toHaveLength(7);
    expect(report.days.reduce((n, d) => n + d.entries, 0)).toBeGreaterThanOrEqual(2);
    const bad = await cli('verify-audit', 'yesterday');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('verify-audit takes days as YYYY-MM-DD, not "yesterday"');
  });

  it('an unknown payment or merchant, or a callback index the payment does not have, is an error: exit 1 with a message', async () => {
    const runs = await Promise.all([
      cli('callbacks', 'no-such-payment'),
      cli('resend-callback', 'no-such-payment', '1'),
      cli('resend-callback', paymentId, '7'),
      cli('dead-callbacks', 'no-such-merchant'),
      cli('resend-dead', 'no-such-merchant'),
    ]);
    const messages = [
      'payment no-such-payment not found',
      'payment no-such-payment not found',
      `payment ${paymentId} has no callback 7; its callbacks are 1 to 1`,
      'merchant no-such-merchant not found',
      'merchant no-such-merchant not found',
    ];
    runs.forEach((run, i) => {
      expect(run).toMatchObject({ code: 1, stdout: '' });
      expect(run.stderr.trim()).toBe(`merchant: ${messages[i]}`);
    });
  });

  it('a callback index that is not a number is bad usage: exit 2', async () => {
    const run = await cli('resend-callback', paymentId, 'last');
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain("NO must be a callback's number");
  });
});

describe('merchant CLI targets', () => {
  it('--stage targets the table, secret prefix and acquirer the stage\'s stack outputs name, with no local endpoints', async () => {
    const asked: string[] = [];
    const outputs = {
      TableName: 'Checkout-prod-DataTable1A2B3C-XYZ',
      MerchantSecretPrefix: 'checkout/prod/merchants/',
      Acquirer: 's2s-card',
      S2SCardUrl: 'https://gateway.example.com/post',
      S2SCardSecretArn: 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:S2SCardCredentials-abc',
    };
    const config = readConfig(await stageEnvironment('prod', async (name) => (asked.push(name), outputs)));
    expect(asked).toEqual(['Checkout-prod']);
    expect(config).toMatchObject({ TABLE_NAME: outputs.TableName, MERCHANT_SECRET_PREFIX: 'checkout/prod/merchants/', STAGE: 'prod', ACQUIRER: 's2s-card', S2S_CARD_SECRET_ID: outputs.S2SCardSecretArn });
    expect(config.DYNAMODB_ENDPOINT).toBeUndefined();
    expect(config.SECRETS_MANAGER_ENDPOINT).toBeUndefined();
  });

  it('--stage of a stack that does not exist, or of one deployed before the outputs, says so', async () => {
    await expect(stageEnvironment('staging', async () => undefined)).rejects.toThrow(/No stack Checkout-staging in this account and region/);
    await expect(stageEnvironment('dev', async () => ({ Stage: 'dev' }))).rejects.toThrow(/has no output TableName, MerchantSecretPrefix/);
  });

  it('CHECKOUT_STAGE selects a stage when --stage is not given, and --stage wins over it', () => {
    expect(parseCommand(['show', 'k'], { CHECKOUT_STAGE: 'staging' })).toMatchObject({ stage: 'staging' });
    expect(parseCommand(['show', 'k', '--stage', 'dev'], { CHECKOUT_STAGE: 'staging' })).toMatchObject({ stage: 'dev' });
  });

  it('verify-audit checks the days named, one --day, or every day from --from to --to (today when left out), newest first', () => {
    expect(parseCommand(['verify-audit', '2030-01-05', '2030-01-01'], {})).toMatchObject({ days: ['2030-01-05', '2030-01-01'] });
    expect(parseCommand(['verify-audit', '--day', '2030-01-05', '--stage', 'prod'], {})).toMatchObject({ days: ['2030-01-05'], stage: 'prod' });
    expect(parseCommand(['verify-audit', '--from', '2030-02-27', '--to', '2030-03-02'], {})).toMatchObject({ days: ['2030-03-02', '2030-03-01', '2030-02-28', '2030-02-27'] });
    const today = new Date().toISOString().slice(0, 10);
    expect(parseCommand(['verify-audit', '--from', today], {})).toMatchObject({ days: [today] });
  });

  it('without either, the local store is the target', () => {
    expect(parseCommand(['show', 'k'], {})).toMatchObject({ stage: undefined });
    expect(parseCommand(['show', 'k'], { CHECKOUT_STAGE: '' })).toMatchObject({ stage: undefined });
  });
});
