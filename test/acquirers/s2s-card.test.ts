import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { S2SCardAcquirer } from '../../lambdas/adapters/s2s-card/s2s-card-acquirer';
import { acceptNotification } from '../../lambdas/adapters/s2s-card/notifications';
import { S2SRecords } from '../../lambdas/adapters/s2s-card/records';
import { startLocalBackend, type LocalBackend } from '../../local/backend';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { acquirerContract, cardRequest, type AcquirerHarness } from './acquirer-contract';

/**
 * The S2S CARD connector against the acquirer contract, over HTTP to the fake gateway
 * (test/support/s2s-card-gateway.ts), its records on the local DynamoDB engine, the gateway's
 * callbacks received by the connector's notification handling. Then what is particular to it:
 * what goes on the wire (never a card number where it does not belong), timeouts, refunds whose
 * callback does not come, callbacks with a wrong hash.
 */
jest.setTimeout(60_000);

const TIMEOUT_MS = 800;

let backend: LocalBackend;
let gateway: FakeGateway;
let records: S2SRecords;
let acquirer: S2SCardAcquirer;
let receiver: Server;
let client: ReturnType<typeof createDocumentClient>;

beforeAll(async () => {
  backend = await startLocalBackend();
  client = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  gateway = await startFakeGateway();
  records = new S2SRecords(client, backend.tableName);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      void acceptNotification(records, gateway.password, Object.fromEntries(new URLSearchParams(body))).then((r) => res.end(r.answer));
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  gateway.notifyUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/acquirer/s2s-card/notify`;
  acquirer = new S2SCardAcquirer(
    { url: gateway.url, timeoutMs: TIMEOUT_MS, credentials: async () => ({ clientKey: gateway.clientKey, password: gateway.password }) },
    records,
    { followUpWaitMs: 1_500 },
  );
});
afterAll(async () => {
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  await gateway?.close();
  client?.destroy();
  await backend?.close();
});

acquirerContract('the S2S CARD connector', (): AcquirerHarness => ({
  acquirer,
  answerChallenge: (_key, action, confirm) => gateway.answerChallenge(action.acquirerRef, confirm),
  loseNextAnswer: async (request) => {
    gateway.delayNext('SALE', TIMEOUT_MS + 400);
    return request;
  },
  closesChallenges: false,
}));

describe('the S2S CARD connector on the wire', () => {
  test('a SALE carries the order, amount, payer and card as the guide lists them; the CVV goes nowhere else', async () => {
    const request = cardRequest(1, { amountMinor: 1050 });
    await acquirer.authorize(request);
    const sent = gateway.requests.filter((r) => r.action === 'SALE').at(-1)!.fields;
    expect(sent).toMatchObject({
      client_key: gateway.clientKey,
      order_id: request.idempotencyKey,
      order_amount: '10.50',
      order_currency: 'EUR',
      order_description: 'Order 1',
      card_exp_month: '01',
      card_exp_year: '2038',
      payer_email: 'jane.roe@example.com',
      payer_first_name: 'Jane',
      payer_last_name: 'Roe',
      payer_ip: '203.0.113.7',
      term_url_3ds: request.returnUrl,
    });
    expect(sent.hash).toMatch(/^[0-9a-f]{32}$/);
    const stored = JSON.stringify(await records.entries(request.paymentId));
    expect(stored).not.toContain('4111111111111111');
    expect(stored).not.toContain('"123"');
    expect(stored).toContain('4111111111');
  });

  test('a 3-D Secure answer goes through our signed redirect page, which names the ACS and its parameters', async () => {
    const request = cardRequest(5);
    const outcome = await acquirer.authorize(request);
    expect(outcome.kind).toBe('action');
    const url = new URL((outcome as { url: string }).url);
    expect(url.origin).toBe(new URL(request.returnUrl).origin);
    expect(url.pathname).toBe('/acquirer/s2s-card/redirect');
    const { verifiedRedirect } = await import('../../lambdas/adapters/s2s-card/transformers');
    const redirect = verifiedRedirect(url.searchParams.get('r') ?? undefined, url.searchParams.get('s') ?? undefined, gateway.password);
    expect(redirect).toMatchObject({ method: 'POST', url: `${gateway.origin}/acs/${outcome.acquirerRef}`, params: { MD: outcome.acquirerRef } });
    expect(verifiedRedirect(url.searchParams.get('r') ?? undefined, url.searchParams.get('s') ?? undefined, 'another password')).toBeUndefined();
  });

  test('a timeout of a capture leaves it unknown (thrown); a replay never sends it again and finds it done', async () => {
    const auth = cardRequest(1, { capture: false });
    const outcome = await acquirer.authorize(auth);
    const capture = { idempotencyKey: `${auth.paymentId}.capture.t1`, paymentId: auth.paymentId, authorization: { idempotencyKey: auth.idempotencyKey, acquirerRef: outcome.acquirerRef }, amountMinor: 1000, currency: 'EUR' };
    gateway.delayNext('CAPTURE', TIMEOUT_MS + 400);
    await expect(acquirer.capture(capture)).rejects.toThrow();
    const sentBefore = gateway.requests.filter((r) => r.action === 'CAPTURE').length;
    expect((await acquirer.capture(capture)).kind).toBe('approved');
    expect(gateway.requests.filter((r) => r.action === 'CAPTURE').length).toBe(sentBefore);
    expect(gateway.transactions.get(outcome.acquirerRef)?.operations.filter((o) => o.action === 'CAPTURE')).toHaveLength(1);
  });

  test('a partial refund whose callback never comes stays open: no second CREDITVOID, the late callback answers it', async () => {
    const sale = cardRequest(1);
    const outcome = await acquirer.authorize(sale);
    const refund = { idempotencyKey: `${sale.paymentId}.refund.r1`, paymentId: sale.paymentId, authorization: { idempotencyKey: sale.idempotencyKey, acquirerRef: outcome.acquirerRef }, amountMinor: 300, currency: 'EUR' };
    gateway.sendCallbacks = false;
    try {
      await expect(acquirer.refund(refund)).rejects.toThrow();
      expect((await acquirer.lookup(refund))?.kind).toBe('unknown');
      await expect(acquirer.refund(refund)).rejects.toThrow();
    } finally {
      gateway.sendCallbacks = true;
    }
    expect(gateway.requests.filter((r) => r.action === 'CREDITVOID' && r.fields.trans_id === outcome.acquirerRef)).toHaveLength(1);
    // The gateway's callback arrives late: the refund is answered from it.
    const t = gateway.transactions.get(outcome.acquirerRef)!;
    const { transactionHash } = await import('../../lambdas/adapters/s2s-card/hash');
    const result = await acceptNotification(records, gateway.password, {
      action: 'CREDITVOID', result: 'SUCCESS', status: t.status, order_id: t.orderId, trans_id: t.transId, amount: '3.00', hash: transactionHash(gateway.password, t.party, t.transId),
    });
    expect(result).toEqual({ answer: 'OK', applied: true });
    expect((await acquirer.lookup(refund))?.kind).toBe('approved');
    expect((await acquirer.refund(refund)).kind).toBe('approved');
  });

  test('a callback with a wrong hash or an unknown order is refused and changes nothing', async () => {
    gateway.sendCallbacks = false;
    const request = cardRequest(5);
    let outcome;
    try {
      outcome = await acquirer.authorize(request);
    } finally {
      gateway.sendCallbacks = true;
    }
    const forged = { action: 'SALE', result: 'SUCCESS', status: 'SETTLED', order_id: request.idempotencyKey, trans_id: outcome.acquirerRef, hash: '0'.repeat(32) };
    expect(await acceptNotification(records, gateway.password, forged)).toEqual({ answer: 'ERROR', why: 'bad-hash' });
    expect(await acceptNotification(records, gateway.password, { ...forged, order_id: 'pay_unknown.1' })).toEqual({ answer: 'ERROR', why: 'unknown-order' });
    expect((await records.entry(request.paymentId, request.idempotencyKey))?.state).toBe('action');
  });

  test('a SALE the gateway never received is found missing by lookup and barred by close; nothing resends it', async () => {
    const request = cardRequest(1);
    gateway.dropNext('SALE');
    await expect(acquirer.authorize(request)).rejects.toThrow();
    expect(await acquirer.lookup(request)).toBeUndefined();
    expect((await acquirer.close(request)).kind).toBe('declined');
    expect((await acquirer.authorize(request)).kind).toBe('declined');
    expect(gateway.byOrder(request.idempotencyKey)).toBeUndefined();
  });

  test('the gateway refusing a request (ERROR) is a decline with its message, the wrong client key included', async () => {
    const wrong = new S2SCardAcquirer({ url: gateway.url, timeoutMs: TIMEOUT_MS, credentials: async () => ({ clientKey: 'not-ours', password: gateway.password }) }, records);
    const outcome = await wrong.authorize(cardRequest(1));
    expect(outcome).toMatchObject({ kind: 'declined', reason: expect.stringContaining('not found') });
  });
});
