import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { ManualClock } from '../../lambdas/ports/clock';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { startCallbackReceiver, type CallbackReceiver } from '../support/callback-receiver';
import { startDynamoFaultProxy, WRITE_OPERATIONS, type CallFault, type DynamoFaultProxy } from '../support/dynamodb-faults';
import { checkPayment } from '../support/ledger-checker';
import { captureOf, openSession, paidPayment, recurringChain, recurringOf, refundOf, statusOf, submitPage, voidOf } from '../support/payments';
import { soaking } from '../support/soak';
import { startTestService, type TestService } from '../support/service';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';

/**
 * DynamoDB calls that the network fails: one that never reaches the table and is never answered,
 * and one the table carried out whose answer is lost (the SDK tries again after its request
 * timeout, AWS_CALL_TIMEOUT_MS, and a conditional write then finds its own work done). Each call of
 * each flow in turn — a checkout, one with 3-D Secure, a refund, a void, a capture, a recurring
 * charge — is the one that fails: every request is answered as without the fault (no 5xx), the
 * callback arrives, and after the reconciler our records agree with the acquirer's ledger. The real
 * handlers and SDK; the engine behind a proxy that fails the chosen call.
 */
const CALL_TIMEOUT_MS = 250;
const clock = new ManualClock('2031-05-05T10:00:00.000Z');
let proxy: DynamoFaultProxy;
let service: TestService;
let receiver: CallbackReceiver;
let merchant: MerchantCredentials;
let dmsMerchant: MerchantCredentials;

beforeAll(async () => {
  proxy = await startDynamoFaultProxy();
  service = await startTestService({ clock, env: { DYNAMODB_ENDPOINT: proxy.url, AWS_CALL_TIMEOUT_MS: String(CALL_TIMEOUT_MS) } });
  proxy.target = service.backend.dynamodbEndpoint;
  receiver = await startCallbackReceiver();
  merchant = await service.createMerchant({ name: 'Flaky Network Shop', settings: { notificationUrl: receiver.url } });
  dmsMerchant = await service.createMerchant({ name: 'Flaky Network DMS Shop', settings: { notificationUrl: receiver.url, dms: true } });
});
afterAll(async () => {
  await receiver?.close();
  await service?.close();
  await proxy?.close();
});

const deliver = (paymentId: string) => runCallbackJob(service.deps, { paymentIds: [paymentId] });
const answer = (a: { status: number; json?: unknown }) => {
  const json = (a.json ?? {}) as Record<string, unknown>;
  return `${a.status}${typeof json.result === 'string' ? ` ${json.result}` : ''}${typeof json.status === 'string' ? ` ${json.status}` : ''}`;
};

interface Flow {
  /** Done without faults: what the faulted part starts from. */
  setup(): Promise<{ paymentId?: string }>;
  /** The faulted part: its answers as the merchant and the customer see them, and the payment it is about. */
  run(before: { paymentId?: string }): Promise<{ answers: string[]; paymentId: string }>;
}

/** A merchant's call on a paid payment (the shop's default flow: paid at setup), then its status and callbacks. */
function followUp(
  label: string,
  shop: () => MerchantCredentials,
  call: (paymentId: string) => Promise<{ status: number; json?: unknown }>,
  statusExtra: (status: Awaited<ReturnType<typeof statusOf>>) => string = () => '',
): Flow {
  return {
    setup: async () => ({ paymentId: (await paidPayment(service, shop())).paymentId }),
    run: async ({ paymentId }) => {
      const made = await call(paymentId!);
      const status = await statusOf(service, shop(), paymentId!);
      await deliver(paymentId!);
      return { answers: [`${label} ${answer(made)}`, `status ${status.status}${statusExtra(status)}`], paymentId: paymentId! };
    },
  };
}

