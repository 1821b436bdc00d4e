import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decisionRows, DECISIONS_DOC } from '../../scripts/certify';
import { runTs } from '../support/processes';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';

/**
 * `npm run certify` as a platform engineer runs it before prod, here against our fake gateway: the
 * acquirer contract passes step by step, and the report lists every open point of the connector's
 * "Decisions where the guide is unclear" table with an observation or as still open. Pointed at a
 * gateway by URL and credentials only (as at the real sandbox), the steps that need a customer on
 * the 3-D Secure or bank page are listed as needing a browser, not passed.
 */
jest.setTimeout(240_000);

const dir = mkdtempSync(join(tmpdir(), 'checkout-certify-'));
let gateway: FakeGateway | undefined;
afterAll(async () => {
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

const CHALLENGE_STEPS = ['3-D Secure passed', '3-D Secure failed', '3-D Secure refused by the customer', 'bank redirect confirmed', 'PAN_ONLY (fpan) on the 3-D Secure card: a challenge first'];
const points = decisionRows(readFileSync(join(__dirname, '..', '..', DECISIONS_DOC), 'utf8')).map((r) => r.point);

type Row = { step: string; outcome: string };
function stepRows(report: string): Row[] {
  const section = report.split('\n## ')[0]!;
  return section
    .split('\n')
    .filter((l) => l.startsWith('| the S2S CARD connector'))
    .map((l) => l.split(' | '))
    .map(([step, outcome]) => ({ step: step!.replace(/^\| /, ''), outcome: outcome! }));
}
function decisionStatuses(report: string): Map<string, string> {
  const section = report.split('## Open points')[1] ?? '';
  const rows = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| point') && !l.startsWith('|---'));
  return new Map(rows.map((l) => l.split(' | ')).map((cells) => [cells[0]!.replace(/^\| /, ''), cells[2]!]));
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

test('against our fake gateway: every contract step passes, challenges answered through the fake, every open point reported', async () => {
  const report = join(dir, 'fake.md');
  const run = await runTs('scripts/certify.ts', ['--fake-gateway', '--report', report, '--timeout-ms', '1500'], {});
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/^certify: (\d+) passed, 0 failed, 0 need a browser \/ manual; \d+ of \d+ open points answered; report in /m);
  const text = readFileSync(report, 'utf8');
  const steps = stepRows(text);
  expect(steps.length).toBeGreaterThanOrEqual(15);
  expect(steps.filter((s) => s.outcome !== 'passed')).toEqual([]);
  for (const name of CHALLENGE_STEPS) expect(steps.find((s) => s.step.includes(name))?.outcome).toBe('passed');
  const statuses = decisionStatuses(text);
  expect([...statuses.keys()]).toEqual(points);
  expect([...statuses.values()].every((s) => s === 'answered' || s === 'open')).toBe(true);
  // Observations against the fake are labelled as such: they say nothing about the real gateway.
  expect(text).toContain('[fake gateway: describes our fake, not the gateway]');
  expect(statuses.get('Hash of GET_TRANS_STATUS_BY_ORDER')).toBe('answered');
  expect(statuses.get('Chargebacks')).toBe('open');
});

test('against a gateway given by URL and credentials: the challenge steps need a browser, the rest passes, callbacks reach the receiver', async () => {
  gateway = await startFakeGateway();
  const port = await freePort();
  // What an operator does on the sandbox account: its Notification URL points at the run's receiver.
  gateway.notifyUrl = `http://127.0.0.1:${port}/acquirer/s2s-card/notify`;
  const report = join(dir, 'sandbox.md');
  const run = await runTs('scripts/certify.ts', ['--report', report, '--notify-port', String(port), '--timeout-ms', '1500'], {
    S2S_CARD_URL: gateway.url,
    S2S_CARD_CLIENT_KEY: gateway.clientKey,
    S2S_CARD_PASSWORD: gateway.password,
  });
  expect(run.code).toBe(0);
  const text = readFileSync(report, 'utf8');
  expect(text).toContain(`Target: ${gateway.url}.`);
  const steps = stepRows(text);
  for (const name of CHALLENGE_STEPS) expect(steps.find((s) => s.step.includes(name))?.outcome).toBe('needs a browser / manual');
  expect(steps.filter((s) => !CHALLENGE_STEPS.some((n) => s.step.includes(n)) && s.outcome !== 'passed')).toEqual([]);
  const statuses = decisionStatuses(text);
  expect(statuses.get('`term_url_3ds`')).toBe('open');
  expect(statuses.get('Card digits in hashes after the request')).toBe('answered');
  expect(text).not.toContain('[fake gateway');
});

test('refuses to run without a target or a report file', async () => {
  const run = await runTs('scripts/certify.ts', ['--report', join(dir, 'none.md')], { S2S_CARD_URL: undefined, S2S_CARD_CLIENT_KEY: undefined, S2S_CARD_PASSWORD: undefined });
  expect(run.code).toBe(2);
  expect(run.stderr).toContain('S2S_CARD_URL, S2S_CARD_CLIENT_KEY and S2S_CARD_PASSWORD must name the gateway\'s sandbox');
  expect((await runTs('scripts/certify.ts', ['--fake-gateway'], {})).code).toBe(2);
});
