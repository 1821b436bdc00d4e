import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ChainBreak } from '../../lambdas/domain/audit-chain';
import { ManualClock } from '../../lambdas/ports/clock';
import type { AuditEntry } from '../../lambdas/ports/operators';
import { updateMerchantSettings } from '../../lambdas/use-cases/manage-merchants';
import { announceBackend } from '../../local/local-store';
import { adminRequest, operatorToken } from '../support/admin';
import { paidPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';
import { runMerchantCommand } from '../../local/merchant-command';
import { inProcess } from '../support/cli';

/**
 * The audit log end to end, as deployed: operators act through the admin API (the audit writer's
 * own function, its every table call checked against its IAM grant), many at once; the chain stays
 * whole. Then an entry is changed straight in the engine, as someone with table credentials would:
 * the portal's audit API marks the break and `npm run merchant -- verify-audit` exits 1 naming the
 * entry with the expected and found values.
 */
const DAY = '2030-10-07';
const clock = new ManualClock(`${DAY}T09:00:00.000Z`);
const dataDir = mkdtempSync(join(tmpdir(), 'checkout-audit-tamper-'));
let service: TestService;
let withdraw: () => void;
let token: string;

beforeAll(async () => {
  service = await startTestService({ clock });
  withdraw = announceBackend(dataDir, service.backend);
  token = await operatorToken(service.backend.operatorKey, { username: 'olivia', claims: { role: 'admin' } });
});
afterAll(async () => {
  withdraw?.();
  await service?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

type AuditPage = { entries: AuditEntry[]; breaks: { day: string; entries: number; break?: ChainBreak }[] };
const auditPage = () => adminRequest<AuditPage>(service, 'GET', '/admin/api/audit', token);
const verifyAudit = (...args: string[]) => inProcess(runMerchantCommand, { DATA_DIR: dataDir, CHECKOUT_STAGE: undefined })('verify-audit', ...args);
const slots = async () =>
  ((await service.deps.db.send(new QueryCommand({ TableName: service.backend.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `AUDIT#${DAY}` } }))).Items ?? []).sort((a, b) =>
    String(a.sk).localeCompare(String(b.sk)),
  );

test('twelve operators capturing at once through the admin API make one unbroken chain', async () => {
  const shop = await service.createMerchant({ name: 'Audit Shop' });
  await updateMerchantSettings(service.deps, shop.merchant_key, { dms: true });
  const payments = await Promise.all(Array.from({ length: 12 }, () => paidPayment(service, shop, { card: '01/38' })));
  const answers = await Promise.all(payments.map((p) => adminRequest(service, 'POST', `/admin/api/payments/${p.paymentId}/capture`, token, {})));
  expect(answers.map((a) => a.status)).toEqual(payments.map(() => 200));

  expect((await slots()).map((s) => s.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  const page = await auditPage();
  expect(page.status).toBe(200);
  expect(page.json.entries).toHaveLength(12);
  expect(page.json.breaks).toEqual([]);
  const run = await verifyAudit('--day', DAY);
  expect(run).toMatchObject({ code: 0, stderr: '' });
  // The day is still open (no anchor closes it yet): its anchors are pending (test/integration/audit-anchor.test.ts).
  expect(JSON.parse(run.stdout)).toEqual({ ok: true, days: [{ day: DAY, entries: 12, anchor: { status: 'pending', anchors: 0 } }] });
}, 90_000);

test('an entry changed straight in the engine is a break in the portal API and in verify-audit', async () => {
  const [, second] = await slots();
  await service.deps.db.send(new PutCommand({ TableName: service.backend.tableName, Item: { ...second, actor: 'mallory' } }));

  const page = await auditPage();
  expect(page.status).toBe(200);
  expect(page.json.breaks).toEqual([{ day: DAY, entries: 12, break: expect.objectContaining({ seq: 2, id: second!.id, problem: 'hash', found: second!.hash }) }]);

  const run = await verifyAudit('--from', DAY, '--to', DAY);
  expect(run).toMatchObject({ code: 1, stdout: '' });
  // The report, then the first break in a sentence.
  const [report, sentence] = run.stderr.replace(/^merchant: /, '').trimEnd().split(/\n(?=audit chain broken)/);
  expect(JSON.parse(report!)).toMatchObject({ ok: false, days: [{ day: DAY, entries: 12, break: { seq: 2, id: second!.id, problem: 'hash', found: second!.hash } }] });
  expect(sentence).toMatch(new RegExp(`^audit chain broken on ${DAY} at entry 2: hash \\(expected [0-9a-f]{64}, found ${String(second!.hash)}\\)$`));
});
