import { marshall } from '@aws-sdk/util-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { setDeps } from '../../lambdas/container';
import { CALLBACK_POLICY } from '../../lambdas/domain/callback';
import { handler as dispatch, paymentToDeliver } from '../../lambdas/handlers/callback-dispatch';
import type { CallbackRecord, CallbackTransport } from '../../lambdas/ports/callbacks';
import { ManualClock } from '../../lambdas/ports/clock';
import { deliverPaymentCallbacks, runCallbackJob, NO_URL_REASON } from '../../lambdas/use-cases/deliver-callbacks';
import { runCaptureJob } from '../../lambdas/use-cases/capture-job';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { lambdaContext } from '../../local/lambda-context';
import { startCallbackReceiver, verifiesWith, type CallbackReceiver, type ReceivedCallback } from '../support/callback-receiver';
import { captureOf, openSession, paidPayment, recurringChain, recurringOf, refundOf, retryOf, submitPage, voidOf } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * Server-to-server callbacks (protocol.md §4) against a real HTTP receiver on loopback: what is
 * sent for every kind of transaction, at-least-once and in-order delivery, retries with backoff,
 * dead callbacks, blocking of a URL that keeps timing out, and crashes between the state write and
 * the delivery. Time is a ManualClock; the relay runs when a test calls it.
 */
const START = new Date('2030-03-01T06:00:00Z');
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** Short, so the timeout tests take milliseconds; the rule they test does not depend on it. */
const TIMEOUT_MS = 300;

let service: TestService;
const clock = new ManualClock(START);

