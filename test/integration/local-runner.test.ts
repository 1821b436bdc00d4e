import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { signFields } from '../../lambdas/domain/hash';
import { paymentIdOf } from '../support/links';
import { freePort, startTs, type Service } from '../support/processes';
import { runMerchantCommand } from '../../local/merchant-command';

/**
 * `npm start` as a developer meets it: it prints a working curl command, stops cleanly on Ctrl-C
 * and keeps its data (payments and the demo merchant) across restarts.
 */
const MAIN = 'local/main.ts';
const DEMO = { DEMO_MERCHANT_KEY: 'demo-shop', DEMO_MERCHANT_PASSWORD: 'demo-password-0123456789' };

const dataDirs: string[] = [];
const running = new Set<Service>();
afterAll(() => {
  for (const r of running) r.kill();
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});

const newDataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'checkout-runner-'));
  dataDirs.push(dir);
  return dir;
};

async function start(dataDir: string, env: Record<string, string | undefined>) {
  const port = await freePort();
  const runner = startTs(MAIN, { DATA_DIR: dataDir, PORT: String(port), DEMO_MERCHANT_KEY: undefined, DEMO_MERCHANT_PASSWORD: undefined, CHECKOUT_STAGE: undefined, ...env });
  running.add(runner);
  const curl = await runner.waitForLine(/^curl /);
  const demo = JSON.parse(/^Demo merchant: (\{.*?\})/m.exec(runner.output())?.[1] ?? 'null') as { merchant_key: string; password: string; generated: boolean };
  return { runner, port, curl, demo, base: `http://127.0.0.1:${port}` };
}

/** Runs the printed curl request; an answer also proves start-up finished (signal handlers included). */
async function runCurl(curl: string) {
  const request = requestOf(curl);
  return fetch(request.url, { method: 'POST', headers: request.headers, body: request.body });
}

async function stop(runner: Service) {
  const exit = await runner.stop('SIGINT');
  running.delete(runner);
  return exit;
}

/** The request of the printed `curl -s URL -H 'header' -d 'body'` line. */
function requestOf(curl: string): { url: string; headers: Record<string, string>; body: string } {
  const m = /^curl -s (\S+) -H '([^:']+): ([^']*)' -d '([^']*)'$/.exec(curl);
  if (!m) throw new Error(`unexpected curl line: ${curl}`);
  return { url: m[1] as string, headers: { [m[2] as string]: m[3] as string }, body: m[4] as string };
}

async function status(base: string, merchant: { merchant_key: string; password: string }, paymentId: string) {
  const res = await fetch(`${base}/api/v1/payment/status`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ merchant_key: merchant.merchant_key, payment_id: paymentId, hash: signFields([paymentId], merchant.password) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('the local runner with a chosen demo merchant', () => {
  const dataDir = newDataDir();
  let paymentId: string;

  it('prints a curl command whose request creates a session', async () => {
    const { runner, curl, base, demo } = await start(dataDir, DEMO);
    expect(demo).toEqual({ merchant_key: DEMO.DEMO_MERCHANT_KEY, password: DEMO.DEMO_MERCHANT_PASSWORD, generated: false, webhook_secret: expect.stringMatching(/^whsec_/) });

    expect(requestOf(curl).url).toBe(`${base}/api/v1/session`);
    const res = await runCurl(curl);
    expect(res.status).toBe(200);
    const { redirect_url } = (await res.json()) as { redirect_url: string };
    expect(redirect_url).toMatch(new RegExp(`^${base}/auth/[A-Za-z0-9_-]{45,46}$`));
    paymentId = paymentIdOf(redirect_url);
    expect(await status(base, demo, paymentId)).toMatchObject({ status: 200, body: { payment_id: paymentId, status: 'prepare' } });

    expect(existsSync(join(dataDir, 'backend.json'))).toBe(true);
    expect(await stop(runner)).toEqual({ code: 0, signal: null });
  });

  it('stops on SIGINT with exit code 0 and withdraws its backend announcement', () => {
    expect(existsSync(join(dataDir, 'backend.json'))).toBe(false);
  });

  it('still finds the payment after a restart on the same DATA_DIR', async () => {
    const { runner, base, demo, curl } = await start(dataDir, DEMO);
    expect(await status(base, demo, paymentId)).toMatchObject({ status: 200, body: { payment_id: paymentId, status: 'prepare', order: { number: 'demo-1', amount: '10.00' } } });

    // The curl's way back is the runner's own result page: the order's payment as the demo merchant's status request sees it.
    const body = JSON.parse(requestOf(curl).body) as { success_url: string; cancel_url: string };
    expect([body.success_url, body.cancel_url]).toEqual([`${base}/local/result?order=demo-1`, `${base}/local/result?order=demo-1&outcome=cancel`]);
    const result = await fetch(body.success_url);
    const page = await result.text();
    expect([result.status, result.headers.get('content-security-policy')]).toEqual([200, expect.stringContaining("default-src 'none'")]);
    expect(page).toContain(`<dt>Status</dt><dd>prepare</dd><dt>Reference (payment_id)</dt><dd>${paymentId}</dd>`);
    expect(page).toContain(`npm run -s merchant -- refund ${paymentId} 10.00`);
    expect((await fetch(`${base}/local/result?payment_id=nope`)).status).toBe(404);
    // The footer's documents are the runner's own: what it is, what it keeps (in this DATA_DIR) and what leaves the machine.
    const terms = await fetch(`${base}/local/terms`);
    expect(terms.status).toBe(200);
    expect(await terms.text()).toMatch(/No money moves here[\s\S]*the sandbox acquirer built into this runner[\s\S]*href="\/local\/privacy"/);
    const privacy = await fetch(`${base}/local/privacy`);
    expect([privacy.status, privacy.headers.get('content-security-policy')]).toEqual([200, expect.stringContaining("default-src 'none'")]);
    const notice = await privacy.text();
    expect(notice).toContain(`<code>${dataDir}</code>`);
    expect(notice).toContain('The full card number and the security code are never kept.');
    expect(notice).not.toMatch(/placeholder/i);

    // The merchant helper finds the runner (DATA_DIR/runner.json) and the demo merchant, signs, and prints the answer.
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
    const env = { DATA_DIR: dataDir, ...DEMO };
    expect(await runMerchantCommand(['status', paymentId], io, env)).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ payment_id: paymentId, status: 'prepare' });
    expect(await runMerchantCommand(['void', 'no-such-payment'], io, env)).toBe(1);
    expect(err.join('\n')).toContain(`refused, HTTP 404: Payment not found.\npayment no-such-payment is not a payment of merchant demo-shop at ${base}`);
    expect(await stop(runner)).toEqual({ code: 0, signal: null });
    // Stopped: the helper says so rather than failing obscurely.
    err.length = 0;
    expect(await runMerchantCommand(['status', paymentId, '--base-url', base], io, env)).toBe(1);
    expect(err.join('\n')).toContain(`nothing answered at ${base}/api/v1/payment/status (ECONNREFUSED): is npm start running?`);
  });
});

