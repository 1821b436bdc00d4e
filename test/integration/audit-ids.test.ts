import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { AUDIT_CLAIM_MS, DynamoAuditLog } from '../../lambdas/adapters/dynamodb/audit-log';
import { firstBreak } from '../../lambdas/domain/audit-chain';
import type { AuditEntry } from '../../lambdas/ports/operators';
import { serviceForFile } from '../support/suites';
import { soakCount } from '../support/soak';

/**
 * An audit entry id is appended once, whatever happens around it: appends of one id at once (two
 * sign-in imports, a retried request), and a writer that dies between any two of its writes (after
 * claiming the id, after appending the entry) and is retried later. Real engine, real SDK.
 */
const { service } = serviceForFile();
const table = () => service.deps.config.TABLE_NAME;

/** The writer dies right before the first write `dies` picks: that write and all after it never happen. */
function dyingAt(db: DynamoDBDocumentClient, dies: (input: { Item?: Record<string, unknown> }) => boolean): DynamoDBDocumentClient {
  let dead = false;
  return {
    send: (command: { input: { Item?: Record<string, unknown> } }) => {
      if (dead || (command.constructor.name === 'PutCommand' && dies(command.input))) {
        dead = true;
        return Promise.reject(Object.assign(new Error('the writer died'), { name: 'WriterDied' }));
      }
      return db.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
}

const isChainPut = (i: { Item?: Record<string, unknown> }) => String(i.Item?.pk).startsWith('AUDIT#');
const isIdMark = (i: { Item?: Record<string, unknown> }) => String(i.Item?.pk).startsWith('AUDITID#') && i.Item?.seq !== undefined;

const entry = (id: string, day: string, n = 0): AuditEntry => ({
  id,
  at: `${day}T10:00:${String(n % 60).padStart(2, '0')}.000Z`,
  actor: 'job:ImportSignIns',
  action: 'operator.sign-in',
  target: 'operator:alice',
  targetKind: 'operator',
  outcome: 'done',
  detail: `sign-in ${id}`,
});

async function idRecord(id: string) {
  return (await service.deps.db.send(new GetCommand({ TableName: table(), Key: { pk: `AUDITID#${id}`, sk: 'AUDITID' }, ConsistentRead: true }))).Item;
}

const refusedAsKnown = expect.objectContaining({ name: 'ConditionalCheckFailedException' });

it('thirty appends of one id at once: one is appended, 29 are refused as known, the chain stays whole', async () => {
  const day = '2031-03-01';
  const log = new DynamoAuditLog(service.deps.db, table());
  const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => log.append(entry('evt-same', day, i))));
  expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  for (const r of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) expect(r.reason).toEqual(refusedAsKnown);
  const chain = await log.day(day);
  expect(chain.filter((e) => e.id === 'evt-same')).toHaveLength(1);
  expect(firstBreak(chain)).toBeUndefined();
  expect(await idRecord('evt-same')).toMatchObject({ day, seq: chain[0]!.seq });
});

it('a writer that died after claiming the id: refused while its claim holds, appended once after it ran out', async () => {
  const day = '2031-03-02';
  let now = Date.parse(`${day}T10:00:00Z`);
  const clock = () => now;
  await expect(new DynamoAuditLog(dyingAt(service.deps.db, isChainPut), table(), clock).append(entry('evt-claimed', day))).rejects.toThrow('the writer died');
  const log = new DynamoAuditLog(service.deps.db, table(), clock);
  // Its claim still holds: the writer may be alive and about to append it.
  await expect(log.append(entry('evt-claimed', day))).rejects.toEqual(refusedAsKnown);
  expect(await log.day(day)).toEqual([]);
  now += AUDIT_CLAIM_MS + 1;
  await log.append(entry('evt-claimed', day));
  const chain = await log.day(day);
  expect(chain.map((e) => e.id)).toEqual(['evt-claimed']);
  expect(await idRecord('evt-claimed')).toMatchObject({ day, seq: 1 });
  await expect(log.append(entry('evt-claimed', day))).rejects.toEqual(refusedAsKnown);
});

it('a writer that died after appending, before marking the id: the next append finds it in the chain and marks it', async () => {
  const day = '2031-03-03';
  let now = Date.parse(`${day}T10:00:00Z`);
  const clock = () => now;
  await expect(new DynamoAuditLog(dyingAt(service.deps.db, isIdMark), table(), clock).append(entry('evt-appended', day))).rejects.toThrow('the writer died');
  const log = new DynamoAuditLog(service.deps.db, table(), clock);
  expect((await log.day(day)).map((e) => e.id)).toEqual(['evt-appended']);
  expect((await idRecord('evt-appended'))?.seq).toBeUndefined();
  now += AUDIT_CLAIM_MS + 1;
  // A retry on a later day (the import appends to today's chain) still finds it in the claimed day's chain.
  await expect(log.append(entry('evt-appended', '2031-03-04'))).rejects.toEqual(refusedAsKnown);
  expect((await log.day(day)).map((e) => e.id)).toEqual(['evt-appended']);
  expect(await log.day('2031-03-04')).toEqual([]);
  expect(await idRecord('evt-appended')).toMatchObject({ day, seq: 1 });
});