beforeAll(async () => {
  service = await startTestService({ clock, env: { CALLBACK_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
afterAll(() => service.close());

/** A merchant of its own with a receiver of its own, so tests do not see each other's callbacks. */
async function merchantWithReceiver(settings: Record<string, unknown> = {}): Promise<{ shop: MerchantCredentials; receiver: CallbackReceiver }> {
  const receiver = await startCallbackReceiver();
  receivers.push(receiver);
  const shop = await service.createMerchant({ name: 'Callback Shop', settings: { notificationUrl: receiver.url, ...settings } });
  return { shop, receiver };
}
const receivers: CallbackReceiver[] = [];
afterAll(() => Promise.all(receivers.map((r) => r.close())));

const relay = () => runCallbackJob(service.deps);
const recordsOf = (paymentId: string) => service.deps.callbacks.records(paymentId);
const shape = (cbs: readonly ReceivedCallback[]) => cbs.map((c) => `${c.fields.type}:${c.fields.status}:${c.fields.order_status}`);
const forPayment = (receiver: CallbackReceiver, paymentId: string) => receiver.received.filter((c) => c.fields.id === paymentId);

/** Moves the clock to the given record's next attempt and runs the relay. */
async function relayAtNextAttempt(paymentId: string, index = 0) {
  const record = (await recordsOf(paymentId)).find((r) => r.index === index);
  if (record?.nextAttemptAt) clock.set(new Date(Math.max(clock.now().getTime(), Date.parse(record.nextAttemptAt))));
  return relay();
}

/** A browser-like form post that does not follow the redirect. */
async function formPost(url: string, form: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  await res.text();
  return res.headers.get('location') ?? '';
}

beforeEach(() => clock.set(START));

describe('what is sent', () => {
  const REQUIRED = ['id', 'order_number', 'order_amount', 'order_currency', 'order_description', 'order_status', 'type', 'status', 'card', 'card_expiration_date', 'date', 'hash'];

  function expectWellFormed(cbs: readonly ReceivedCallback[], password: string) {
    for (const cb of cbs) {
      expect(cb.contentType).toBe('application/x-www-form-urlencoded; charset=utf-8');
      for (const field of REQUIRED) expect(cb.fields[field]).toBeDefined();
      expect(cb.fields.card).toMatch(/^\d{6}\*{4}\d{4}$/);
      expect(cb.fields.card_expiration_date).toMatch(/^\d{2}\/\d{4}$/);
      expect(cb.fields.date).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
      expect(verifiesWith(cb, password)).toBe(true);
      expect(verifiesWith(cb, 'not-the-password')).toBe(false);
    }
  }

  it('sale: one callback, signed, with the order, card mask, customer, IP and custom_data', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const paid = await paidPayment(service, shop, { order: { amount: '3.01', description: 'Gift, wrapped' }, extra: { custom_data: { basket: 'b-17', user_id: 'ü 42' } } });
    await relay();
    const [cb] = await receiver.waitFor(1);
    expect(receiver.received).toHaveLength(1);
    expectWellFormed([cb!], shop.password);
    expect(cb!.fields).toMatchObject({
      id: paid.paymentId,
      order_number: paid.order.number,
      order_amount: '3.01',
      order_currency: 'USD',
      order_description: 'Gift, wrapped',
      order_status: 'settled',
      type: 'sale',
      status: 'success',
      amount: '3.01',
      card: '411111****1111',
      card_expiration_date: '01/2038',
      customer_name: 'John Doe',
      'custom_data[basket]': 'b-17',
      'custom_data[user_id]': 'ü 42',
    });
    expect(cb!.fields.customer_ip).toMatch(/^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);
    // The platform's field order: id first, hash last.
    expect(cb!.pairs[0]![0]).toBe('id');
    expect(cb!.pairs.at(-1)![0]).toBe('hash');
  });

  it('3ds: the step to the challenge (3ds/success/3ds), then the sale (sale/success/settled)', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const session = await openSession(service, shop);
    const page = await submitPage(service, session, { card: '05/38' });
    const challengeUrl = new URL(String(page.headers.location ?? ''), service.baseUrl).toString();
    const back = await formPost(challengeUrl, { code: '123456', decision: 'confirm', return: new URL(challengeUrl).searchParams.get('return') ?? '' });
    await fetch(new URL(back, challengeUrl), { redirect: 'manual' }).then((r) => r.text());
    await relay();
    const cbs = await receiver.waitFor(2);
    expect(shape(cbs)).toEqual(['3ds:success:3ds', 'sale:success:settled']);
    expectWellFormed(cbs, shop.password);
  });

  it('DMS: the authorization (pending), its capture (settled), and a partial refund (waiting, then success)', async () => {
    const { shop, receiver } = await merchantWithReceiver({ dms: true });
    const paid = await paidPayment(service, shop, { order: { amount: '40.00' } });
    expect((await captureOf(service, shop, paid.paymentId, '40.00')).status).toBe(200);
    expect((await refundOf(service, shop, paid.paymentId, '15.00')).status).toBe(200);
    await relay();
    const cbs = await receiver.waitFor(4);
    expect(shape(cbs)).toEqual(['sale:success:pending', 'capture:success:settled', 'refund:waiting:settled', 'refund:success:settled']);
    expect(cbs.map((c) => c.fields.amount)).toEqual(['40.00', '40.00', '15.00', '15.00']);
    expect(cbs[2]!.fields.trans_id).toBe(cbs[3]!.fields.trans_id);
    expectWellFormed(cbs, shop.password);
  });

  it('void: settled, then void', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const paid = await paidPayment(service, shop);
    expect((await voidOf(service, shop, paid.paymentId)).status).toBe(200);
    await relay();
    const cbs = await receiver.waitFor(2);
    expect(shape(cbs)).toEqual(['sale:success:settled', 'void:success:void']);
    expectWellFormed(cbs, shop.password);
  });

  it('reversal: an authorization released at expiry', async () => {
    const { shop, receiver } = await merchantWithReceiver({ dms: true });
    const paid = await paidPayment(service, shop);
    clock.set(new Date(START.getTime() + 8 * 24 * HOUR));
    await runCaptureJob(service.deps);
    await relay();
    const cbs = await receiver.waitFor(2);
    expect(shape(cbs)).toEqual(['sale:success:pending', 'reversal:success:reversal']);
    expect(cbs[1]!.fields.id).toBe(paid.paymentId);
    expectWellFormed(cbs, shop.password);
  });

  it('recurring and retry: the charge, a soft decline, and the retry that settles it, with the chain fields', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const chain = await recurringChain(service, shop);
    const charged = await recurringOf<{ payment_id: string }>(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { amount: '10.00' } });
    const declined = await recurringOf<{ payment_id: string }>(service, shop, { initTransId: chain.initTransId, token: chain.token, order: { amount: '10.52' } });
    expect((await retryOf(service, shop, declined.json.payment_id)).status).toBe(200);
    await relay();
    await receiver.waitFor(4);
    expect(shape(forPayment(receiver, chain.paymentId))).toEqual(['sale:success:settled']);
    expect(shape(forPayment(receiver, charged.json.payment_id))).toEqual(['recurring:success:settled']);
    const retried = forPayment(receiver, declined.json.payment_id);
    expect(shape(retried)).toEqual(['recurring:fail:decline', 'recurring:success:settled']);
    expect(retried[0]!.fields.reason).toBeTruthy();
    for (const cb of [...forPayment(receiver, charged.json.payment_id), ...retried]) {
      expect(cb.fields).toMatchObject({ recurring_token: chain.token, recurring_init_trans_id: chain.initTransId });
    }
    expectWellFormed(receiver.received, shop.password);
  });

  it('nothing is posted for a merchant without a notification URL; the record says why', async () => {
    const shop = await service.createMerchant({ name: 'No URL Shop' });
    const paid = await paidPayment(service, shop);
    await relay();
    expect(await recordsOf(paid.paymentId)).toEqual([expect.objectContaining({ state: 'skipped', lastError: NO_URL_REASON, attemptCount: 0 })]);
    expect(await service.deps.callbacks.due(new Date('2100-01-01T00:00:00Z'), 100)).not.toContain(paid.paymentId);
  });
});

