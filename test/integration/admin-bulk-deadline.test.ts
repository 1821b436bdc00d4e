import { ManualClock } from '../../lambdas/ports/clock';
import { ANSWER_MARGIN_MS, BULK_START_MARGIN_MS, NOT_STARTED_REASON, bulkAction } from '../../lambdas/use-cases/admin/operator-actions';
import type { ActionOutcome } from '../../lambdas/protocol/admin/actions';
import { updateMerchantSettings, type MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { ACQUIRER_WORK, acquirerRouteTimeoutSeconds } from '../../lib/time-budget';
import { adminApi, seedOperator, signIn, type AdminApi } from '../support/admin';
import { paidPayment, statusOf } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * A bulk capture or release runs its payments one after another; against a slow acquirer a big
 * batch would outrun its function's timeout and answer API Gateway's 5xx after money moved. It has
 * a deadline from its function's remaining time: no payment is started after it, the rest are
 * answered per row "not started" with nothing done to them.
 */
const clock = new ManualClock('2030-05-06T08:00:00.000Z');
/** Acquirer timeouts that give the bulk route a short function time in the runner (as the stack derives it). */
const TIMEOUTS = { S2S_CARD_TIMEOUT_MS: 500, S2S_CARD_FOLLOW_UP_WAIT_MS: 0 };
const ROUTE_SECONDS = acquirerRouteTimeoutSeconds('AdminCaptureBulk', ACQUIRER_WORK.followUp, TIMEOUTS);
/** Each capture or release at the acquirer takes this long here. */
const SLOW_MS = 600;

let service: TestService;
let api: AdminApi;
let shop: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService({ clock, env: { S2S_CARD_TIMEOUT_MS: String(TIMEOUTS.S2S_CARD_TIMEOUT_MS), S2S_CARD_FOLLOW_UP_WAIT_MS: String(TIMEOUTS.S2S_CARD_FOLLOW_UP_WAIT_MS) } });
  api = adminApi(service, await signIn(service, await seedOperator(service, 'bob', 'bob-long-password', 'operator')));
  shop = await service.createMerchant({ name: 'Slow Gateway Shop' });
  await updateMerchantSettings(service.deps, shop.merchant_key, { dms: true });
}, 60_000);
afterAll(() => service.close());

/** The acquirer's captures and releases made slow (as a gateway answering late is). */
function slowAcquirer(): () => void {
  const acquirer = service.deps.acquirer as unknown as Record<'capture' | 'reverse', (...a: unknown[]) => Promise<unknown>>;
  const originals = { capture: acquirer.capture, reverse: acquirer.reverse };
  for (const name of ['capture', 'reverse'] as const) {
    const original = originals[name].bind(acquirer);
    acquirer[name] = async (...args: unknown[]) => {
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
      return original(...args);
    };
  }
  return () => Object.assign(acquirer, originals);
}

async function authorizations(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const paid = await paidPayment(service, shop, { order: { amount: '10.00' } });
    expect(paid.status.status).toBe('pending');
    ids.push(paid.paymentId);
  }
  return ids;
}

test(`a batch larger than the function's ${ROUTE_SECONDS} s allow answers within it: the first captured, the rest not started and still pending`, async () => {
  const ids = await authorizations(12);
  const restore = slowAcquirer();
  let res;
  const started = Date.now();
  try {
    res = await api.bulk('capture', ids);
  } finally {
    restore();
  }
  const took = Date.now() - started;
  expect(res.status).toBe(200);
  expect(took).toBeLessThan(ROUTE_SECONDS * 1000);
  const results = res.json.results;
  expect(results.map((r) => r.payment_id)).toEqual(ids);
  const done = results.filter((r) => r.outcome === 'done');
  const notStarted = results.filter((r) => r.outcome === 'not-started');
  expect(done.length + notStarted.length).toBe(ids.length);
  // Payments are started until the deadline less the answer's margin: at least one, far from all twelve.
  expect(done.length).toBeGreaterThanOrEqual(1);
  expect(done.length).toBeLessThanOrEqual(Math.ceil((ROUTE_SECONDS * 1000 - ANSWER_MARGIN_MS - BULK_START_MARGIN_MS) / SLOW_MS));
  // In order: every done one before every not-started one.
  expect(results.map((r) => r.outcome)).toEqual([...done.map(() => 'done'), ...notStarted.map(() => 'not-started')]);
  for (const r of notStarted) expect(r).toEqual({ payment_id: r.payment_id, action: 'capture', outcome: 'not-started', message: NOT_STARTED_REASON });
  for (const r of done) await expect(statusOf(service, shop, r.payment_id)).resolves.toMatchObject({ status: 'settled' });
  for (const r of notStarted) await expect(statusOf(service, shop, r.payment_id)).resolves.toMatchObject({ status: 'pending' });

  // Sent again (and again, for what a busy machine's allowance did not reach), the rest are
  // captured: nothing was half done, each answer only done or not started.
  let rest = notStarted.map((r) => r.payment_id);
  for (let round = 0; rest.length && round < 5; round++) {
    const again = await api.bulk('capture', rest);
    expect(again.status).toBe(200);
    const outcomes = again.json.results as ActionOutcome[];
    expect(outcomes.filter((r) => r.outcome !== 'done' && r.outcome !== 'not-started')).toEqual([]);
    expect(outcomes.filter((r) => r.outcome === 'done').length).toBeGreaterThanOrEqual(1);
    rest = outcomes.filter((r) => r.outcome === 'not-started').map((r) => r.payment_id);
  }
  expect(rest).toEqual([]);
  for (const r of notStarted) await expect(statusOf(service, shop, r.payment_id)).resolves.toMatchObject({ status: 'settled' });
}, 90_000);

test('a release stops alike; a deadline already past starts nothing', async () => {
  const ids = await authorizations(3);
  const results = await bulkAction(service.deps, { actor: 'bob', action: 'release', paymentIds: ids, deadline: { startBy: Date.now() - 1, answerBy: new Date() } });
  expect(results.map((r) => r.outcome)).toEqual(['not-started', 'not-started', 'not-started']);
  for (const id of ids) await expect(statusOf(service, shop, id)).resolves.toMatchObject({ status: 'pending' });
  const released = await bulkAction(service.deps, { actor: 'bob', action: 'release', paymentIds: ids, deadline: { startBy: Date.now() + 60_000, answerBy: new Date(Date.now() + 61_000) } });
  expect(released.map((r) => r.outcome)).toEqual(['done', 'done', 'done']);
}, 60_000);
