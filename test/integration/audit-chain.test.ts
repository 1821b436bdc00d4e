import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { entryHash, firstBreak, GENESIS } from '../../lambdas/domain/audit-chain';
import type { AuditEntry } from '../../lambdas/ports/operators';
import { auditPage, verifyAuditDays } from '../../lambdas/use-cases/admin/audit';
import { ManualClock } from '../../lambdas/ports/clock';
import { serviceForFile } from '../support/suites';
import { captureEntry } from '../support/audit';

/**
 * The audit log is append-only and tamper-evident: each day's entries form a hash chain. Concurrent
 * appends serialize into one chain; an entry is never overwritten; an entry changed, removed or
 * reordered behind the application's back (a direct write) shows as a break in verify-audit and the
 * portal.
 */
const DAY = '2030-07-01';
const clock = new ManualClock(`${DAY}T12:00:00Z`);
const { service } = serviceForFile({ clock });

const entry = (i: number, day = DAY): AuditEntry => captureEntry(`${day}T12:00:${String(i % 60).padStart(2, '0')}.000Z`, i);

async function items(day: string) {
  const out = await service.deps.db.send(new QueryCommand({ TableName: service.deps.config.TABLE_NAME, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `AUDIT#${day}` } }));
  return out.Items ?? [];
}

it('forty concurrent appends make one unbroken chain, 1..40, no entry lost', async () => {
  await Promise.all(Array.from({ length: 40 }, (_, i) => service.deps.audit.append(entry(i))));
  const chain = await service.deps.audit.day(DAY);
  expect(chain.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  expect(chain[0]!.prevHash).toBe(GENESIS);
  expect(firstBreak(chain)).toBeUndefined();
  await expect(verifyAuditDays(service.deps, [DAY])).resolves.toEqual([{ day: DAY, entries: 40 }]);
});

it('an entry changed behind the application\'s back is a break, in verify-audit and on the portal\'s page', async () => {
  const day = '2030-07-02';
  for (let i = 0; i < 5; i++) await service.deps.audit.append(entry(i, day));
  const [, second] = (await items(day)).sort((a, b) => String(a.sk).localeCompare(String(b.sk)));
  await service.deps.db.send(new PutCommand({ TableName: service.deps.config.TABLE_NAME, Item: { ...second, actor: 'operator:mallory' } }));
  const [report] = await verifyAuditDays(service.deps, [day]);
  expect(report!.break).toMatchObject({ seq: 2, problem: 'hash' });
  clock.set(new Date(`${day}T13:00:00Z`));
  const page = await auditPage(service.deps);
  expect(page.breaks).toEqual([expect.objectContaining({ day, break: expect.objectContaining({ seq: 2, problem: 'hash' }) })]);
});

it('a removed entry is a gap; a rewritten one that recomputes its own hash breaks the next link', async () => {
  const day = '2030-07-03';
  for (let i = 0; i < 4; i++) await service.deps.audit.append(entry(i, day));
  const sorted = (await items(day)).sort((a, b) => String(a.sk).localeCompare(String(b.sk)));
  // Rewrite entry 2 consistently with itself: its hash matches, entry 3's link does not.
  const { hash: _h, pk: _pk, sk: _sk, kind: _k, gsi1pk: _g, gsi1sk: _s, ...content } = sorted[1]!;
  const forged = { ...content, actor: 'operator:mallory' } as AuditEntry;
  await service.deps.db.send(new PutCommand({ TableName: service.deps.config.TABLE_NAME, Item: { ...sorted[1], actor: 'operator:mallory', hash: entryHash(forged) } }));
  expect((await verifyAuditDays(service.deps, [day]))[0]!.break).toMatchObject({ seq: 3, problem: 'link' });
  const chain = (await service.deps.audit.day(day)).filter((e) => e.seq !== 2);
  expect(firstBreak(chain)).toMatchObject({ seq: 2, problem: 'gap' });
});

it('an audit slot is written once: a second write of the same entry is refused', async () => {
  const day = '2030-07-04';
  await service.deps.audit.append(entry(1, day));
  const [first] = await items(day);
  await expect(
    service.deps.db.send(new PutCommand({ TableName: service.deps.config.TABLE_NAME, Item: { ...first, actor: 'x' }, ConditionExpression: 'attribute_not_exists(pk)' })),
  ).rejects.toThrow(/conditional/i);
});

it('any single change to any entry of a random chain is found', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 12 }), fc.nat(), fc.constantFrom('actor', 'action', 'outcome', 'at'), fc.string({ minLength: 1, maxLength: 8 }), (length, which, field, value) => {
      const chain: AuditEntry[] = [];
      let prev = GENESIS;
      for (let i = 0; i < length; i++) {
        const e = { ...entry(i), seq: i + 1, prevHash: prev };
        const hash = entryHash(e);
        chain.push({ ...e, hash });
        prev = hash;
      }
      expect(firstBreak(chain)).toBeUndefined();
      const i = which % length;
      const original = chain[i]![field as 'actor'];
      if (original === value) return;
      const tampered = chain.map((e, j) => (j === i ? { ...e, [field]: value } : e));
      expect(firstBreak(tampered)).toMatchObject({ seq: i + 1, problem: 'hash' });
    }),
    { numRuns: 300 },
  );
});
