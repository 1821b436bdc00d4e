import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { FileAuditAnchors } from '../../lambdas/adapters/local/file-audit-anchors';
import { GENESIS, entryHash, type AuditAnchor } from '../../lambdas/domain/audit-chain';
import { ManualClock } from '../../lambdas/ports/clock';
import type { AuditEntry } from '../../lambdas/ports/operators';
import { exportAuditAnchors, verifyAnchoredDays } from '../../lambdas/use-cases/audit-anchors';
import { announceBackend, auditAnchorDirectory } from '../../local/local-store';
import { startTestService, type TestService } from '../support/service';
import { runMerchantCommand } from '../../local/merchant-command';
import { captureEntry } from '../support/audit';
import { inProcess } from '../support/cli';

/**
 * The audit chain anchored outside the table. Days link into one chain (a day's first entry names
 * the previous day's head); the export job writes each closed day's head, and checkpoints of the
 * open day, to a write-once store (locally the data directory, as the runner does; S3 Object Lock
 * in the cloud, test/cdk/audit-anchor.test.ts). Then someone with table credentials rewrites two
 * whole days consistently, every hash and link recomputed: the chains verify, and only the anchors
 * disagree; `npm run merchant -- verify-audit` exits 1 naming the day. Days written before the
 * change (each starting from GENESIS) keep verifying, reported `unanchored`.
 *
 * The days are in the past so that the CLI, on the real clock, sees them closed.
 */
const LEGACY = '2020-02-01';
const A = '2020-03-01';
const B = '2020-03-02';
const C = '2020-03-03';
const clock = new ManualClock(`${A}T09:00:00.000Z`);
const dataDir = mkdtempSync(join(tmpdir(), 'checkout-audit-anchor-'));
const anchors = new FileAuditAnchors(auditAnchorDirectory(dataDir));
let service: TestService;
let withdraw: () => void;

beforeAll(async () => {
  service = await startTestService({ clock });
  withdraw = announceBackend(dataDir, service.backend);
});
afterAll(async () => {
  withdraw?.();
  await service?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const deps = () => ({ audit: service.deps.audit, anchors, clock });
const table = () => service.backend.tableName;
const verifyAudit = (...args: string[]) => inProcess(runMerchantCommand, { DATA_DIR: dataDir, CHECKOUT_STAGE: undefined })('verify-audit', ...args);

async function appendDay(day: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await service.deps.audit.append(captureEntry(`${day}T10:${String(i).padStart(2, '0')}:00.000Z`, i));
}

async function itemsOf(day: string): Promise<Record<string, unknown>[]> {
  const out = await service.deps.db.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `AUDIT#${day}` } }));
  return (out.Items ?? []).sort((a, b) => String(a.sk).localeCompare(String(b.sk)));
}

/** What the log wrote before days were linked: each day its own chain from GENESIS. */
async function legacyDay(day: string, count: number): Promise<void> {
  let prevHash = GENESIS;
  for (let seq = 1; seq <= count; seq++) {
    const { id, ...content } = captureEntry(`${day}T08:00:0${seq}.000Z`, seq);
    const chained = { id, ...content, seq, prevHash };
    const hash = entryHash(chained);
    await service.deps.db.send(new PutCommand({ TableName: table(), Item: { pk: `AUDIT#${day}`, sk: `SEQ#${String(seq).padStart(10, '0')}`, kind: 'audit', ...chained, hash } }));
    prevHash = hash;
  }
}

/**
 * A rewrite by someone with table credentials: every entry of the days given gets another actor,
 * and every hash and link is recomputed, so each chain and each day's link are whole again.
 */
async function rewriteConsistently(days: readonly string[]): Promise<void> {
  let carried: { day: string; seq: number; hash: string } | undefined;
  for (const day of days) {
    let prevHash: string | undefined;
    for (const item of await itemsOf(day)) {
      const { pk, sk, kind, gsi1pk, gsi1sk, hash: _old, ...content } = item as Record<string, unknown> & { seq: number; prevDay?: string };
      const link = content.seq === 1 ? (carried && content.prevDay === carried.day ? { prevHash: carried.hash, prevSeq: carried.seq } : {}) : { prevHash };
      const rewritten = { ...content, ...link, actor: 'operator:mallory' };
      const hash = entryHash(rewritten as unknown as AuditEntry);
      await service.deps.db.send(new PutCommand({ TableName: table(), Item: { pk, sk, kind, gsi1pk, gsi1sk, ...rewritten, hash } }));
      prevHash = hash;
      carried = { day, seq: content.seq, hash };
    }
  }
}

test('days written before the change still verify, each from GENESIS, as unanchored', async () => {
  await legacyDay(LEGACY, 3);
  const [legacy] = await verifyAnchoredDays(deps(), [LEGACY]);
  expect(legacy).toEqual({ day: LEGACY, entries: 3, anchor: { status: 'unanchored', anchors: 0 } });
});

test('a day\'s first entry links to the previous day\'s head, across empty days', async () => {
  await appendDay(A, 4);
  const [legacyHead] = (await itemsOf(LEGACY)).slice(-1);
  const [first] = await itemsOf(A);
  expect(first).toMatchObject({ seq: 1, prevDay: LEGACY, prevSeq: 3, prevHash: legacyHead!.hash });
  // The rest of the day links within it.
  expect((await itemsOf(A)).slice(1).every((i) => i.prevDay === undefined)).toBe(true);
});

