import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { key as tableKey } from '../../lambdas/adapters/dynamodb/keys';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Deps } from '../../lambdas/container';
import { IDEMPOTENCY_KEY_HEADER, REQUEST_KEY_LEASE_MS, remembersRefusal, requestKeyOf } from '../../lambdas/domain/request-key';
import { ERRORS } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { voidOwnPayment } from '../../lambdas/protocol/merchant/void';
import { type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import type { RecurringResponse } from '../../lambdas/use-cases/recurring-payment';
import { ROUTES } from '../../lib/routes';
import { DEFAULT_TIMEOUT_SECONDS } from '../../lib/constructs/checkout-function';
import { createSession, replayableLink } from '../../lambdas/use-cases/create-session';
import { sessionCommandOf, validateCreateSession } from '../../lambdas/protocol/merchant/session';
import { withFault } from '../support/faults';
import { paymentIdOf } from '../support/links';
import { ledgerOf, paidPayment, recurringBody, recurringChain, recurringOf, refundOf, refusal, sessionBody, statusOf, storedPayment, submitPage } from '../support/payments';
import { paidAs, serviceForFile } from '../support/suites';
import { signBody } from '../support/sign';

/**
 * Replays under an Idempotency-Key answer what the first request got (status code and body, byte
 * for byte), whatever the payment did since: a success, an "in progress" answer and a final refusal
 * alike. A replay while the first run still holds the key answers 208012 and runs nothing; money
 * moves once however many replays race; a run that died before keeping its answer is taken over
 * once its claim lapses, and the use case finds what it did.
 */
const T0 = new Date('2030-05-06T07:00:00.000Z');
const clock = new ManualClock(T0);
const IN_PROGRESS = refusal(208012, 'OPERATION_IN_PROGRESS');
const REFUND_NOT_ALLOWED = refusal(208005, 'REFUND_NOT_ALLOWED');

// The clock stands still between steps: a per-second request limit would count the whole file as one second.
const { service, merchants: [shop, dmsShop] } = serviceForFile({
  clock,
  clockAt: T0,
  env: { MERCHANT_REQUESTS_PER_SECOND: '1000' },
  merchants: [{ name: 'Replay Shop' }, { name: 'Replay Two Step Shop', settings: { dms: true } }],
});

const later = (ms: number) => clock.set(new Date(clock.now().getTime() + ms));

/** A signed merchant POST carrying an Idempotency-Key. */
function keyed<T = Record<string, unknown>>(path: string, body: Record<string, unknown>, idempotencyKey: string, merchant = shop) {
  return service.request<T>({
    path,
    headers: { 'content-type': 'application/json', [IDEMPOTENCY_KEY_HEADER]: idempotencyKey },
    body: JSON.stringify(signBody(path, { merchant_key: merchant.merchant_key, ...body }, merchant.password)),
  });
}

const newKey = () => `key-${randomUUID()}`;
const answerOf = (res: { status: number; text: string }) => [res.status, res.text] as const;
const refundsIn = async (paymentId: string) => (await ledgerOf(service, paymentId)).filter((r) => r.operation === 'refund' && r.outcome === 'approved');

const settled = (amount = '25.00') => paidAs(service, shop, 'settled', { order: { amount } });
const authorized = (amount = '25.00') => paidAs(service, dmsShop, 'pending', { order: { amount } });

/** A soft-declined recurring charge (.52 in the sandbox): retryable. */
async function softDeclined() {
  const chain = await recurringChain(service, shop);
  const res = await recurringOf<RecurringResponse>(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { number: `r-${randomUUID().slice(0, 8)}`, amount: '9.52' } });
  expect(res.json).toMatchObject({ status: 'declined', reason: SANDBOX_REASONS.softDeclined });
  return res.json;
}