describe('retries', () => {
  it('a receiver answering 500 twice then 200 gets it once more, and later callbacks wait their turn', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    receiver.script(500, 500);
    const paid = await paidPayment(service, shop);
    await relay();
    expect((await voidOf(service, shop, paid.paymentId)).status).toBe(200);
    // The void is due now, but the sale waits for its retry: nothing may overtake it.
    await relay();
    expect(shape(receiver.received)).toEqual(['sale:success:settled']);
    await relayAtNextAttempt(paid.paymentId);
    await relayAtNextAttempt(paid.paymentId);
    expect(receiver.received.map((c) => `${c.fields.type}:${c.answer}`)).toEqual(['sale:500', 'sale:500', 'sale:200', 'void:200']);
    const [sale, voided] = await recordsOf(paid.paymentId);
    expect(sale).toMatchObject({ state: 'delivered', attemptCount: 3 });
    expect(sale!.attempts.map((a) => a.httpStatus)).toEqual([500, 500, 200]);
    expect(sale!.attempts[0]).toMatchObject({ url: receiver.url, error: 'HTTP 500' });
    for (const a of sale!.attempts) expect(a.latencyMs).toBeGreaterThanOrEqual(0);
    expect(voided).toMatchObject({ state: 'delivered', attemptCount: 1 });
    // Delivered: the payment has left the outbox.
    await relay();
    expect(receiver.received).toHaveLength(4);
  });

  it('backs off exponentially with jitter, at most an hour apart, and gives up after 24 hours: dead, then the next callback goes', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    receiver.fallback = 503;
    const paid = await paidPayment(service, shop);
    expect((await voidOf(service, shop, paid.paymentId)).status).toBe(200);
    await relay();
    const gaps: number[] = [];
    let record: CallbackRecord | undefined;
    for (let i = 0; i < 60; i++) {
      record = (await recordsOf(paid.paymentId))[0];
      if (record?.state !== 'pending') break;
      gaps.push(Date.parse(record.nextAttemptAt!) - clock.now().getTime());
      receiver.fallback = 503;
      await relayAtNextAttempt(paid.paymentId);
    }
    expect(record).toMatchObject({ state: 'dead', lastError: 'HTTP 503' });
    const lifetime = Date.parse(record!.deadAt!) - Date.parse(record!.roundStartedAt!);
    expect(lifetime).toBeGreaterThanOrEqual(24 * HOUR);
    expect(lifetime).toBeLessThan(25 * HOUR);
    // Equal jitter: each delay lies between half and all of 30 s · 2^(n-1), capped at one hour.
    gaps.forEach((gap, i) => {
      const nominal = Math.min(HOUR, 30 * SECOND * 2 ** i);
      expect(gap).toBeGreaterThanOrEqual(nominal / 2);
      expect(gap).toBeLessThanOrEqual(nominal);
    });
    expect(record!.attemptCount).toBe(gaps.length + 1);
    expect(record!.attempts.length).toBeLessThanOrEqual(CALLBACK_POLICY.attemptsKept);
    // The void was held back behind the sale all day; once the sale is dead it goes at once.
    const sent = forPayment(receiver, paid.paymentId);
    expect(sent.map((c) => c.fields.type)).toEqual([...Array.from({ length: record!.attemptCount }, () => 'sale'), 'void']);
    receiver.fallback = 200;
    await relayAtNextAttempt(paid.paymentId, 1);
    expect((await recordsOf(paid.paymentId))[1]).toMatchObject({ state: 'delivered', attemptCount: 2 });
    const dead = await service.deps.callbacks.dead(shop.merchant_key, 10);
    expect(dead.records).toEqual([expect.objectContaining({ paymentId: paid.paymentId, index: 0, state: 'dead' })]);
  }, 90_000);

  it.each([[201], [204], [299]])('any 2xx is delivered: %i', async (answer) => {
    const { shop, receiver } = await merchantWithReceiver();
    receiver.script(answer);
    const paid = await paidPayment(service, shop);
    await relay();
    expect((await recordsOf(paid.paymentId))[0]).toMatchObject({ state: 'delivered', attemptCount: 1 });
  });

  it.each([[302], [404], [500]])('anything else is retried, a redirect is not followed: %i', async (answer) => {
    const { shop, receiver } = await merchantWithReceiver();
    receiver.script(answer);
    const paid = await paidPayment(service, shop);
    await relay();
    expect(receiver.received).toHaveLength(1);
    expect((await recordsOf(paid.paymentId))[0]).toMatchObject({ state: 'pending', attemptCount: 1, lastError: `HTTP ${answer}` });
  });

  it('a connection refused is a failed attempt with the reason, retried like any other', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    await receiver.close();
    const paid = await paidPayment(service, shop);
    await relay();
    const [record] = await recordsOf(paid.paymentId);
    expect(record).toMatchObject({ state: 'pending', attemptCount: 1 });
    expect(record!.attempts[0]!.httpStatus).toBeUndefined();
    expect(record!.attempts[0]!.error).toMatch(/ECONNREFUSED/);
  });
});

