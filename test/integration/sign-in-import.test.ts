import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../lambdas/ports/clock';
import { createCognitoSignIns } from '../../lambdas/adapters/cognito/sign-ins';
import { verifyAuditDays } from '../../lambdas/use-cases/admin/audit';
import { importSignIns, signInEntryId } from '../../lambdas/use-cases/import-sign-ins';
import { serviceForFile } from '../support/suites';

/**
 * The operators' sign-ins on Cognito's pages reach the audit log (ADR 0019): the real SDK client
 * against a stand-in for Cognito's API over HTTP (ListUsers and AdminListUserAuthEvents, in pages,
 * newest first, as Cognito answers), the real audit log on the local engine. Every sign-in is
 * appended once, whatever the number of runs, the day's chain still verifies, and nothing typed
 * reaches an entry.
 */
const DAY = '2030-09-10';
const clock = new ManualClock(`${DAY}T12:00:00.000Z`);
const { service } = serviceForFile({ clock });

type Event = Record<string, unknown>;
const minutesAgo = (m: number) => (clock.now().getTime() - m * 60_000) / 1000;
const event = (id: string, minutes: number, response: 'Pass' | 'Fail' | 'InProgress', extra: Event = {}): Event => ({
  EventId: id,
  EventType: 'SignIn',
  CreationDate: minutesAgo(minutes),
  EventResponse: response,
  EventContextData: { IpAddress: '203.0.113.7', City: 'Lisbon', Country: 'Portugal' },
  ...extra,
});

/** Newest first, as Cognito lists them. */
const events: Record<string, Event[]> = {
  alice: [
    event('a-3', 2, 'InProgress', { ChallengeResponses: [{ ChallengeName: 'Password', ChallengeResponse: 'Success' }] }),
    event('a-2', 30, 'Pass', { ChallengeResponses: [{ ChallengeName: 'Password', ChallengeResponse: 'Success' }, { ChallengeName: 'Mfa', ChallengeResponse: 'Success' }] }),
    { EventId: 'a-pw', EventType: 'PasswordChange', CreationDate: minutesAgo(40), EventResponse: 'Pass' },
    event('a-1', 50, 'Fail', { ChallengeResponses: [{ ChallengeName: 'Password', ChallengeResponse: 'Success' }, { ChallengeName: 'Mfa', ChallengeResponse: 'Failure' }] }),
    event('a-old', 60 * 30, 'Pass'),
  ],
  bob: [
    event('b-2', 10, 'Fail', { EventRisk: { RiskDecision: 'Block', RiskLevel: 'High', CompromisedCredentialsDetected: true } }),
    event('b-1', 20, 'Fail', { ChallengeResponses: [{ ChallengeName: 'Password', ChallengeResponse: 'Failure' }] }),
  ],
  carol: [],
};
const calls: string[] = [];
let server: Server;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
      const input = JSON.parse(body || '{}') as { UserPoolId?: string; Username?: string; NextToken?: string; PaginationToken?: string; MaxResults?: number };
      calls.push([target, input.Username, input.NextToken ?? input.PaginationToken].filter(Boolean).join(' '));
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(json));
      };
      if (input.UserPoolId !== 'eu-west-1_TestPool') return answer(400, { __type: 'ResourceNotFoundException', message: 'User pool does not exist.' });
      if (target === 'ListUsers') {
        // Two pages of users.
        return input.PaginationToken ? answer(200, { Users: [{ Username: 'carol' }] }) : answer(200, { Users: [{ Username: 'alice' }, { Username: 'bob' }], PaginationToken: 'users-2' });
      }
      if (target === 'AdminListUserAuthEvents') {
        // Pages of two events.
        const all = events[input.Username ?? ''] ?? [];
        const start = Number(input.NextToken ?? 0);
        const next = start + 2 < all.length ? String(start + 2) : undefined;
        return answer(200, { AuthEvents: all.slice(start, start + 2), ...(next ? { NextToken: next } : {}) });
      }
      return answer(400, { __type: 'InvalidParameterException', message: `unexpected ${target}` });
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  delete process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER;
  await new Promise<void>((done) => server.close(() => done()));
});