describe('a replay after the payment moved on answers the first answer', () => {
  it('a full refund replayed after the payment was fully refunded answers its first accepted (not 208005)', async () => {
    const paid = await settled('25.00');
    const key = newKey();
    const body = { payment_id: paid.paymentId, amount: '25.00' };
    const first = await keyed('/api/v1/payment/refund', body, key);
    expect([first.status, first.json]).toEqual([200, { payment_id: paid.paymentId, result: 'accepted' }]);
    expect((await statusOf(service, shop, paid.paymentId)).status).toBe('refund');
    // A new refund would be refused now: the replay is not a new refund.
    expect((await refundOf(service, shop, paid.paymentId, '25.00')).json).toEqual(REFUND_NOT_ALLOWED);
    later(3_600_000);
    const replay = await keyed('/api/v1/payment/refund', body, key);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect(await refundsIn(paid.paymentId)).toHaveLength(1);
  });

  it('a partial refund replayed after another refund took the rest answers accepted and refunds nothing more', async () => {
    const paid = await settled('25.00');
    const key = newKey();
    const body = { payment_id: paid.paymentId, amount: '10.00' };
    const first = await keyed('/api/v1/payment/refund', body, key);
    expect((await refundOf(service, shop, paid.paymentId, '15.00')).status).toBe(200);
    const replay = await keyed('/api/v1/payment/refund', body, key);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect((await storedPayment(service, paid.paymentId)).refundedMinor).toBe(2500);
    expect(await refundsIn(paid.paymentId)).toHaveLength(2);
  });

  it('a void replayed an hour later answers its first answer, date and all', async () => {
    const paid = await settled();
    const key = newKey();
    const first = await keyed('/api/v1/payment/void', { payment_id: paid.paymentId }, key);
    expect(first.json).toMatchObject({ status: 'SUCCESS', payment_status: 'void' });
    later(3_600_000);
    const replay = await keyed('/api/v1/payment/void', { payment_id: paid.paymentId }, key);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect((await ledgerOf(service, paid.paymentId)).filter((r) => r.operation === 'void')).toHaveLength(1);
  });

  it('a capture replayed after the payment was refunded answers its first SUCCESS', async () => {
    const paid = await authorized('25.00');
    const key = newKey();
    const body = { payment_id: paid.paymentId, amount: '25.00' };
    const first = await keyed('/api/v1/payment/capture', body, key, dmsShop);
    expect(first.json).toMatchObject({ status: 'settled', trans_status: 'SUCCESS' });
    expect((await refundOf(service, dmsShop, paid.paymentId, '25.00')).status).toBe(200);
    expect((await statusOf(service, dmsShop, paid.paymentId)).status).toBe('refund');
    later(60_000);
    const replay = await keyed('/api/v1/payment/capture', body, key, dmsShop);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect((await ledgerOf(service, paid.paymentId)).filter((r) => r.operation === 'capture')).toHaveLength(1);
  });

  it('a retry replayed after its payment was refunded answers its first accepted', async () => {
    const declined = await softDeclined();
    const key = newKey();
    const first = await keyed('/api/v1/payment/retry', { payment_id: declined.payment_id }, key);
    expect([first.status, first.json]).toEqual([200, { payment_id: declined.payment_id, result: 'accepted' }]);
    expect((await refundOf(service, shop, declined.payment_id, '9.52')).status).toBe(200);
    const replay = await keyed('/api/v1/payment/retry', { payment_id: declined.payment_id }, key);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect((await storedPayment(service, declined.payment_id)).attempt).toBe(2);
  });

  it('a recurring charge replayed after it was refunded answers its first answer (settled), not the payment now', async () => {
    const chain = await recurringChain(service, shop);
    const key = newKey();
    const body = recurringBody(shop, { initTransId: chain.initTransId, token: chain.token, order: { number: `r-${randomUUID().slice(0, 8)}`, amount: '12.00' } });
    const first = await keyed<RecurringResponse>('/api/v1/payment/recurring', body, key);
    expect(first.json.status).toBe('settled');
    expect((await refundOf(service, shop, first.json.payment_id, '12.00')).status).toBe(200);
    const replay = await keyed('/api/v1/payment/recurring', body, key);
    expect(answerOf(replay)).toEqual(answerOf(first));
    // Without the key the chain's own rule (one payment per order number) answers the payment as it is now.
    expect((await recurringOf<RecurringResponse>(service, shop, { initTransId: chain.initTransId, token: chain.token, order: body.order as { number: string } })).json.status).toBe('refund');
  });

  it('a session replayed after it was paid answers the same link; the kept answer holds no link token', async () => {
    const key = newKey();
    const body = sessionBody(shop);
    const first = await keyed<{ redirect_url: string }>('/api/v1/session', body, key);
    expect(first.status).toBe(200);
    const path = new URL(first.json.redirect_url).pathname;
    expect((await submitPage(service, { path }, {})).status).toBe(303);
    expect((await statusOf(service, shop, paymentIdOf(first.json.redirect_url))).status).toBe('settled');
    const replay = await keyed('/api/v1/session', body, key);
    expect(answerOf(replay)).toEqual(answerOf(first));
    const kept = await requestKeyItem(shop, key);
    expect(kept?.answer).toEqual({ statusCode: 200, body: expect.stringContaining('/auth/') });
    expect(JSON.stringify(kept)).not.toContain(path.slice('/auth/'.length));
  });
});

