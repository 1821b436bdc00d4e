import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { signFields } from '../../lambdas/domain/hash';
import { cards, launchBrowser, newPage, payWith } from '../support/browser';
import { paymentIdOf } from '../support/links';
import { startMerchantSite, type MerchantSite } from '../support/merchant-site';
import { freePort, runTs, startTs, type Service } from '../support/processes';
import { startAll } from '../support/lifecycle';
import { voidWindowClockStart } from '../support/void-window';

/**
 * Callbacks tried as a new user would (README, "Callbacks"): `npm start`, `npm run receiver`, the
 * demo merchant's notification URL set with the merchant CLI; a payment on the page in Chromium
 * produces one `sale` callback whose hash verifies, a void a `void` callback; with the receiver
 * down for a while, the callbacks arrive once it is back, in order. All separate processes, real
 * sockets, the local runner's own timer.
 */
const DEMO = { DEMO_MERCHANT_KEY: 'demo-shop', DEMO_MERCHANT_PASSWORD: 'demo-password-0123456789' };
const merchant = { merchant_key: DEMO.DEMO_MERCHANT_KEY, password: DEMO.DEMO_MERCHANT_PASSWORD, webhookSecret: '' };

const dataDir = mkdtempSync(join(tmpdir(), 'checkout-callbacks-'));
const processes = new Set<Service>();
let browser: Browser;
let site: MerchantSite;
let base: string;
let receiverPort: number;
let port: number;
let runner: Service;
// Voids are accepted until 21:00 UTC+3: the runner and the receiver run on a clock inside the window.
const clockStart = voidWindowClockStart();

interface Printed {
  readonly signature: string;
  readonly hash: string;
  readonly fields: Record<string, string>;
}

/** The receiver's JSON lines so far. */
const printed = (receiver: Service): Printed[] =>
  receiver
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Printed);

async function waitForCallbacks(receiver: Service, count: number, timeoutMs = 20_000): Promise<Printed[]> {
  const deadline = Date.now() + timeoutMs;
  while (printed(receiver).length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} callbacks, got:\n${receiver.output()}\nRUNNER:\n${runner.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return printed(receiver);
}

function startReceiver(): Promise<Service> {
  const receiver = startTs('local/callback-receiver.ts', { CLOCK_START: clockStart() }, ['--port', String(receiverPort), '--webhook-secret', merchant.webhookSecret, '--password', merchant.password, '--json']);
  processes.add(receiver);
  return receiver.waitForLine(/^Receiving callbacks at /).then(() => receiver);
}

async function signedPost(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function newSession(number: string): Promise<{ paymentId: string; url: string }> {
  const order = { number, amount: '10.00', currency: 'USD', description: 'Demo order' };
  const res = await signedPost('/api/v1/session', {
    merchant_key: merchant.merchant_key,
    operation: 'purchase',
    success_url: site.urls().success_url,
    hash: signFields([order.number, order.amount, order.currency, order.description], merchant.password),
    order,
    customer: { name: 'John Doe', email: 'john@example.com' },
    billing_address: { country: 'US' },
  });
  expect(res.status).toBe(200);
  const url = String(res.json.redirect_url);
  return { paymentId: paymentIdOf(url), url };
}

const voidPayment = (paymentId: string) =>
  signedPost('/api/v1/payment/void', { merchant_key: merchant.merchant_key, payment_id: paymentId, hash: signFields([paymentId], merchant.password) });

async function payOnPage(url: string): Promise<void> {
  const { context, page } = await newPage(browser);
  try {
    await page.goto(url);
    await payWith(page, cards.approved);
    await page.waitForURL((u) => u.origin === site.origin && u.pathname === '/success');
  } finally {
    await context.close();
  }
}

/** `npm start` on the test's data directory and port (again, after a crash). */
async function startRunner(): Promise<void> {
  // Retries a few hundred milliseconds apart instead of 30 s, so "down for a while" is seconds long.
  runner = startTs('local/main.ts', { DATA_DIR: dataDir, PORT: String(port), CALLBACK_FIRST_RETRY_MS: '250', CLOCK_START: clockStart(), ...DEMO });
  processes.add(runner);
  await runner.waitForLine(/^curl /, 30_000);
  // The runner prints the demo merchant's webhook secret (it gives the demo one if it had none).
  merchant.webhookSecret = (JSON.parse(/^Demo merchant: (\{.*?\})/m.exec(runner.output())?.[1] ?? '{}') as { webhook_secret: string }).webhook_secret;
}

/** The customer's form post on the page, without a browser. */
async function payByFormPost(url: string): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ card_number: '4111111111111111', card_expiry: '01/38', card_cvv: '123', card_holder: 'John Doe' }).toString(),
  });
  await res.text();
  expect(res.headers.get('location')).toMatch(/\/success/);
}