/** The picked put is carried out and its answer lost: the SDK tries it again, and that try's answer is the caller's. */
function losingAnswerOf(db: DynamoDBDocumentClient, pick: (input: { Item?: Record<string, unknown> }) => boolean): DynamoDBDocumentClient {
  let lost = false;
  return {
    send: async (command: { constructor: { name: string }; input: { Item?: Record<string, unknown> } }) => {
      if (!lost && command.constructor.name === 'PutCommand' && pick(command.input)) {
        lost = true;
        await db.send(command as never);
      }
      return db.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
}

const isIdClaim = (i: { Item?: Record<string, unknown> }) => String(i.Item?.pk).startsWith('AUDITID#') && i.Item?.seq === undefined;
it.each([
  ['the id\'s claim', '2031-04-01', isIdClaim],
  ['the entry', '2031-04-02', isChainPut],
  ['the id\'s mark', '2031-04-03', isIdMark],
])('a put of %s whose answer was lost (the SDK tried again): appended once, marked', async (_, day, pick) => {
  const log = new DynamoAuditLog(losingAnswerOf(service.deps.db, pick), table());
  await log.append(entry(`evt-lost-${day}`, day));
  const chain = await service.deps.audit.day(day);
  expect(chain.map((e) => e.id)).toEqual([`evt-lost-${day}`]);
  expect(firstBreak(chain)).toBeUndefined();
  expect(await idRecord(`evt-lost-${day}`)).toMatchObject({ day, seq: 1 });
});

it('a writer past its claim\'s end stops before appending (another may have taken the id over)', async () => {
  const day = '2031-03-05';
  let now = Date.parse(`${day}T10:00:00Z`);
  // The clock jumps forward between the claim and the append (a paused process).
  const jumping: DynamoDBDocumentClient = {
    send: (command: { constructor: { name: string }; input: { Item?: Record<string, unknown> } }) => {
      if (command.constructor.name === 'QueryCommand') now += AUDIT_CLAIM_MS;
      return service.deps.db.send(command as never);
    },
  } as unknown as DynamoDBDocumentClient;
  await expect(new DynamoAuditLog(jumping, table(), () => now).append(entry('evt-late', day))).rejects.toThrow(/claim of entry evt-late ran out/);
  expect(await service.deps.audit.day(day)).toEqual([]);
});

it('property: appends of a few ids at once, writers dying at any write, retries after their claims ran out — each id once, one unbroken chain', async () => {
  let dayNumber = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ id: fc.integer({ min: 0, max: 4 }), dies: fc.constantFrom('never', 'before-chain', 'before-mark', 'never', 'never') }), { minLength: 1, maxLength: 12 }),
      async (writers) => {
        dayNumber++;
        const day = `2032-01-${String((dayNumber % 28) + 1).padStart(2, '0')}`;
        const run = `r${dayNumber}-`;
        let now = Date.parse(`${day}T09:00:00Z`) + dayNumber * 10 * AUDIT_CLAIM_MS;
        const clock = () => now;
        const outcomes = await Promise.allSettled(
          writers.map((w, n) => {
            const db = w.dies === 'never' ? service.deps.db : dyingAt(service.deps.db, w.dies === 'before-chain' ? isChainPut : isIdMark);
            return new DynamoAuditLog(db, table(), clock).append(entry(`${run}${w.id}`, day, n));
          }),
        );
        for (const o of outcomes) if (o.status === 'rejected') expect(['WriterDied', 'ConditionalCheckFailedException']).toContain((o.reason as Error).name);
        // Every writer that did not finish is retried once its claim could have run out.
        now += AUDIT_CLAIM_MS + 1;
        const log = new DynamoAuditLog(service.deps.db, table(), clock);
        const ids = [...new Set(writers.map((w) => `${run}${w.id}`))];
        for (const id of ids) await log.append(entry(id, day)).catch((e: Error) => expect(e.name).toBe('ConditionalCheckFailedException'));
        const chain = (await log.day(day)).filter((e) => e.id.startsWith(run));
        expect(chain.map((e) => e.id).sort()).toEqual([...ids].sort());
        expect(firstBreak(await log.day(day))).toBeUndefined();
        for (const id of ids) expect(await idRecord(id)).toMatchObject({ day, seq: chain.find((e) => e.id === id)!.seq });
      },
    ),
    { numRuns: soakCount({ fast: 12, soak: 100 }) },
  );
}, 600_000);