describe('a URL that keeps timing out', () => {
  it('five timeouts within five minutes block it for fifteen minutes; then deliveries resume', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    receiver.script('hang', 'hang', 'hang', 'hang', 'hang');
    const first = await Promise.all(Array.from({ length: 5 }, () => paidPayment(service, shop)));
    await relay();
    expect(receiver.received).toHaveLength(5);
    for (const p of first) {
      const [record] = await recordsOf(p.paymentId);
      expect(record!.attempts[0]).toMatchObject({ error: `No answer within ${TIMEOUT_MS} ms.` });
      expect(record!.attempts[0]!.latencyMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    }
    const health = await service.deps.callbacks.endpointHealth(receiver.url);
    expect(health.blockedUntil).toBe(new Date(START.getTime() + 15 * MINUTE).toISOString());

    // Blocked: neither the retries nor a new payment's callback are posted.
    const later = await paidPayment(service, shop);
    for (const minutes of [1, 5, 14]) {
      clock.set(new Date(START.getTime() + minutes * MINUTE + 1));
      await relay();
    }
    expect(receiver.received).toHaveLength(5);
    const [waiting] = await recordsOf(later.paymentId);
    expect(waiting).toMatchObject({ state: 'pending', attemptCount: 0, nextAttemptAt: health.blockedUntil });

    clock.set(new Date(START.getTime() + 15 * MINUTE));
    await relay();
    expect(receiver.received).toHaveLength(11);
    for (const p of [...first, later]) expect((await recordsOf(p.paymentId))[0]).toMatchObject({ state: 'delivered' });
  });

  it('timeouts spread over more than five minutes do not block', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const payments = [];
    for (let i = 0; i < 5; i++) {
      clock.set(new Date(START.getTime() + i * 2 * MINUTE));
      receiver.script('hang');
      payments.push(await paidPayment(service, shop));
      await relay();
    }
    expect((await service.deps.callbacks.endpointHealth(receiver.url)).blockedUntil).toBeUndefined();
  });
});