beforeAll(async () => {
  port = await freePort();
  receiverPort = await freePort();
  base = `http://localhost:${port}`;
  [browser, site] = await startAll([launchBrowser(), startMerchantSite()]);
  await startRunner();
  expect(runner.output()).toMatch(/DeliverCallbacks every 2 s/);
});
afterAll(async () => {
  await Promise.all([browser?.close(), site?.close()]);
  for (const p of processes) p.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

it('a payment on the page produces one verified sale callback, a void one void callback; callbacks wait out a receiver outage, in order', async () => {
  let receiver = await startReceiver();
  const set = await runTs('local/merchant-cli.ts', ['set', merchant.merchant_key, '--notification-url', `http://127.0.0.1:${receiverPort}/callbacks`], { DATA_DIR: dataDir });
  expect(set.stderr).toBe('');
  expect(set.code).toBe(0);

  const first = await newSession('cb-1');
  await payOnPage(first.url);
  const [sale] = await waitForCallbacks(receiver, 1);
  expect(sale).toMatchObject({ signature: 'ok', hash: 'ok (order only)', fields: { id: first.paymentId, type: 'sale', status: 'success', order_status: 'settled', order_number: 'cb-1' } });

  expect((await voidPayment(first.paymentId)).json).toMatchObject({ status: 'SUCCESS' });
  const [, voided] = await waitForCallbacks(receiver, 2);
  expect(voided).toMatchObject({ signature: 'ok', hash: 'ok (order only)', fields: { id: first.paymentId, type: 'void', status: 'success', order_status: 'void' } });
  // Exactly one of each, even after a few more ticks of the relay.
  await new Promise((r) => setTimeout(r, 2500));
  expect(printed(receiver)).toHaveLength(2);

  // The receiver goes down; a payment and its void happen meanwhile.
  await receiver.stop('SIGINT');
  processes.delete(receiver);
  const second = await newSession('cb-2');
  await payOnPage(second.url);
  expect((await voidPayment(second.paymentId)).json).toMatchObject({ status: 'SUCCESS' });
  const failedAttempts = async () => {
    const log = await runTs('local/merchant-cli.ts', ['callbacks', second.paymentId, '--json'], { DATA_DIR: dataDir });
    return ((JSON.parse(log.stdout) as { attempt_count: number; state: string }[])[0] ?? { attempt_count: 0, state: 'not-sent' });
  };
  const deadline = Date.now() + 20_000;
  while ((await failedAttempts()).attempt_count < 2) {
    if (Date.now() > deadline) throw new Error('the relay did not try the unreachable receiver twice');
    await new Promise((r) => setTimeout(r, 250));
  }
  expect(await failedAttempts()).toMatchObject({ state: 'pending' });

  receiver = await startReceiver();
  const back = await waitForCallbacks(receiver, 2, 30_000);
  expect(back.map((c) => [c.fields.id, c.fields.type, c.signature])).toEqual([
    [second.paymentId, 'sale', 'ok'],
    [second.paymentId, 'void', 'ok'],
  ]);
  await receiver.stop('SIGINT');
  processes.delete(receiver);
}, 90_000);

it('a runner killed right after a payment and its void delivers both callbacks, in order, once it runs again', async () => {
  // The receiver is down: nothing can be delivered before the crash.
  const third = await newSession('cb-3');
  await payByFormPost(third.url);
  expect((await voidPayment(third.paymentId)).json).toMatchObject({ status: 'SUCCESS' });
  runner.kill();
  await runner.stop('SIGKILL');
  processes.delete(runner);

  const receiver = await startReceiver();
  await startRunner();
  const arrived = await waitForCallbacks(receiver, 2, 30_000);
  expect(arrived.map((c) => [c.fields.id, c.fields.type, c.fields.order_status, c.signature])).toEqual([
    [third.paymentId, 'sale', 'settled', 'ok'],
    [third.paymentId, 'void', 'void', 'ok'],
  ]);
  // A restart and a 30-second wait for the callbacks: Jest's default of 30 s for the whole test cut it short on a busy machine.
}, 90_000);

it('a chargeback raised at the sandbox (npm run -s sandbox -- chargeback) reaches the merchant as a signed chargeback callback within a minute', async () => {
  // A fresh receiver on the port (the one before may still listen there).
  for (const p of [...processes]) if (p !== runner) await p.stop('SIGINT').finally(() => processes.delete(p));
  const receiver = await startReceiver();
  const fourth = await newSession('cb-4');
  await payOnPage(fourth.url);
  await waitForCallbacks(receiver, 1);
  const raisedAt = Date.now();
  // On the runner's clock (CLOCK_START): the news is due when the runner's reconcile job reads it.
  const raised = await runTs('local/sandbox-cli.ts', ['chargeback', fourth.paymentId, '4.00', '10.4'], { DATA_DIR: dataDir, CLOCK_START: clockStart() });
  expect(raised.code).toBe(0);
  // The runner's reconcile job takes the sandbox's dispute report, records the chargeback, the relay sends it.
  const [, chargeback] = await waitForCallbacks(receiver, 2, 60_000);
  expect(chargeback).toMatchObject({ signature: 'ok', fields: { id: fourth.paymentId, type: 'chargeback', status: 'success', order_status: 'chargeback', amount: '4.00', reason: '10.4' } });
  expect(chargeback!.hash).toMatch(/^ok/);
  console.log(`sandbox chargeback callback reached the merchant ${Date.now() - raisedAt} ms after it was raised`);
  await receiver.stop('SIGINT');
  processes.delete(receiver);
}, 90_000);
