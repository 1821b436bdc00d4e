import { encodeLinkToken } from '../../lambdas/domain/checkout-link';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { SANDBOX_OTP, SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import type { SandboxLedgerRecord } from '../../lambdas/adapters/sandbox-acquirer/ledger';
import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/ledger-store';
import { SANDBOX_CLOSED_REASONS, SANDBOX_FOLLOW_UP_REASONS as R, SandboxAcquirer } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { parseAmount } from '../../lambdas/domain/money';
import type { AcquirerOutcome, AuthorizeRequest, FollowUpOutcome, FollowUpRequest } from '../../lambdas/ports/acquirer';
import { startLocalBackend } from '../../local/backend';
import { announceBackend } from '../../local/local-store';
import { inProcess } from '../support/cli';
import { runSandboxCommand } from '../../local/sandbox-cli';
import { startTestService, type TestService } from '../support/service';

/**
 * The sandbox acquirer's ledger and money rules, against the real local backend (dynalite over
 * HTTP, the real AWS SDK): every operation kind recorded once per idempotency key, follow-ups that
 * would move money wrongly refused in the same conditional write that changes the balances (also
 * when they race), close and barred keys, and the `npm run sandbox -- ledger` command.
 */
jest.setTimeout(60_000);

const PAN = '4111111111111111';

let service: TestService;
let acquirer: SandboxAcquirer;

beforeAll(async () => {
  service = await startTestService();
  acquirer = new SandboxAcquirer(service.deps.db, service.backend.tableName);
});
afterAll(() => service?.close());

const ledger = (paymentId: string) => sandboxLedger(service.deps.db, service.backend.tableName, paymentId);

type Kind = 'capture' | 'void' | 'refund' | 'reverse';

interface Paid {
  readonly paymentId: string;
  readonly key: string;
  readonly outcome: AcquirerOutcome;
  readonly currency: string;
}

function request(paymentId: string, over: Partial<AuthorizeRequest> & { expiry?: string } = {}): AuthorizeRequest {
  const [month, year] = (over.expiry ?? '01/38').split('/').map(Number) as [number, number];
  return {
    idempotencyKey: `${paymentId}.1`,
    paymentId,
    amountMinor: 2500,
    currency: 'USD',
    capture: true,
    instrument: { kind: 'card', card: { pan: PAN, expMonth: month, expYear: 2000 + year, cvv: '123', holder: 'Jo Doe' } },
    returnUrl: `${service.baseUrl}/auth/token/complete`,
    storeCredential: false,
    attempt: 1,
    ...over,
  };
}

/** An approved authorization of a new payment: a sale (capture) or an auth (DMS). */
async function authorized(over: Partial<AuthorizeRequest> & { expiry?: string } = {}): Promise<Paid> {
  const paymentId = randomUUID();
  const r = request(paymentId, over);
  const outcome = await acquirer.authorize(r);
  return { paymentId, key: r.idempotencyKey, outcome, currency: r.currency };
}

let transCounter = 0;
/** A follow-up on the payment's authorization with a fresh key (`<payment>.<kind>.<n>`). */
function followUp(paid: Paid, kind: Kind, amountMinor: number, key?: string): Promise<FollowUpOutcome> {
  const r: FollowUpRequest = {
    idempotencyKey: key ?? `${paid.paymentId}.${kind === 'reverse' ? 'reversal' : kind}.${++transCounter}`,
    paymentId: paid.paymentId,
    authorization: { idempotencyKey: paid.key, acquirerRef: paid.outcome.acquirerRef },
    amountMinor,
    currency: paid.currency,
  };
  return kind === 'reverse' ? acquirer.reverse(r) : acquirer[kind](r);
}

const minor = (r: SandboxLedgerRecord): number => {
  const parsed = parseAmount(r.amount, r.currency);
  if (typeof parsed === 'string') throw new Error(`unreadable amount ${r.amount} ${r.currency}`);
  return parsed.amountMinor;
};

/**
 * The acquirer-side money rules, checked on the ledger alone: per authorization, at most one capture
 * of at most the authorized amount (of an auth only); refunds together at most what was captured; a
 * void only with nothing refunded, of everything captured; a reversal only with nothing refunded or
 * voided; nothing after a void or reversal; each key once.
 */
function ruleProblems(records: readonly SandboxLedgerRecord[]): string[] {
  const problems: string[] = [];
  const keys = records.map((r) => r.idempotency_key);
  if (new Set(keys).size !== keys.length) problems.push('a key recorded twice');
  const approved = records.filter((r) => r.outcome === 'approved');
  for (const auth of approved.filter((r) => ['sale', 'auth', 'recurring'].includes(r.operation))) {
    const on = approved.filter((r) => r.of === auth.idempotency_key);
    const sum = (op: string) => on.filter((r) => r.operation === op).reduce((n, r) => n + minor(r), 0);
    const count = (op: string) => on.filter((r) => r.operation === op).length;
    const captures = on.filter((r) => r.operation === 'capture');
    if (auth.operation !== 'auth' && captures.length) problems.push(`${auth.idempotency_key}: capture of a ${auth.operation}`);
    if (captures.length > 1) problems.push(`${auth.idempotency_key}: captured ${captures.length} times`);
    if (sum('capture') > minor(auth)) problems.push(`${auth.idempotency_key}: captured more than authorized`);
    const captured = auth.operation === 'auth' ? sum('capture') : minor(auth);
    if (sum('refund') > captured) problems.push(`${auth.idempotency_key}: refunded ${sum('refund')} > captured ${captured}`);
    if (count('void') > 1 || count('reversal') > 1) problems.push(`${auth.idempotency_key}: voided or reversed twice`);
    if (count('void') && (count('refund') || count('reversal'))) problems.push(`${auth.idempotency_key}: void with refunds or a reversal`);
    if (count('void') && sum('void') !== captured) problems.push(`${auth.idempotency_key}: void of ${sum('void')}, captured ${captured}`);
    if (count('void') && captured === 0) problems.push(`${auth.idempotency_key}: void of nothing captured`);
    if (count('reversal') && count('refund')) problems.push(`${auth.idempotency_key}: reversal with refunds`);
    const closing = on.find((r) => r.operation === 'void' || r.operation === 'reversal');
    if (closing && on.some((r) => r.at > closing.at && r.operation !== closing.operation)) problems.push(`${auth.idempotency_key}: money moved after ${closing.operation}`);
  }
  return problems;
}

const record = async (paymentId: string, key: string) => (await ledger(paymentId)).find((r) => r.idempotency_key === key.toLowerCase());

describe('every operation kind in the ledger', () => {
  it('records sale, auth, capture, refund, void, reversal and recurring with amounts in the currency format', async () => {
    const sale = await authorized({ amountMinor: 2500 });
    expect(sale.outcome.kind).toBe('approved');
    await expect(followUp(sale, 'refund', 500)).resolves.toMatchObject({ kind: 'approved' });
    await expect(followUp(sale, 'refund', 2001)).resolves.toEqual(expect.objectContaining({ kind: 'declined', reason: R.refundTooBig }));
    expect((await ledger(sale.paymentId)).map((r) => [r.operation, r.amount, r.currency, r.outcome, r.reason])).toEqual([
      ['sale', '25.00', 'USD', 'approved', undefined],
      ['refund', '5.00', 'USD', 'approved', undefined],
      ['refund', '20.01', 'USD', 'declined', R.refundTooBig],
    ]);

    const dms = await authorized({ amountMinor: 10000, capture: false });
    await expect(followUp(dms, 'capture', 6000)).resolves.toMatchObject({ kind: 'approved' });
    await expect(followUp(dms, 'refund', 1000)).resolves.toMatchObject({ kind: 'approved' });
    const dmsLedger = await ledger(dms.paymentId);
    expect(dmsLedger.map((r) => [r.operation, r.amount, r.outcome, r.of])).toEqual([
      ['auth', '100.00', 'approved', undefined],
      ['capture', '60.00', 'approved', dms.key],
      ['refund', '10.00', 'approved', dms.key],
    ]);

    const voided = await authorized({ amountMinor: 4200, currency: 'EUR' });
    // A void gives back everything captured, whatever amount it names.
    await expect(followUp(voided, 'void', 1)).resolves.toMatchObject({ kind: 'approved' });
    expect((await ledger(voided.paymentId)).map((r) => [r.operation, r.amount, r.currency, r.outcome])).toEqual([
      ['sale', '42.00', 'EUR', 'approved'],
      ['void', '42.00', 'EUR', 'approved'],
    ]);

    const released = await authorized({ amountMinor: 1000, currency: 'JPY', capture: false });
    await expect(followUp(released, 'reverse', 1000)).resolves.toMatchObject({ kind: 'approved' });
    expect((await ledger(released.paymentId)).map((r) => [r.operation, r.amount, r.currency, r.outcome])).toEqual([
      ['auth', '1000', 'JPY', 'approved'],
      ['reversal', '1000', 'JPY', 'approved'],
    ]);

    // A recurring charge on the credential stored by a first payment.
    const first = await authorized({ storeCredential: true });
    const credential = first.outcome.kind === 'approved' ? first.outcome.storedCredentialRef : undefined;
    expect(credential).toMatch(/^sbxcred_/);
    const stored = { kind: 'stored' as const, storedCredentialRef: credential ?? '', summary: { mask: '411111****1111', brand: 'visa' as const, expMonth: 1, expYear: 2038 } };
    const charge = await authorized({ instrument: stored, recurring: true, amountMinor: 1000 });
    const hard = await authorized({ instrument: stored, recurring: true, amountMinor: 1051 });
    const soft = await authorized({ instrument: stored, recurring: true, amountMinor: 1052 });
    expect(charge.outcome.kind).toBe('approved');
    expect(hard.outcome).toMatchObject({ kind: 'declined', reason: SANDBOX_REASONS.recurringDeclined });
    expect(soft.outcome).toMatchObject({ kind: 'declined', reason: SANDBOX_REASONS.softDeclined, soft: true });
    const retried = await acquirer.authorize(request(soft.paymentId, { idempotencyKey: `${soft.paymentId}.2`, instrument: stored, recurring: true, amountMinor: 1052, attempt: 2 }));
    expect(retried.kind).toBe('approved');
    expect((await ledger(soft.paymentId)).map((r) => [r.operation, r.amount, r.outcome, r.reason])).toEqual([
      ['recurring', '10.52', 'declined', SANDBOX_REASONS.softDeclined],
      ['recurring', '10.52', 'approved', undefined],
    ]);
    expect((await ledger(charge.paymentId)).map((r) => [r.operation, r.amount, r.outcome])).toEqual([['recurring', '10.00', 'approved']]);

    const declined = await authorized({ expiry: '02/38' });
    expect(await ledger(declined.paymentId)).toEqual([
      expect.objectContaining({ operation: 'sale', outcome: 'declined', reason: SANDBOX_REASONS.declined, card: { mask: '411111****1111', expiry: '02/38' } }),
    ]);
    const challenged = await authorized({ expiry: '05/38' });
    expect(challenged.outcome).toMatchObject({ kind: 'action', flow: '3ds' });
    // The page's own unguessable key: the attempt's key and 128 random bits.
    expect((challenged.outcome as { url: string }).url).toMatch(new RegExp(`^${service.baseUrl}/sandbox/challenge/${challenged.key}\\.[A-Za-z0-9_-]{22}$`));
    expect(await ledger(challenged.paymentId)).toEqual([expect.objectContaining({ operation: 'sale', outcome: 'pending' })]);

    for (const p of [sale, dms, voided, released, charge, soft]) expect(ruleProblems(await ledger(p.paymentId))).toEqual([]);
  });

  it('returns the documented record shape, oldest first, and [] for a payment it never saw', async () => {
    const sale = await authorized();
    await followUp(sale, 'refund', 100);
    const records = await ledger(sale.paymentId);
    for (const r of records) {
      expect(r).toEqual({
        operation: expect.any(String),
        amount: expect.stringMatching(/^\d+\.\d{2}$/),
        currency: 'USD',
        outcome: 'approved',
        idempotency_key: expect.any(String),
        acquirer_ref: expect.stringMatching(/^sbx_[0-9a-f]{32}$/),
        at: expect.any(String),
        card: { mask: '411111****1111', expiry: '01/38' },
        ...(r.operation === 'refund' ? { of: sale.key } : {}),
      });
    }
    expect(records[0]!.at <= records[1]!.at).toBe(true);
    expect(await ledger(randomUUID())).toEqual([]);
  });

  it('keeps no card number or security code, only the mask and expiry', async () => {
    const sale = await authorized({ storeCredential: true });
    const items = (await service.tableItems()).filter((i) => String(i.pk).startsWith('SANDBOX'));
    expect(items.length).toBeGreaterThan(0);
    const text = JSON.stringify(items);
    expect(text).not.toContain(PAN);
    expect(text).not.toMatch(/"cvv"|"pan"/);
    const item = await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: { pk: `SANDBOX#${sale.paymentId}`, sk: 'LEDGER' } }));
    expect(Object.keys(item.Item?.entries ?? {})).toEqual([sale.key]);
  });
});