describe('nothing is lost', () => {
  it('the write that changes the status puts its callback in the outbox: a process that dies right after loses nothing', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const paid = await paidPayment(service, shop);
    await relay();
    // The void's write commits; the process "dies" before anything else runs.
    const stored = await service.deps.store.findPayment(paid.paymentId);
    await service.deps.store.apply(paid.paymentId, {
      guard: { statusIn: ['settled'] },
      change: {
        set: { status: 'void', updatedAt: clock.now().toISOString() },
        append: [{ transId: 'crash-void', type: 'void', status: 'success', amountMinor: stored!.order.amountMinor, at: clock.now().toISOString() }],
      },
    });
    const item = (await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: key.payment(paid.paymentId) }))).Item!;
    expect(item).toMatchObject({ sendPk: expect.stringMatching(/^OUTBOX#\d+$/), callbacksDone: 1 });
    expect(await service.deps.callbacks.due(clock.now(), 100)).toContain(paid.paymentId);
    await relay();
    expect(shape(forPayment(receiver, paid.paymentId))).toEqual(['sale:success:settled', 'void:success:void']);
  });

  it('a relay that dies after posting, before recording, leaves the callback leased; it is sent again once the lease ends', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const paid = await paidPayment(service, shop);
    const dying: CallbackTransport = {
      post: async (url, body, timeout) => {
        await service.deps.transport.post(url, body, timeout);
        throw new Error('process killed');
      },
    };
    const report = await runCallbackJob({ ...service.deps, transport: dying });
    expect(report).toMatchObject({ failed: 1, failedPaymentIds: [paid.paymentId] });
    expect(receiver.received).toHaveLength(1);
    // Another relay does not touch it while the lease runs.
    await relay();
    expect(receiver.received).toHaveLength(1);
    clock.set(new Date(START.getTime() + TIMEOUT_MS + 21 * SECOND));
    await relay();
    expect(shape(receiver.received)).toEqual(['sale:success:settled', 'sale:success:settled']);
    expect((await recordsOf(paid.paymentId))[0]).toMatchObject({ state: 'delivered', attemptCount: 1 });
  });

  it('ten relays racing over the same payments deliver each callback once, in order', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const payments = await Promise.all(Array.from({ length: 4 }, () => paidPayment(service, shop)));
    await Promise.all(payments.map((p) => voidOf(service, shop, p.paymentId)));
    await Promise.all(Array.from({ length: 10 }, () => relay()));
    await relay();
    expect(receiver.received).toHaveLength(8);
    for (const p of payments) expect(shape(forPayment(receiver, p.paymentId))).toEqual(['sale:success:settled', 'void:success:void']);
  });

  it("a claim made from a read another relay's delivery overtook is refused: nothing is posted twice, no lease is left", async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const paid = await paidPayment(service, shop);
    await voidOf(service, shop, paid.paymentId);
    // Relay B has read the payment (its sale due) and sends its lease; just before the write lands,
    // relay A delivers the sale and gives its lease back, the void still waiting: the entry and
    // the lease read as B saw them, the count of callbacks done does not.
    const db = service.deps.db;
    const realSend = db.send.bind(db);
    let overtaken = false;
    const spy = jest.spyOn(db, 'send').mockImplementation((async (command: { input: { UpdateExpression?: string } }) => {
      if (!overtaken && command.input.UpdateExpression?.startsWith('SET sendLease')) {
        overtaken = true;
        await deliverPaymentCallbacks(service.deps, paid.paymentId, { max: 1 });
      }
      return realSend(command as never);
    }) as never);
    try {
      await deliverPaymentCallbacks(service.deps, paid.paymentId, { max: 1 });
    } finally {
      spy.mockRestore();
    }
    expect(overtaken).toBe(true);
    expect(shape(forPayment(receiver, paid.paymentId))).toEqual(['sale:success:settled']);
    // No lease was taken from the stale read: the next relay, at the same moment, sends the void.
    await relay();
    expect(shape(forPayment(receiver, paid.paymentId))).toEqual(['sale:success:settled', 'void:success:void']);
  });
});

describe('the stream dispatcher (the cloud fast path)', () => {
  const imageOf = async (paymentId: string) =>
    marshall((await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: key.payment(paymentId) }))).Item!, { removeUndefinedValues: true });
  const streamEvent = (records: { oldImage?: Record<string, unknown>; newImage: Record<string, unknown>; seq: string }[]): DynamoDBStreamEvent => ({
    Records: records.map((r) => ({
      eventName: r.oldImage ? 'MODIFY' : 'INSERT',
      dynamodb: {
        Keys: { pk: r.newImage.pk as never, sk: r.newImage.sk as never },
        NewImage: r.newImage as never,
        ...(r.oldImage ? { OldImage: r.oldImage as never } : {}),
        SequenceNumber: r.seq,
      },
    })),
  });
  // Made as the invocation starts: a context made when the file was collected had spent its 60 s
  // when the tests before this one took that long on a busy machine, and the dispatcher, out of
  // time, rightly delivered nothing.
  const invocation = (): Context => lambdaContext('CallbackDispatcher', 60);

  it('delivers the payments whose write appended a transaction, and ignores writes that did not', async () => {
    const { shop, receiver } = await merchantWithReceiver();
    const paid = await paidPayment(service, shop);
    const settled = await imageOf(paid.paymentId);
    const { transactions: _t, ...withoutHistory } = settled;
    const before = { ...withoutHistory, transactions: { L: [] } };
    expect(paymentToDeliver({ dynamodb: { NewImage: settled as never, OldImage: before as never } })).toBe(paid.paymentId);
    // A lease or a status read changes the item but adds no work.
    expect(paymentToDeliver({ dynamodb: { NewImage: settled as never, OldImage: settled as never } })).toBeUndefined();

    setDeps(service.deps);
    const answer = await dispatch(streamEvent([{ oldImage: before, newImage: settled, seq: '1' }]), invocation());
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(shape(forPayment(receiver, paid.paymentId))).toEqual(['sale:success:settled']);
  });
});