test('the export writes checkpoints of the open day and the head of every closed day, once', async () => {
  clock.set(new Date(`${A}T11:00:00.000Z`));
  // The first run closes the last seven days (empty ones too, so nobody can fill them in later) and checkpoints today.
  expect((await exportAuditAnchors(deps())).written).toEqual([
    '2020-02-23 closed at entry 0', '2020-02-24 closed at entry 0', '2020-02-25 closed at entry 0', '2020-02-26 closed at entry 0',
    '2020-02-27 closed at entry 0', '2020-02-28 closed at entry 0', '2020-02-29 closed at entry 0', `${A} checkpoint at entry 4`,
  ]);
  clock.set(new Date(`${B}T00:05:00.000Z`));
  // Five minutes after midnight the day is not closed yet: an entry dated 23:59 may still be on its way.
  expect((await exportAuditAnchors(deps())).written).toEqual([]);
  await appendDay(B, 3);
  clock.set(new Date(`${B}T00:20:00.000Z`));
  expect((await exportAuditAnchors(deps())).written).toEqual([`${A} closed at entry 4`, `${B} checkpoint at entry 3`]);
  expect((await exportAuditAnchors(deps())).written).toEqual([]);

  await appendDay(C, 2);
  clock.set(new Date(`${C}T12:00:00.000Z`));
  expect((await exportAuditAnchors(deps())).written).toEqual([`${B} closed at entry 3`, `${C} checkpoint at entry 2`]);
  clock.set(new Date(`${C}T23:00:00.000Z`));
  expect((await exportAuditAnchors(deps())).written).toEqual([]);
  clock.set(new Date('2020-03-04T00:20:00.000Z'));
  expect((await exportAuditAnchors(deps())).written).toEqual([`${C} closed at entry 2`]);

  // Write-once: another anchor under a taken name is refused, and the file is as first written.
  const file = join(auditAnchorDirectory(dataDir), A, 'closed.json');
  const before = readFileSync(file, 'utf8');
  const forged: AuditAnchor = { day: A, seq: 4, hash: 'f'.repeat(64), closed: true, at: clock.now().toISOString() };
  await expect(anchors.write(forged)).resolves.toBe('exists');
  expect(readFileSync(file, 'utf8')).toBe(before);
  expect(readdirSync(join(auditAnchorDirectory(dataDir), A)).sort()).toEqual(['closed.json', 'seq-0000000004.json']);
});

test('verify-audit: the whole history verifies; days before the first anchor are unanchored', async () => {
  const run = await verifyAudit('--from', LEGACY, '--to', C);
  expect(run).toMatchObject({ code: 0, stderr: '' });
  const report = JSON.parse(run.stdout) as { ok: boolean; days: { day: string; entries: number; anchor: { status: string } }[] };
  expect(report.ok).toBe(true);
  const byDay = new Map(report.days.map((d) => [d.day, d]));
  expect(byDay.get(LEGACY)).toEqual({ day: LEGACY, entries: 3, anchor: { status: 'unanchored', anchors: 0 } });
  expect(byDay.get('2020-02-26')).toEqual({ day: '2020-02-26', entries: 0, anchor: { status: 'matches', anchors: 1 } });
  expect(byDay.get(A)).toEqual({ day: A, entries: 4, anchor: { status: 'matches', anchors: 2 } });
  expect(byDay.get(B)).toEqual({ day: B, entries: 3, anchor: { status: 'matches', anchors: 2 } });
  expect(byDay.get(C)).toEqual({ day: C, entries: 2, anchor: { status: 'matches', anchors: 2 } });
  // A closed day after anchoring began whose close the export never wrote (it did not run): missing.
  clock.set(new Date('2020-03-07T00:00:00.000Z'));
  const [unexported] = await verifyAnchoredDays(deps(), ['2020-03-05']);
  expect(unexported).toEqual({ day: '2020-03-05', entries: 0, anchor: { status: 'missing', anchors: 0, problem: 'no anchor of 2020-03-05: the export job has not closed it' } });
});

test('two whole days rewritten consistently in the table: every chain verifies, the anchors disagree, verify-audit exits 1', async () => {
  await rewriteConsistently([B, C]);
  // Without anchors the rewrite is invisible: every chain and every link is whole.
  const unanchored = { ...deps(), anchors: { write: async () => 'exists' as const, ofDay: async () => [], firstDay: async () => undefined } };
  expect((await verifyAnchoredDays(unanchored, [A, B, C])).filter((d) => d.break)).toEqual([]);
  expect((await itemsOf(B)).every((i) => i.actor === 'operator:mallory')).toBe(true);

  const run = await verifyAudit(B);
  expect(run).toMatchObject({ code: 1, stdout: '' });
  const [report, sentence] = run.stderr.replace(/^merchant: /, '').trimEnd().split(/\n(?=audit anchor)/);
  expect(JSON.parse(report!)).toEqual({ ok: false, days: [{ day: B, entries: 3, anchor: { status: 'differs', anchors: 2, problem: expect.stringMatching(/^entry 3 of 2020-03-02: anchored hash [0-9a-f]{64}, the table's [0-9a-f]{64}$/) } }] });
  expect(sentence).toMatch(/^audit anchor differs on 2020-03-02: entry 3 of 2020-03-02: anchored hash/);
  const [c] = await verifyAnchoredDays(deps(), [C]);
  expect(c!.anchor).toMatchObject({ status: 'differs', problem: expect.stringContaining('entry 2 of 2020-03-03') });
});

test('a rewrite of one day alone breaks the next day\'s link; entries slipped into a closed empty day disagree with its anchor', async () => {
  await rewriteConsistently([A]);
  const [b] = await verifyAnchoredDays(deps(), [B]);
  expect(b!.break).toMatchObject({ seq: 1, problem: 'day-link' });
  await legacyDay('2020-02-26', 2);
  const [filled] = await verifyAnchoredDays(deps(), ['2020-02-26']);
  expect(filled!.anchor).toEqual({ status: 'differs', anchors: 1, problem: 'the anchor of 2020-02-26 says it had no entries; the table holds 2' });
});