describe('a refused first request replays as the same refusal', () => {
  it('a refund refused while the payment was an authorization stays refused after it is captured', async () => {
    const paid = await authorized('25.00');
    const key = newKey();
    const body = { payment_id: paid.paymentId, amount: '5.00' };
    const first = await keyed('/api/v1/payment/refund', body, key, dmsShop);
    expect([first.status, first.json]).toEqual([409, REFUND_NOT_ALLOWED]);
    expect((await keyed('/api/v1/payment/capture', { payment_id: paid.paymentId, amount: '25.00' }, newKey(), dmsShop)).json).toMatchObject({ trans_status: 'SUCCESS' });
    const replay = await keyed('/api/v1/payment/refund', body, key, dmsShop);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect(await refundsIn(paid.paymentId)).toHaveLength(0);
  });

  it('a void refused on an authorization stays refused (208013) after it is captured', async () => {
    const paid = await authorized();
    const key = newKey();
    const first = await keyed('/api/v1/payment/void', { payment_id: paid.paymentId }, key, dmsShop);
    expect([first.status, first.json]).toEqual([409, refusal(208013, 'VOID_NOT_SETTLED')]);
    await keyed('/api/v1/payment/capture', { payment_id: paid.paymentId, amount: '25.00' }, newKey(), dmsShop);
    const replay = await keyed('/api/v1/payment/void', { payment_id: paid.paymentId }, key, dmsShop);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect((await ledgerOf(service, paid.paymentId)).filter((r) => r.operation === 'void')).toHaveLength(0);
  });

  it('a capture over the authorized amount replays as 208004; a session with an unknown card token as 205005', async () => {
    const paid = await authorized('25.00');
    const key = newKey();
    const over = await keyed('/api/v1/payment/capture', { payment_id: paid.paymentId, amount: '30.00' }, key, dmsShop);
    expect([over.status, over.json]).toEqual([400, refusal(208004, 'CAPTURE_AMOUNT_TOO_BIG')]);
    expect(answerOf(await keyed('/api/v1/payment/capture', { payment_id: paid.paymentId, amount: '30.00' }, key, dmsShop))).toEqual(answerOf(over));
    const sessionKey = newKey();
    const session = sessionBody(shop, { cardToken: 'a'.repeat(64) });
    const refused = await keyed('/api/v1/session', session, sessionKey);
    expect([refused.status, refused.json]).toEqual([400, refusal(205005, 'CARD_TOKEN_INVALID')]);
    expect(answerOf(await keyed('/api/v1/session', session, sessionKey))).toEqual(answerOf(refused));
    expect((await requestKeyItem(shop, sessionKey))?.answer).toEqual({ statusCode: 400, body: refused.text });
  });

  it('"another operation is in progress" (208012) is not kept: the same key runs once the operation is over', async () => {
    const paid = await settled('25.00');
    // A void whose acquirer call never happened (the process died after its intent): in flight until reconciled.
    const parts = withFault(service.deps.store, service.deps.acquirer, { at: 'acquirer', nth: 1, when: 'before' });
    await voidOwnPayment({ ...service.deps, store: parts.store, acquirer: parts.acquirer } as Deps, shop.merchant_key, { payment_id: paid.paymentId }).catch(() => undefined);
    expect((await storedPayment(service, paid.paymentId)).operation?.kind).toBe('void');
    const key = newKey();
    const body = { payment_id: paid.paymentId, amount: '5.00' };
    const busy = await keyed('/api/v1/payment/refund', body, key);
    expect([busy.status, busy.json]).toEqual([409, IN_PROGRESS]);
    later(3 * 60_000);
    await reconcileDue(service.deps);
    expect((await storedPayment(service, paid.paymentId)).operation).toBeUndefined();
    const ran = await keyed('/api/v1/payment/refund', body, key);
    expect([ran.status, ran.json]).toEqual([200, { payment_id: paid.paymentId, result: 'accepted' }]);
    expect(await refundsIn(paid.paymentId)).toHaveLength(1);
  });
});

