import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { paymentIdOf } from '../support/links';
import { freePort, startTs, type Service } from '../support/processes';

/**
 * An e-mail receipt as a newcomer meets it (ADR 0037): `npm start` on a fresh data directory (its
 * demo merchant has receipts on), the printed curl, the card form posted on the hosted page; the
 * runner's own relay and receipt job then write the receipt to DATA_DIR/mail, print a line, and
 * list it at /local/mail. Separate process, real sockets, the runner's own timer; no browser.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'checkout-receipts-local-'));
let runner: Service | undefined;

afterAll(async () => {
  if (runner) await runner.stop('SIGINT').catch(() => runner?.kill());
  rmSync(dataDir, { recursive: true, force: true });
});

test('a paid checkout of the demo merchant leaves a receipt in the data directory, printed and listed', async () => {
  const port = await freePort();
  runner = startTs('local/main.ts', { DATA_DIR: dataDir, PORT: String(port), DEMO_MERCHANT_KEY: undefined, DEMO_MERCHANT_PASSWORD: undefined, CHECKOUT_STAGE: undefined });
  const curl = await runner.waitForLine(/^curl /, 60_000);
  const m = /^curl -s (\S+) -H '([^:']+): ([^']*)' -d '([^']*)'$/.exec(curl)!;
  const session = (await (await fetch(m[1]!, { method: 'POST', headers: { [m[2]!]: m[3]! }, body: m[4]! })).json()) as { redirect_url: string };
  const paymentId = paymentIdOf(session.redirect_url);

  const paid = await fetch(session.redirect_url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ card_number: '4111 1111 1111 1111', card_expiry: '01/38', card_cvv: '123', card_holder: 'John Doe' }).toString(),
  });
  expect(paid.status).toBeLessThan(400);

  const line = await runner.waitForLine(new RegExp(`^receipt for payment ${paymentId} `), 30_000);
  expect(line).toContain('to j***@example.com');
  expect(line).not.toContain('john@example.com');
  const html = readFileSync(join(dataDir, 'mail', `${paymentId}.html`), 'utf8');
  expect(html).toContain('Demo Shop');
  expect(html).toContain('ending in 1111');
  expect(html).not.toContain('4111 1111');
  expect(existsSync(join(dataDir, 'mail', `${paymentId}.txt`))).toBe(true);

  const list = await fetch(`http://127.0.0.1:${port}/local/mail`);
  expect(list.status).toBe(200);
  const listed = await list.text();
  expect(listed).toContain('j***@example.com');
  expect(listed).toContain(`?id=${paymentId}`);
  const shown = await fetch(`http://127.0.0.1:${port}/local/mail?id=${paymentId}`);
  expect(shown.headers.get('content-security-policy')).toContain("default-src 'none'");
  expect(await shown.text()).toBe(html);
  expect((await fetch(`http://127.0.0.1:${port}/local/mail?id=../backend`)).status).toBe(404);
}, 120_000);