it('appends each sign-in of the last day once, oldest first, to today\'s chain, and a second run appends none', async () => {
  const signIns = createCognitoSignIns('eu-west-1_TestPool');
  const first = await importSignIns({ signIns, audit: service.deps.audit, clock });
  // a-3 waits for its second factor; a-old is older than the window; the password change is no sign-in.
  expect(first).toEqual({ seen: 5, imported: 4, known: 0, waiting: 1 });
  // Users in two pages; alice's events in pages of two, read until the first older than the window.
  expect(calls).toEqual(['ListUsers', 'ListUsers users-2', 'AdminListUserAuthEvents alice', 'AdminListUserAuthEvents alice 2', 'AdminListUserAuthEvents alice 4', 'AdminListUserAuthEvents bob', 'AdminListUserAuthEvents carol']);

  const chain = await service.deps.audit.day(DAY);
  expect(chain.map((e) => [e.id, e.actor, e.action, e.target, e.outcome, e.at])).toEqual([
    [signInEntryId('a-1'), 'alice', 'operator.sign-in', 'operator:alice', 'refused', `${DAY}T12:00:00.000Z`],
    [signInEntryId('a-2'), 'alice', 'operator.sign-in', 'operator:alice', 'done', `${DAY}T12:00:00.000Z`],
    [signInEntryId('b-1'), 'bob', 'operator.sign-in', 'operator:bob', 'refused', `${DAY}T12:00:00.000Z`],
    [signInEntryId('b-2'), 'bob', 'operator.sign-in', 'operator:bob', 'refused', `${DAY}T12:00:00.000Z`],
  ]);
  expect(chain.map((e) => e.detail)).toEqual([
    `wrong authenticator code at ${DAY} 11:10:00 UTC from 203.0.113.7 (Lisbon, Portugal)`,
    `signed in on the sign-in pages at ${DAY} 11:30:00 UTC from 203.0.113.7 (Lisbon, Portugal)`,
    `wrong password at ${DAY} 11:40:00 UTC from 203.0.113.7 (Lisbon, Portugal)`,
    `refused by threat protection at ${DAY} 11:50:00 UTC from 203.0.113.7 (Lisbon, Portugal); the password is known to be compromised`,
  ]);

  clock.advance(5 * 60_000);
  const second = await importSignIns({ signIns, audit: service.deps.audit, clock });
  expect(second).toEqual({ seen: 5, imported: 0, known: 4, waiting: 1 });

  // The sign-in left at its second factor is recorded once it has had its time.
  clock.advance(10 * 60_000);
  const third = await importSignIns({ signIns, audit: service.deps.audit, clock });
  expect(third).toEqual({ seen: 5, imported: 1, known: 4, waiting: 0 });
  const last = (await service.deps.audit.day(DAY)).at(-1)!;
  expect([last.id, last.outcome, last.detail]).toEqual([signInEntryId('a-3'), 'refused', `password right, authenticator code never given at ${DAY} 11:58:00 UTC from 203.0.113.7 (Lisbon, Portugal)`]);
  await expect(verifyAuditDays(service.deps, [DAY])).resolves.toEqual([{ day: DAY, entries: 5 }]);
});

it('a new operator\'s sign-ins are found on the users\' next page, and runs one after another append nothing twice', async () => {
  const day = '2030-09-11';
  clock.set(new Date(`${day}T08:00:00.000Z`));
  events.carol = Array.from({ length: 5 }, (_, i) => event(`c-${i}`, 5 + i, i % 2 ? 'Pass' : 'Fail', { ChallengeResponses: [{ ChallengeName: 'Password', ChallengeResponse: i % 2 ? 'Success' : 'Failure' }] }));
  const signIns = createCognitoSignIns('eu-west-1_TestPool');
  // (The job never runs beside itself: its function's reserved concurrency is 1, lib/constructs/sign-in-import.ts.)
  const reports = [];
  for (let run = 0; run < 3; run++) reports.push(await importSignIns({ signIns, audit: service.deps.audit, clock }));
  const chain = await service.deps.audit.day(day);
  expect(reports.map((r) => r.imported)).toEqual([5, 0, 0]);
  expect(chain.map((e) => e.id)).toEqual(['c-4', 'c-3', 'c-2', 'c-1', 'c-0'].map(signInEntryId));
  expect(chain.map((e) => e.outcome)).toEqual(['refused', 'done', 'refused', 'done', 'refused']);
  await expect(verifyAuditDays(service.deps, [day])).resolves.toEqual([{ day, entries: 5 }]);
});

it('a pool that is not there fails the run (the job\'s errors alarm), appending nothing', async () => {
  const day = '2030-09-12';
  clock.set(new Date(`${day}T08:00:00.000Z`));
  await expect(importSignIns({ signIns: createCognitoSignIns('eu-west-1_Other'), audit: service.deps.audit, clock })).rejects.toThrow('User pool does not exist.');
  expect(await service.deps.audit.day(day)).toEqual([]);
});