describe('concurrent replays move money once', () => {
  /** Twenty requests at once with one key: each answers the first answer or 208012, never anything else. */
  async function race(path: string, body: Record<string, unknown>, merchant = shop) {
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 20 }, () => keyed(path, body, key, merchant)));
    const firsts = answers.filter((a) => !(a.status === 409 && a.text === JSON.stringify(IN_PROGRESS)));
    expect(firsts.length).toBeGreaterThanOrEqual(1);
    expect(new Set(firsts.map((a) => `${a.status} ${a.text}`)).size).toBe(1);
    // Once the race is over, a replay gets that same answer.
    const after = await keyed(path, body, key, merchant);
    expect(answerOf(after)).toEqual(answerOf(firsts[0]!));
    return after;
  }

  it('refund', async () => {
    const paid = await settled('25.00');
    const answer = await race('/api/v1/payment/refund', { payment_id: paid.paymentId, amount: '7.00' });
    expect(answer.status).toBe(200);
    expect((await refundsIn(paid.paymentId)).map((r) => r.amount)).toHaveLength(1);
    expect((await storedPayment(service, paid.paymentId)).refundedMinor).toBe(700);
  });

  it('void', async () => {
    const paid = await settled();
    expect((await race('/api/v1/payment/void', { payment_id: paid.paymentId })).json).toMatchObject({ status: 'SUCCESS' });
    expect((await ledgerOf(service, paid.paymentId)).filter((r) => r.operation === 'void')).toHaveLength(1);
  });

  it('capture', async () => {
    const paid = await authorized('25.00');
    expect((await race('/api/v1/payment/capture', { payment_id: paid.paymentId, amount: '20.00' }, dmsShop)).json).toMatchObject({ trans_status: 'SUCCESS' });
    expect((await ledgerOf(service, paid.paymentId)).filter((r) => r.operation === 'capture')).toHaveLength(1);
  });

  it('retry', async () => {
    const declined = await softDeclined();
    expect((await race('/api/v1/payment/retry', { payment_id: declined.payment_id })).status).toBe(200);
    const payment = await storedPayment(service, declined.payment_id);
    expect(payment.attempt).toBe(2);
    expect(payment.transactions.filter((t) => t.type === 'recurring' && t.status === 'success')).toHaveLength(1);
  });

  it('recurring', async () => {
    const chain = await recurringChain(service, shop);
    const body = recurringBody(shop, { initTransId: chain.initTransId, token: chain.token, order: { number: `r-${randomUUID().slice(0, 8)}`, amount: '11.00' } });
    const answer = await race('/api/v1/payment/recurring', body);
    const paymentId = (answer.json as { payment_id: string }).payment_id;
    expect((await ledgerOf(service, paymentId)).filter((r) => r.outcome === 'approved')).toHaveLength(1);
  });

  it('session', async () => {
    const answer = await race('/api/v1/session', sessionBody(shop));
    expect(answer.status).toBe(200);
  });
});

describe('a run that died before keeping its answer', () => {
  it('answers 208012 while its claim holds, then (after the payment was fully refunded) its first accepted', async () => {
    const paid = await settled('25.00');
    const key = newKey();
    const body = { payment_id: paid.paymentId, amount: '10.00' };
    // The answer cannot be kept (the table refuses the write): the refund still answers, not 5xx.
    const remember = service.deps.requestKeys.remember.bind(service.deps.requestKeys);
    service.deps.requestKeys.remember = () => Promise.reject(Object.assign(new Error('throttled'), { name: 'ProvisionedThroughputExceededException' }));
    let first;
    try {
      first = await keyed('/api/v1/payment/refund', body, key);
    } finally {
      service.deps.requestKeys.remember = remember;
    }
    expect([first.status, first.json]).toEqual([200, { payment_id: paid.paymentId, result: 'accepted' }]);
    expect((await refundOf(service, shop, paid.paymentId, '15.00')).status).toBe(200);
    expect((await statusOf(service, shop, paid.paymentId)).status).toBe('refund');
    // The claim is still held: a replay now is told the request is in progress, and runs nothing.
    expect(answerOf(await keyed('/api/v1/payment/refund', body, key))).toEqual([409, JSON.stringify(IN_PROGRESS)]);
    later(REQUEST_KEY_LEASE_MS + 1);
    // The claim lapsed: the replay runs again under the same transaction id and finds its refund first.
    const replay = await keyed('/api/v1/payment/refund', body, key);
    expect(answerOf(replay)).toEqual(answerOf(first));
    expect((await storedPayment(service, paid.paymentId)).refundedMinor).toBe(2500);
    expect(await refundsIn(paid.paymentId)).toHaveLength(2);
    expect((await requestKeyItem(shop, key))?.answer).toEqual({ statusCode: 200, body: first.text });
  });

  it('a session made by a run that died is answered with its link once the claim lapses', async () => {
    const key = newKey();
    const body = signBody('/api/v1/session', sessionBody(shop), shop.password);
    // The dead run: it claimed the key and made the session, and nothing more.
    const requestKey = requestKeyOf(shop.merchant_key, 'POST /api/v1/session', key, body);
    const claim = await service.deps.requestKeys.claim(requestKey.id, requestKey.fingerprint, 'dead-run', clock.now());
    expect(claim.kind).toBe('run');
    const link = await replayableLink(service.deps, shop.merchant_key, requestKey.transId);
    const made = await createSession(service.deps, shop.merchant_key, sessionCommandOf(validateCreateSession(body)), link);
    expect(answerOf(await keyed('/api/v1/session', body, key))).toEqual([409, JSON.stringify(IN_PROGRESS)]);
    later(REQUEST_KEY_LEASE_MS + 1);
    const replay = await keyed<{ redirect_url: string }>('/api/v1/session', body, key);
    expect(replay.status).toBe(200);
    expect(replay.json.redirect_url).toBe(`${service.baseUrl}/auth/${made.linkToken}`);
    expect(answerOf(await keyed('/api/v1/session', body, key))).toEqual(answerOf(replay));
  });
});