describe('idempotency', () => {
  it('answers a replay with the same key, in any letter case, with the first answer and records it once', async () => {
    const paymentId = randomUUID();
    const first = await acquirer.authorize(request(paymentId, { amountMinor: 3000 }));
    const again = await acquirer.authorize(request(paymentId, { idempotencyKey: `${paymentId}.1`.toUpperCase(), amountMinor: 9999, expiry: '02/38' }));
    expect(again).toEqual(first);
    const paid: Paid = { paymentId, key: `${paymentId}.1`, outcome: first, currency: 'USD' };
    const key = `${paymentId}.refund.${randomUUID()}`;
    const refund = await followUp(paid, 'refund', 1000, key);
    await expect(followUp(paid, 'refund', 2000, key.toUpperCase())).resolves.toEqual(refund);
    // Asked as a different operation with the same key: still the first answer.
    await expect(followUp(paid, 'void', 3000, key)).resolves.toEqual(refund);
    await expect(acquirer.lookup({ paymentId: paymentId.toUpperCase(), idempotencyKey: key.toUpperCase() })).resolves.toEqual(refund);
    expect((await ledger(paymentId)).map((r) => [r.operation, r.amount, r.idempotency_key])).toEqual([
      ['sale', '30.00', `${paymentId}.1`],
      ['refund', '10.00', key],
    ]);
  });

  it('records one authorization when 20 requests with one key (mixed case) race', async () => {
    const paymentId = randomUUID();
    const keys = Array.from({ length: 20 }, (_, i) => (i % 2 ? `${paymentId}.1`.toUpperCase() : `${paymentId}.1`));
    const answers = await Promise.all(keys.map((idempotencyKey) => acquirer.authorize(request(paymentId, { idempotencyKey }))));
    expect(new Set(answers.map((a) => a.acquirerRef)).size).toBe(1);
    expect(await ledger(paymentId)).toHaveLength(1);
  });

  it('records one refund when 10 requests with one key race', async () => {
    const sale = await authorized({ amountMinor: 1000 });
    const key = `${sale.paymentId}.refund.${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => followUp(sale, 'refund', 600, i % 2 ? key.toUpperCase() : key)));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]!.kind).toBe('approved');
    expect((await ledger(sale.paymentId)).filter((r) => r.operation === 'refund')).toHaveLength(1);
  });
});

describe('money rules under concurrency', () => {
  it('approves only the refunds that fit when 10 race over the captured amount', async () => {
    const sale = await authorized({ amountMinor: 10000 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => followUp(sale, 'refund', 1500)));
    expect(answers.filter((a) => a.kind === 'approved')).toHaveLength(6);
    expect(answers.filter((a) => a.kind === 'declined').map((a) => a.kind === 'declined' && a.reason)).toEqual(Array(4).fill(R.refundTooBig));
    const records = await ledger(sale.paymentId);
    expect(records.filter((r) => r.operation === 'refund' && r.outcome === 'approved').reduce((n, r) => n + minor(r), 0)).toBe(9000);
    expect(ruleProblems(records)).toEqual([]);
  });

  it('refunds of mixed sizes racing never exceed what was captured (DMS capture included)', async () => {
    const dms = await authorized({ amountMinor: 5000, capture: false });
    await expect(followUp(dms, 'capture', 4000)).resolves.toMatchObject({ kind: 'approved' });
    const amounts = [700, 1300, 2500, 100, 999, 1, 3000, 450, 1200, 800, 2200, 50];
    await Promise.all(amounts.map((a) => followUp(dms, 'refund', a)));
    const records = await ledger(dms.paymentId);
    const refunded = records.filter((r) => r.operation === 'refund' && r.outcome === 'approved').reduce((n, r) => n + minor(r), 0);
    expect(refunded).toBeLessThanOrEqual(4000);
    expect(ruleProblems(records)).toEqual([]);
  });

  it('lets either a void or refunds pass when they race, never both', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const sale = await authorized({ amountMinor: 5000 });
        const [voided, ...refunds] = await Promise.all([followUp(sale, 'void', 5000), ...Array.from({ length: 4 }, () => followUp(sale, 'refund', 1000))]);
        const records = await ledger(sale.paymentId);
        expect(ruleProblems(records)).toEqual([]);
        const refunded = refunds.filter((r) => r.kind === 'approved').length;
        expect(voided!.kind === 'approved' ? refunded : 0).toBe(0);
        if (voided!.kind === 'declined') expect(voided!.reason).toBe(R.refunded);
        return voided!.kind;
      }),
    );
    expect(outcomes.every((k) => k === 'approved' || k === 'declined')).toBe(true);
  });

  it('captures an authorization once when captures and a release race', async () => {
    for (let round = 0; round < 4; round++) {
      const dms = await authorized({ amountMinor: 8000, capture: false });
      const answers = await Promise.all([followUp(dms, 'capture', 8000), followUp(dms, 'capture', 5000), followUp(dms, 'reverse', 8000), followUp(dms, 'capture', 100)]);
      expect(answers.filter((a) => a.kind === 'approved')).toHaveLength(1);
      expect(ruleProblems(await ledger(dms.paymentId))).toEqual([]);
    }
  });

  it('voids and reversals racing on one sale: exactly one of them', async () => {
    const sale = await authorized({ amountMinor: 3000 });
    const answers = await Promise.all([...Array.from({ length: 5 }, () => followUp(sale, 'void', 3000)), ...Array.from({ length: 5 }, () => followUp(sale, 'reverse', 3000))]);
    expect(answers.filter((a) => a.kind === 'approved')).toHaveLength(1);
    expect(ruleProblems(await ledger(sale.paymentId))).toEqual([]);
  });
});

describe('money rules, one at a time', () => {
  it('refuses follow-ups that would move money wrongly, with a reason', async () => {
    const sale = await authorized({ amountMinor: 2000 });
    await expect(followUp(sale, 'capture', 2000)).resolves.toMatchObject({ kind: 'declined', reason: R.capturedAtAuthorization });

    const dms = await authorized({ amountMinor: 2000, capture: false });
    await expect(followUp(dms, 'void', 2000)).resolves.toMatchObject({ kind: 'declined', reason: R.notCaptured });
    await expect(followUp(dms, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: R.notCaptured });
    await expect(followUp(dms, 'capture', 2001)).resolves.toMatchObject({ kind: 'declined', reason: R.captureTooBig });
    await expect(followUp(dms, 'capture', 0)).resolves.toMatchObject({ kind: 'declined', reason: R.invalidAmount });
    await expect(followUp(dms, 'capture', 1500)).resolves.toMatchObject({ kind: 'approved' });
    await expect(followUp(dms, 'capture', 500)).resolves.toMatchObject({ kind: 'declined', reason: R.alreadyCaptured });
    await expect(followUp(dms, 'reverse', 2000)).resolves.toMatchObject({ kind: 'declined', reason: R.alreadyCaptured });
    await expect(followUp(dms, 'refund', 1501)).resolves.toMatchObject({ kind: 'declined', reason: R.refundTooBig });
    await expect(followUp(dms, 'void', 1500)).resolves.toMatchObject({ kind: 'approved' });
    await expect(followUp(dms, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: R.voided });
    await expect(followUp(dms, 'void', 1500)).resolves.toMatchObject({ kind: 'declined', reason: R.voided });
    expect((await ledger(dms.paymentId)).filter((r) => r.operation === 'void' && r.outcome === 'approved').map((r) => r.amount)).toEqual(['15.00']);

    const refunded = await authorized({ amountMinor: 2000 });
    await expect(followUp(refunded, 'refund', 100)).resolves.toMatchObject({ kind: 'approved' });
    await expect(followUp(refunded, 'void', 2000)).resolves.toMatchObject({ kind: 'declined', reason: R.refunded });

    const other: Paid = { ...sale, outcome: { kind: 'approved', acquirerRef: 'sbx_not_this_one' } };
    await expect(followUp(other, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: R.unknownAuthorization });
    await expect(followUp({ ...sale, currency: 'EUR' }, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: R.currencyMismatch });
    const declined = await authorized({ expiry: '02/38' });
    await expect(followUp(declined, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: R.notApproved });

    for (const p of [sale, dms, refunded]) expect(ruleProblems(await ledger(p.paymentId))).toEqual([]);
  });

  it('keeps the test cards that decline a capture (03/38), a void (04/38) and a refund (07/38)', async () => {
    const capture = await authorized({ expiry: '03/38', capture: false });
    await expect(followUp(capture, 'capture', 2500)).resolves.toMatchObject({ kind: 'declined', reason: SANDBOX_REASONS.captureDeclined });
    await expect(followUp(capture, 'reverse', 2500)).resolves.toMatchObject({ kind: 'approved' });
    const voided = await authorized({ expiry: '04/38' });
    await expect(followUp(voided, 'void', 2500)).resolves.toMatchObject({ kind: 'declined', reason: SANDBOX_REASONS.voidDeclined });
    await expect(followUp(voided, 'refund', 2500)).resolves.toMatchObject({ kind: 'approved' });
    const refund = await authorized({ expiry: '07/38' });
    await expect(followUp(refund, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: SANDBOX_REASONS.refundDeclined });
    await expect(followUp(refund, 'void', 2500)).resolves.toMatchObject({ kind: 'approved' });
  });

  it('reverses an auth (release) and a whole sale, and refuses what comes after', async () => {
    const dms = await authorized({ amountMinor: 4000, capture: false });
    await expect(followUp(dms, 'reverse', 4000)).resolves.toMatchObject({ kind: 'approved' });
    await expect(followUp(dms, 'capture', 4000)).resolves.toMatchObject({ kind: 'declined', reason: R.released });
    await expect(followUp(dms, 'reverse', 4000)).resolves.toMatchObject({ kind: 'declined', reason: R.released });
    expect((await ledger(dms.paymentId)).map((r) => [r.operation, r.amount, r.outcome])).toEqual([
      ['auth', '40.00', 'approved'],
      ['reversal', '40.00', 'approved'],
      ['capture', '40.00', 'declined'],
      ['reversal', '40.00', 'declined'],
    ]);

    const sale = await authorized({ amountMinor: 3000 });
    await expect(followUp(sale, 'reverse', 3000)).resolves.toMatchObject({ kind: 'approved' });
    await expect(followUp(sale, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: R.reversed });
    await expect(followUp(sale, 'void', 3000)).resolves.toMatchObject({ kind: 'declined', reason: R.reversed });

    const refunded = await authorized({ amountMinor: 3000 });
    await followUp(refunded, 'refund', 100);
    await expect(followUp(refunded, 'reverse', 3000)).resolves.toMatchObject({ kind: 'declined', reason: R.refunded });
    const voided = await authorized({ amountMinor: 3000 });
    await followUp(voided, 'void', 3000);
    await expect(followUp(voided, 'reverse', 3000)).resolves.toMatchObject({ kind: 'declined', reason: R.voided });

    for (const p of [dms, sale, refunded, voided]) expect(ruleProblems(await ledger(p.paymentId))).toEqual([]);
  });
});

describe('challenges, lookup and close', () => {
  /** The page's own key, as the acquirer's answer names it. */
  const keyOf = (c: { outcome: unknown }) => new URL((c.outcome as { url: string }).url).pathname.split('/').pop()!;
  const page = (c: { outcome: unknown }, query = '') => service.request({ method: 'GET', path: `/sandbox/challenge/${keyOf(c)}${query}` });
  const answerPage = (c: { outcome: unknown }, form: Record<string, string>) =>
    service.request({ method: 'POST', path: `/sandbox/challenge/${keyOf(c)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  const backTo = (paymentId: string) => `/auth/${encodeLinkToken(paymentId, Buffer.alloc(18, 7))}/complete`;

  it('approves a 3-D Secure challenge answered with the code; completeAction and lookup give the answer', async () => {
    const challenged = await authorized({ expiry: '05/38', capture: false });
    const ref = { paymentId: challenged.paymentId, idempotencyKey: challenged.key };
    await expect(acquirer.completeAction(ref)).resolves.toMatchObject({ kind: 'action', flow: '3ds' });
    const shown = await page(challenged, `?return=${encodeURIComponent(backTo(challenged.paymentId))}`);
    expect(shown.text).toContain(SANDBOX_OTP);
    expect(shown.text).toContain(`name="return" value="${backTo(challenged.paymentId)}"`);
    // The attempt's own key (guessable: payment id and attempt number) opens nothing.
    expect((await service.request({ method: 'GET', path: `/sandbox/challenge/${challenged.key}` })).status).toBe(404);
    expect((await service.request({ method: 'GET', path: `/sandbox/challenge/${challenged.key}.AAAAAAAAAAAAAAAAAAAAAA` })).status).toBe(404);
    const answered = await answerPage(challenged, { code: SANDBOX_OTP, decision: 'confirm', return: backTo(challenged.paymentId) });
    expect([answered.status, answered.headers.location]).toEqual([303, backTo(challenged.paymentId)]);
    await expect(acquirer.completeAction(ref)).resolves.toMatchObject({ kind: 'approved', acquirerRef: challenged.outcome.acquirerRef });
    await expect(acquirer.close(ref)).resolves.toMatchObject({ kind: 'approved' });
    expect((await page(challenged)).text).toContain('This confirmation is already finished.');
    // The answered auth can be captured.
    await expect(followUp(challenged, 'capture', 2500)).resolves.toMatchObject({ kind: 'approved' });
  });

  it('closes a pending challenge: declined, and a later answer is refused and approves nothing', async () => {
    const challenged = await authorized({ expiry: '05/38' });
    const ref = { paymentId: challenged.paymentId, idempotencyKey: challenged.key.toUpperCase() };
    const closed = await acquirer.close(ref);
    expect(closed).toEqual({ kind: 'declined', acquirerRef: challenged.outcome.acquirerRef, reason: SANDBOX_CLOSED_REASONS.abandoned });
    await expect(acquirer.close(ref)).resolves.toEqual(closed);

    const shown = await page(challenged);
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('This confirmation is closed');
    expect(shown.text).not.toContain('name="decision"');
    const refused = await answerPage(challenged, { code: SANDBOX_OTP, decision: 'confirm' });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('This confirmation is closed');
    await expect(acquirer.challenges.answer(keyOf(challenged), { code: SANDBOX_OTP, confirm: true })).resolves.toMatchObject({ result: 'closed' });

    await expect(acquirer.lookup(ref)).resolves.toEqual(closed);
    await expect(acquirer.completeAction(ref)).resolves.toEqual(closed);
    expect(await ledger(challenged.paymentId)).toEqual([
      expect.objectContaining({ operation: 'sale', outcome: 'declined', reason: SANDBOX_CLOSED_REASONS.abandoned, closed: 'abandoned' }),
    ]);
    await expect(followUp(challenged, 'refund', 100)).resolves.toMatchObject({ kind: 'declined', reason: R.notApproved });
  });

  it('closes a bank redirect too; close racing the answer agrees with what was recorded', async () => {
    for (let round = 0; round < 5; round++) {
      const challenged = await authorized({ expiry: '12/38' });
      const ref = { paymentId: challenged.paymentId, idempotencyKey: challenged.key };
      const [closed, answered] = await Promise.all([acquirer.close(ref), acquirer.challenges.answer(keyOf(challenged), { confirm: true })]);
      await expect(acquirer.lookup(ref)).resolves.toEqual(closed);
      expect(answered?.result).toBe(closed.kind === 'approved' ? 'approved' : 'closed');
      const records = await ledger(challenged.paymentId);
      expect(records).toHaveLength(1);
      expect(records[0]!.outcome).toBe(closed.kind === 'approved' ? 'approved' : 'declined');
    }
  });

  it('bars a key never received: a later authorize with it is declined and moves no money', async () => {
    const paymentId = randomUUID();
    const ref = { paymentId, idempotencyKey: `${paymentId}.1` };
    await expect(acquirer.lookup(ref)).resolves.toBeUndefined();
    const barred = await acquirer.close(ref);
    expect(barred).toMatchObject({ kind: 'declined', reason: SANDBOX_CLOSED_REASONS.neverReceived });
    await expect(acquirer.close(ref)).resolves.toEqual(barred);

    const late = await acquirer.authorize(request(paymentId, { idempotencyKey: ref.idempotencyKey.toUpperCase(), amountMinor: 1234, capture: false }));
    expect(late).toEqual(barred);
    await expect(acquirer.lookup(ref)).resolves.toEqual(barred);
    expect(await ledger(paymentId)).toEqual([
      expect.objectContaining({ operation: 'auth', amount: '12.34', currency: 'USD', outcome: 'declined', reason: SANDBOX_CLOSED_REASONS.neverReceived, closed: 'barred' }),
    ]);
    // The next attempt, with its own key, is a payment as usual.
    await expect(acquirer.authorize(request(paymentId, { idempotencyKey: `${paymentId}.2` }))).resolves.toMatchObject({ kind: 'approved' });
  });

  it('bars a follow-up key never received: the late refund is declined and the balance is untouched', async () => {
    const sale = await authorized({ amountMinor: 2000 });
    const key = `${sale.paymentId}.refund.${randomUUID()}`;
    await expect(acquirer.close({ paymentId: sale.paymentId, idempotencyKey: key })).resolves.toMatchObject({ kind: 'declined', reason: SANDBOX_CLOSED_REASONS.neverReceived });
    await expect(followUp(sale, 'refund', 2000, key)).resolves.toMatchObject({ kind: 'declined', reason: SANDBOX_CLOSED_REASONS.neverReceived });
    await expect(followUp(sale, 'refund', 2000)).resolves.toMatchObject({ kind: 'approved' });
    const records = await ledger(sale.paymentId);
    expect(records.map((r) => [r.operation, r.amount, r.outcome])).toEqual([
      ['sale', '20.00', 'approved'],
      ['refund', '20.00', 'declined'],
      ['refund', '20.00', 'approved'],
    ]);
    expect(ruleProblems(records)).toEqual([]);
  });

  it('bars exactly once when close races the authorize with the same key', async () => {
    for (let round = 0; round < 5; round++) {
      const paymentId = randomUUID();
      const ref = { paymentId, idempotencyKey: `${paymentId}.1` };
      const [closed, asked] = await Promise.all([acquirer.close(ref), acquirer.authorize(request(paymentId, { expiry: '05/38' }))]);
      const final = await acquirer.lookup(ref);
      expect(closed).toEqual(final);
      expect(final?.kind).toBe('declined');
      expect(asked.kind === 'action' || asked.kind === 'declined').toBe(true);
      expect(await ledger(paymentId)).toHaveLength(1);
    }
  });

  it('gives the approval of the no-answer card (08/38) to lookup and close', async () => {
    const lost = await authorized({ expiry: '08/38' });
    expect(lost.outcome).toMatchObject({ kind: 'unknown', reason: SANDBOX_REASONS.unknown });
    const ref = { paymentId: lost.paymentId, idempotencyKey: lost.key };
    await expect(acquirer.lookup(ref)).resolves.toEqual({ kind: 'approved', acquirerRef: lost.outcome.acquirerRef });
    await expect(acquirer.close(ref)).resolves.toEqual({ kind: 'approved', acquirerRef: lost.outcome.acquirerRef });
    await expect(acquirer.authorize(request(lost.paymentId, { expiry: '08/38' }))).resolves.toEqual({ kind: 'approved', acquirerRef: lost.outcome.acquirerRef });
    expect((await ledger(lost.paymentId)).map((r) => [r.operation, r.outcome])).toEqual([['sale', 'approved']]);
  });
});

describe('npm run sandbox -- ledger', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'checkout-sandbox-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  // In this process, as the entry point runs it (its spawned smoke test is in sandbox-ledger-cli.test.ts).
  const cli = inProcess(runSandboxCommand, { DATA_DIR: dataDir, CHECKOUT_STAGE: undefined });
  const paymentId = randomUUID();

  beforeAll(async () => {
    const backend = await startLocalBackend({ dataDir });
    const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
    try {
      const local = new SandboxAcquirer(db, backend.tableName);
      const sale = await local.authorize(request(paymentId, { amountMinor: 2500 }));
      const follow = { paymentId, authorization: { idempotencyKey: `${paymentId}.1`, acquirerRef: sale.acquirerRef }, currency: 'USD' };
      await local.refund({ ...follow, idempotencyKey: `${paymentId}.refund.a`, amountMinor: 500 });
      await local.refund({ ...follow, idempotencyKey: `${paymentId}.refund.b`, amountMinor: 3000 });
    } finally {
      db.destroy();
      await backend.close();
    }
  });

  it('prints the records as JSON, oldest first, with the store closed', async () => {
    const run = await cli('ledger', paymentId);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const records = JSON.parse(run.stdout) as SandboxLedgerRecord[];
    expect(records.map((r) => [r.operation, r.amount, r.currency, r.outcome, r.idempotency_key, r.reason])).toEqual([
      ['sale', '25.00', 'USD', 'approved', `${paymentId}.1`, undefined],
      ['refund', '5.00', 'USD', 'approved', `${paymentId}.refund.a`, undefined],
      ['refund', '30.00', 'USD', 'declined', `${paymentId}.refund.b`, R.refundTooBig],
    ]);
    expect(records[1]).toMatchObject({ acquirer_ref: expect.stringMatching(/^sbx_/), at: expect.any(String), of: `${paymentId}.1` });
    expect(run.stdout).not.toContain(PAN);
  });

  it('reads through the running backend when one holds the data directory', async () => {
    const backend = await startLocalBackend({ dataDir: join(dataDir, 'other') });
    const withdraw = announceBackend(dataDir, backend);
    const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
    try {
      const running = randomUUID();
      await new SandboxAcquirer(db, backend.tableName).authorize(request(running, { amountMinor: 700, currency: 'EUR', capture: false }));
      const run = await cli('ledger', running.toUpperCase());
      expect(run.code).toBe(0);
      expect((JSON.parse(run.stdout) as SandboxLedgerRecord[]).map((r) => [r.operation, r.amount, r.currency, r.outcome])).toEqual([['auth', '7.00', 'EUR', 'approved']]);
    } finally {
      withdraw();
      db.destroy();
      await backend.close();
    }
  });

  it('prints [] for a payment the acquirer never saw', async () => {
    const run = await cli('ledger', randomUUID());
    expect([run.code, JSON.parse(run.stdout)]).toEqual([0, []]);
  });

  it.each([[[]], [['ledger']], [['ledger', 'not-an-id']], [['list']], [['ledger', randomUUID(), 'extra']], [['ledger', randomUUID(), '--nope']]])(
    'answers %j with a usage message and exit code 2',
    async (args) => {
      const run = await cli(...args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^sandbox: .+\nRun with --help for usage\.\n$/);
      expect(run.stdout).toBe('');
    },
  );

  it('--help prints the usage', async () => {
    const run = await cli('--help');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('npm run -s sandbox -- ledger PAYMENT_ID');
  });
});
