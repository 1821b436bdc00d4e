import { signInOf } from '../../lambdas/adapters/cognito/sign-ins';
import { ManualClock } from '../../lambdas/ports/clock';
import type { AuditEntry, ProviderSignIn } from '../../lambdas/ports/operators';
import { importSignIns, signInEntry } from '../../lambdas/use-cases/import-sign-ins';

const at = new Date('2030-01-02T03:04:05.000Z');
const now = new Date('2030-01-02T04:00:00.000Z');

describe('a Cognito auth event as a sign-in', () => {
  it('takes sign-ins only, with their id and date', () => {
    expect(signInOf('ann', { EventType: 'PasswordChange', EventId: 'x', CreationDate: at, EventResponse: 'Pass' })).toBeUndefined();
    expect(signInOf('ann', { EventType: 'SignIn', CreationDate: at, EventResponse: 'Pass' })).toBeUndefined();
    expect(signInOf('ann', { EventType: 'SignIn', EventId: 'x', EventResponse: 'Pass' })).toBeUndefined();
    expect(signInOf('ann', { EventType: 'SignIn', EventId: 'x', CreationDate: at, EventResponse: 'Pass' })).toEqual({ eventId: 'x', username: 'ann', at, outcome: 'passed', failedSteps: [] });
  });

  it('names the failed steps, the risk and the place', () => {
    expect(
      signInOf('ann', {
        EventType: 'SignIn',
        EventId: 'y',
        CreationDate: at,
        EventResponse: 'Fail',
        ChallengeResponses: [{ ChallengeName: 'Password', ChallengeResponse: 'Failure' }, { ChallengeName: 'Password', ChallengeResponse: 'Failure' }, { ChallengeName: 'Mfa', ChallengeResponse: 'Success' }],
        EventRisk: { RiskDecision: 'AccountTakeover', RiskLevel: 'Medium' },
        EventContextData: { IpAddress: '198.51.100.1', Country: 'Chile' },
      }),
    ).toEqual({ eventId: 'y', username: 'ann', at, outcome: 'failed', failedSteps: ['password'], risk: { decision: 'AccountTakeover', level: 'Medium' }, ip: '198.51.100.1', place: 'Chile' });
    expect(signInOf('ann', { EventType: 'SignIn', EventId: 'z', CreationDate: at, EventResponse: 'InProgress' })?.outcome).toBe('in-progress');
  });
});

describe('the audit entry of a sign-in', () => {
  const base: ProviderSignIn = { eventId: 'e1', username: 'ann', at, outcome: 'failed', failedSteps: [] };
  it.each<[Partial<ProviderSignIn>, AuditEntry['outcome'], string]>([
    [{ outcome: 'passed' }, 'done', 'signed in on the sign-in pages at 2030-01-02 03:04:05 UTC'],
    [{ failedSteps: ['password'] }, 'refused', 'wrong password at 2030-01-02 03:04:05 UTC'],
    [{ failedSteps: ['password', 'mfa'] }, 'refused', 'wrong authenticator code at 2030-01-02 03:04:05 UTC'],
    [{ risk: { decision: 'Block', level: 'High' } }, 'refused', 'refused by threat protection at 2030-01-02 03:04:05 UTC; risk high'],
    [{ risk: { level: 'Low' } }, 'refused', 'refused by the sign-in pages at 2030-01-02 03:04:05 UTC'],
    [{ outcome: 'in-progress', ip: '2001:db8::1' }, 'refused', 'password right, authenticator code never given at 2030-01-02 03:04:05 UTC from 2001:db8::1'],
  ])('%j is %s: %s', (event, outcome, detail) => {
    expect(signInEntry({ ...base, ...event }, now)).toEqual({ id: 'signin-e1', at: now.toISOString(), actor: 'ann', action: 'operator.sign-in', target: 'operator:ann', targetKind: 'operator', outcome, detail });
  });
});

describe('importing', () => {
  it('asks for the window, appends oldest first and counts what the log already has', async () => {
    const clock = new ManualClock(now);
    const appended: string[] = [];
    let asked: Date | undefined;
    const events: ProviderSignIn[] = [
      { ...{ eventId: 'b', username: 'u', outcome: 'passed', failedSteps: [] }, at: new Date(now.getTime() - 60_000 * 30) },
      { ...{ eventId: 'a', username: 'u', outcome: 'failed', failedSteps: ['password'] }, at: new Date(now.getTime() - 60_000 * 40) },
      { ...{ eventId: 'c', username: 'u', outcome: 'in-progress', failedSteps: [] }, at: new Date(now.getTime() - 60_000 * 14) },
      { ...{ eventId: 'd', username: 'u', outcome: 'in-progress', failedSteps: [] }, at: new Date(now.getTime() - 60_000 * 16) },
    ];
    const audit = {
      append: async (e: AuditEntry) => {
        if (e.id === 'signin-b') throw Object.assign(new Error('exists'), { name: 'ConditionalCheckFailedException' });
        appended.push(e.id);
      },
    };
    const report = await importSignIns({ signIns: { since: async (from) => ((asked = from), events) }, audit: audit as never, clock });
    expect(asked).toEqual(new Date(now.getTime() - 24 * 3600_000));
    expect(appended).toEqual(['signin-a', 'signin-d']);
    expect(report).toEqual({ seen: 4, imported: 2, known: 1, waiting: 1 });
  });

  it('stops at the first append that fails for another reason', async () => {
    const audit = { append: async () => Promise.reject(new Error('throttled')) };
    await expect(importSignIns({ signIns: { since: async () => [{ eventId: 'a', username: 'u', at, outcome: 'passed', failedSteps: [] }] }, audit: audit as never, clock: new ManualClock(now) })).rejects.toThrow('throttled');
  });
});