describe('the rule over many schedules', () => {
  it('partial refunds under a few keys, each replayed at random after others: every replay answers its first answer; each key refunds once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.integer({ min: 0, max: 3 }), cents: fc.integer({ min: 100, max: 900 }) }), { minLength: 1, maxLength: 8 }),
        async (steps) => {
          const paid = await settled('20.00');
          const keys = Array.from({ length: 4 }, newKey);
          // Each key's body is fixed by its first use (another body under the key is a duplicate).
          const bodies = new Map<number, { payment_id: string; amount: string }>();
          const firsts = new Map<number, readonly [number, string]>();
          for (const step of steps) {
            const body = bodies.get(step.key) ?? { payment_id: paid.paymentId, amount: (step.cents / 100).toFixed(2) };
            bodies.set(step.key, body);
            const answer = answerOf(await keyed('/api/v1/payment/refund', body, keys[step.key]!));
            const first = firsts.get(step.key);
            if (first) expect(answer).toEqual(first);
            else firsts.set(step.key, answer);
          }
          const accepted = [...firsts.entries()].filter(([, [status]]) => status === 200).map(([k]) => Math.round(Number(bodies.get(k)!.amount) * 100));
          expect((await storedPayment(service, paid.paymentId)).refundedMinor ?? 0).toBe(accepted.reduce((a, b) => a + b, 0));
          expect(await refundsIn(paid.paymentId)).toHaveLength(accepted.length);
          // A refusal is the amount's (more than is left) or, once all was refunded, the status's.
          for (const [, [status, text]] of firsts) if (status !== 200) expect([refusal(208006, 'REFUND_AMOUNT_TOO_BIG'), REFUND_NOT_ALLOWED]).toContainEqual(JSON.parse(text));
        },
      ),
      { numRuns: 12, seed: 20300506 },
    );
  });
});

test('a claim outlasts every merchant function: a run still going is never taken over', () => {
  const merchantRoutes = ROUTES.filter((r) => r.path.startsWith('/api/v1/'));
  expect(merchantRoutes.length).toBeGreaterThan(0);
  for (const route of merchantRoutes) expect((route.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000).toBeLessThan(REQUEST_KEY_LEASE_MS);
});

test.each([
  ['a refusal of the payment as it was', true, ERRORS.REFUND_NOT_ALLOWED],
  ['an amount refused', true, ERRORS.CAPTURE_AMOUNT_TOO_BIG],
  ['an invalid body (found by the use case)', true, ERRORS.REQUEST_INVALID],
  ['a duplicate', true, ERRORS.DUPLICATE_REQUEST],
  ['an unknown payment', true, ERRORS.PAYMENT_NOT_FOUND],
  ['"another operation is in progress"', false, ERRORS.OPERATION_IN_PROGRESS],
  ['"too many requests"', false, { code: 429000, httpStatus: 429 }],
  ['a failure of ours', false, ERRORS.INTERNAL],
  ['"unavailable, try again"', false, ERRORS.UNAVAILABLE],
] as const)('%s is kept as the final answer: %s', (_what, kept, entry) => {
  expect(remembersRefusal(entry)).toBe(kept);
});

async function requestKeyItem(merchant: MerchantCredentials, idempotencyKey: string) {
  const { id } = requestKeyOf(merchant.merchant_key, 'POST', idempotencyKey, {});
  const out = await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: tableKey.requestKey(id), ConsistentRead: true }));
  return out.Item;
}