describe('the local runner without DEMO_* settings', () => {
  it('generates demo credentials, prints them, and reuses them after a restart', async () => {
    const dataDir = newDataDir();
    const first = await start(dataDir, {});
    expect(first.demo).toMatchObject({ merchant_key: expect.stringMatching(/^[0-9a-f-]{36}$/), password: expect.stringMatching(/^[0-9a-f]{32}$/), generated: true });
    expect(first.runner.output()).toContain('(generated; set DEMO_MERCHANT_KEY and DEMO_MERCHANT_PASSWORD to choose)');
    // What a newcomer needs next: the README's next step, where the data lives, how to stop.
    await first.runner.waitForLine(/^Stop: /);
    const lines = first.runner.output().split('\n');
    expect(lines).toContain('Next: open the redirect_url the curl answers and pay with 4111 1111 1111 1111, expiry 01/38, any 3-digit security code and a two-word name; docs/sandbox.md has every test card, the README goes on from there.');
    expect(lines).toContain(`Data: ${dataDir} (kept across restarts; other tools use it with DATA_DIR=${dataDir}; delete it to start afresh).`);
    expect(lines).toContain('Stop: Ctrl-C (the data stays).');
    expect((await runCurl(first.curl)).status).toBe(200);
    expect(await stop(first.runner)).toEqual({ code: 0, signal: null });

    const second = await start(dataDir, {});
    expect(second.demo).toEqual(first.demo);
    expect((await runCurl(second.curl)).status).toBe(200);
    expect(await stop(second.runner)).toEqual({ code: 0, signal: null });
  }, 90_000);
});

describe('the local runner is not exposed', () => {
  const externalAddress = () =>
    Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

  it('listens on 127.0.0.1 by default, keeps its data to this user, and answers malformed escapes with 400', async () => {
    const dataDir = newDataDir();
    chmodSync(dataDir, 0o755);
    const { base, port } = await start(dataDir, DEMO);
    expect((await fetch(`${base}/api/v1/session`, { method: 'POST' })).status).toBeLessThan(500);
    const outside = externalAddress();
    if (outside) await expect(fetch(`http://${outside}:${port}/api/v1/session`, { method: 'POST' })).rejects.toThrow();
    // The data directory and the announcement of its unauthenticated local endpoints: 0700 / 0600.
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dataDir, 'backend.json')).mode & 0o777).toBe(0o600);
    for (const path of ['/admin/api/payments/%ZZ', '/auth/%E0%A4%A', '/auth/%E0%A4%A/complete', '/sandbox/challenge/%ZZ']) {
      const res = await fetch(`${base}${path}`);
      expect([path, res.status]).toEqual([path, 400]);
    }
  });
});