const FLOWS: Record<string, Flow> = {
  checkout: {
    setup: async () => ({}),
    run: async () => {
      const session = await openSession(service, merchant);
      const page = await service.request({ method: 'GET', path: session.path });
      const paid = await submitPage(service, session, { card: '01/38' });
      const status = await statusOf(service, merchant, session.paymentId);
      await deliver(session.paymentId);
      return { answers: ['session 200', `page ${page.status}`, `pay ${paid.status}`, `status ${status.status}`], paymentId: session.paymentId };
    },
  },
  '3-D Secure checkout': {
    setup: async () => ({}),
    run: async () => {
      const session = await openSession(service, merchant);
      const paid = await submitPage(service, session, { card: '05/38' });
      const challenge = new URL(String(paid.headers.location), service.baseUrl);
      const shown = await service.request({ method: 'GET', path: `${challenge.pathname}${challenge.search}` });
      const answered = await service.request({
        path: challenge.pathname,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ code: '123456', decision: 'confirm', return: challenge.searchParams.get('return') ?? '' }).toString(),
      });
      const complete = new URL(String(answered.headers.location ?? '/'), service.baseUrl);
      const back = await service.request({ method: 'GET', path: `${complete.pathname}${complete.search}` });
      const status = await statusOf(service, merchant, session.paymentId);
      await deliver(session.paymentId);
      return { answers: [`pay ${paid.status}`, `challenge ${shown.status}`, `answer ${answered.status}`, `complete ${back.status}`, `status ${status.status}`], paymentId: session.paymentId };
    },
  },
  refund: followUp('refund', () => merchant, (id) => refundOf(service, merchant, id, '5.00'), (status) => ` ${status.refunded_amount ?? ''}`),
  void: followUp('void', () => merchant, (id) => voidOf(service, merchant, id)),
  capture: followUp('capture', () => dmsMerchant, (id) => captureOf(service, dmsMerchant, id, '25.00')),
  'recurring charge': {
    setup: async () => {
      const chain = await recurringChain(service, merchant);
      return { paymentId: JSON.stringify({ token: chain.token, initTransId: chain.initTransId }) };
    },
    run: async ({ paymentId }) => {
      const chain = JSON.parse(paymentId!) as { token: string; initTransId: string };
      const charged = await recurringOf<{ payment_id?: string; status?: string }>(service, merchant, chain);
      const id = charged.json?.payment_id ?? '';
      const status = id ? (await statusOf(service, merchant, id)).status : 'none';
      if (id) await deliver(id);
      return { answers: [`recurring ${charged.status}`, `status ${status}`], paymentId: id };
    },
  },
};

/** A flow's calls and answers without faults (after one unrecorded run, as a warm function). */
async function calibrate(flow: Flow): Promise<{ calls: number; answers: string[] }> {
  await flow.run(await flow.setup());
  const before = await flow.setup();
  const start = proxy.calls.length;
  const clean = await flow.run(before);
  return { calls: proxy.calls.length - start, answers: clean.answers };
}

/** The flow with call k (of the faulted part, from 1) failed as `fault`: what went wrong, if anything. */
async function runWith(flow: Flow, expected: string[], k: number, fault: CallFault): Promise<string | undefined> {
  const before = await flow.setup();
  const start = proxy.calls.length;
  let failed: string | undefined;
  proxy.plan = (call) => {
    if (call.n - start !== k || failed) return 'pass';
    failed = `${call.operation} ${String((call.input.Key as { pk?: { S?: string } } | undefined)?.pk?.S ?? (call.input.Item as { pk?: { S?: string } } | undefined)?.pk?.S ?? '').replace(/#.*/, '#')}`;
    if (process.env.DEBUG_FAULTS) failed += ` ${JSON.stringify({ c: call.input.ConditionExpression, u: call.input.UpdateExpression })}`;
    return fault;
  };
  const received = receiver.received.length;
  const problem = (what: string) => `${fault} on call ${k} (${failed ?? 'none'}): ${what}`;
  let out: { answers: string[]; paymentId: string };
  try {
    out = await flow.run(before);
  } catch (e) {
    return problem((e as Error).message.slice(0, 300));
  } finally {
    proxy.plan = () => 'pass';
  }
  if (out.answers.join(' | ') !== expected.join(' | ')) return problem(`answers ${out.answers.join(' | ')}`);
  // Whatever the fault left in flight is the reconciler's; then nothing diverges.
  clock.advance(10 * 60_000);
  await reconcileDue(service.deps);
  const payment = await service.deps.store.findPayment(out.paymentId);
  const divergences = checkPayment(payment!, await sandboxLedger(service.deps.db, service.backend.tableName, out.paymentId), { settled: true });
  if (divergences.length) return problem(divergences.map((d) => d.problem).join('; '));
  if (!receiver.received.slice(received).some((cb) => cb.fields.id === out.paymentId)) return problem('no callback');
  return undefined;
}

/**
 * Which calls fail, and how: under SOAK=1 (CI) every call of every flow, both ways. By default the
 * checkout's every other call, hanging and losing its answer by turns, and every fourth call of the others.
 */
function faultPlan(name: string, calls: number): [number, CallFault][] {
  const all = Array.from({ length: calls }, (_, i) => i + 1);
  if (soaking()) return (['hang', 'lose-answer'] as const).flatMap((fault) => all.map((k): [number, CallFault] => [k, fault]));
  const step = name === 'checkout' ? 2 : 4;
  return all.filter((k) => (k - 1) % step === 0).map((k, i): [number, CallFault] => [k, i % 2 ? 'hang' : 'lose-answer']);
}

test.each(Object.keys(FLOWS))('%s: its DynamoDB calls in turn hang or lose their answer — answered as without it, the callback arrives, the ledger agrees', async (name) => {
  const flow = FLOWS[name]!;
  const clean = await calibrate(flow);
  expect(clean.calls).toBeGreaterThan(2);
  const problems: string[] = [];
  for (const [k, fault] of faultPlan(name, clean.calls)) {
    const problem = await runWith(flow, clean.answers, k, fault);
    if (problem) problems.push(problem);
  }
  expect(problems).toEqual([]);
}, 300_000);
