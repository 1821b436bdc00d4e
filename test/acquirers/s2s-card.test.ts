import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { S2SCardAcquirer } from '../../lambdas/adapters/s2s-card/s2s-card-acquirer';
import { acceptNotification } from '../../lambdas/adapters/s2s-card/notifications';
import { S2SRecords } from '../../lambdas/adapters/s2s-card/records';
import { singleAccountSettings } from '../../lambdas/adapters/s2s-card/settings';
import { startLocalBackend, type LocalBackend } from '../../local/backend';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { walletHash } from '../../lambdas/adapters/s2s-card/hash';
import { acquirerContract, cardRequest, walletRequest, type AcquirerHarness } from './acquirer-contract';

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
      void acceptNotification(acquirer, records, Object.fromEntries(new URLSearchParams(body))).then(
        (r) => res.end(r.answer),
        () => res.end('ERROR'),
      );
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  gateway.notifyUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/acquirer/s2s-card/notify`;
  acquirer = new S2SCardAcquirer(
    singleAccountSettings({ url: gateway.url, clientKey: gateway.clientKey, password: gateway.password }, TIMEOUT_MS),
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

  test('a wallet SALE carries digital_wallet and payment_token, no card field, Formula 8; the token is kept nowhere', async () => {
    const request = walletRequest(1, 'CRYPTOGRAM_3DS', 'applepay', { amountMinor: 1050, storeCredential: true });
    const token = (request.instrument as { wallet: { paymentToken: string } }).wallet.paymentToken;
    expect((await acquirer.authorize(request)).kind).toBe('approved');
    const sent = gateway.requests.filter((r) => r.action === 'SALE').at(-1)!.fields;
    expect(sent).toMatchObject({ order_id: request.idempotencyKey, order_amount: '10.50', order_currency: 'EUR', digital_wallet: 'applepay', payment_token: token, payer_email: 'jane.roe@example.com', term_url_3ds: request.returnUrl });
    for (const field of ['card_number', 'card_exp_month', 'card_exp_year', 'card_cvv2', 'card_token', 'req_token', 'recurring_init', 'auth']) expect(sent).not.toHaveProperty(field);
    expect(sent.hash).toBe(walletHash(gateway.password, 'jane.roe@example.com'));
    expect(JSON.stringify(await records.entries(request.paymentId))).not.toContain(token);
    expect([...gateway.transactions.values()].find((t) => t.orderId === request.idempotencyKey)).toMatchObject({ digitalWallet: 'applepay', party: { digits: '' } });
  });

  test('a 3-D Secure answer goes through our signed redirect page, which names the ACS and its parameters', async () => {
    const request = cardRequest(5);
    const outcome = await acquirer.authorize(request);
    expect(outcome.kind).toBe('action');
    const url = new URL((outcome as { url: string }).url);
    expect(url.origin).toBe(new URL(request.returnUrl).origin);
    expect(url.pathname).toBe('/acquirer/s2s-card/redirect');
    const { verifiedRedirect } = await import('../../lambdas/adapters/s2s-card/transformers');
    const [r, sig] = [url.searchParams.get('r') ?? undefined, url.searchParams.get('s') ?? undefined];
    const redirect = verifiedRedirect(r, sig, gateway.password, Date.now());
    expect(redirect).toMatchObject({ method: 'POST', url: `${gateway.origin}/acs/${outcome.acquirerRef}`, params: { MD: outcome.acquirerRef }, key: request.idempotencyKey.toLowerCase() });
    expect(verifiedRedirect(r, sig, 'another password', Date.now())).toBeUndefined();
    // The link expires with its attempt: 30 minutes at most.
    expect(verifiedRedirect(r, sig, gateway.password, Date.now() + 31 * 60_000)).toBeUndefined();
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

  test('a partial refund whose callback never comes is settled from the gateway\'s history: no second CREDITVOID', async () => {
    const sale = cardRequest(1);
    const outcome = await acquirer.authorize(sale);
    const refund = { idempotencyKey: `${sale.paymentId}.refund.r1`, paymentId: sale.paymentId, authorization: { idempotencyKey: sale.idempotencyKey, acquirerRef: outcome.acquirerRef }, amountMinor: 300, currency: 'EUR' };
    gateway.sendCallbacks = false;
    try {
      expect((await acquirer.refund(refund)).kind).toBe('approved');
      expect((await acquirer.lookup(refund))?.kind).toBe('approved');
      expect((await acquirer.refund(refund)).kind).toBe('approved');
    } finally {
      gateway.sendCallbacks = true;
    }
    expect(gateway.requests.filter((r) => r.action === 'CREDITVOID' && r.fields.trans_id === outcome.acquirerRef)).toHaveLength(1);
    expect(gateway.requests.some((r) => r.action === 'GET_TRANS_DETAILS' && r.fields.trans_id === outcome.acquirerRef)).toBe(true);
  });

  test('concurrent partial refunds of one amount are each answered once, their total equal to the gateway\'s', async () => {
    const sale = cardRequest(1);
    const outcome = await acquirer.authorize(sale);
    const refunds = Array.from({ length: 12 }, (_, i) => ({ idempotencyKey: `${sale.paymentId}.refund.c${i}`, paymentId: sale.paymentId, authorization: { idempotencyKey: sale.idempotencyKey, acquirerRef: outcome.acquirerRef }, amountMinor: 10, currency: 'EUR' }));
    // Every CREDITVOID callback names only the payment, and they all arrive while the refunds are open.
    const answers = await Promise.allSettled(refunds.map((r) => acquirer.refund(r)));
    const settled = await Promise.all(refunds.map((r) => acquirer.lookup(r)));
    const approved = settled.filter((o) => o?.kind === 'approved').length;
    const t = gateway.transactions.get(outcome.acquirerRef)!;
    expect(t.refundedMinor).toBe(120);
    expect(approved * 10).toBe(t.refundedMinor);
    expect(answers.filter((a) => a.status === 'fulfilled' && a.value.kind === 'declined')).toHaveLength(0);
  });

  describe('a callback is a hint: its fields are never taken as the outcome', () => {
    const { transactionHash } = jest.requireActual<typeof import('../../lambdas/adapters/s2s-card/hash')>('../../lambdas/adapters/s2s-card/hash');
    async function challenged() {
      gateway.sendCallbacks = false;
      try {
        const request = cardRequest(5);
        const outcome = await acquirer.authorize(request);
        const t = gateway.transactions.get(outcome.acquirerRef)!;
        const genuine = { action: 'SALE', result: 'REDIRECT', status: '3DS', order_id: t.orderId, trans_id: t.transId, hash: transactionHash(gateway.password, t.party, t.transId), amount: '10.00', currency: 'EUR' };
        return { request, t, genuine };
      } finally {
        gateway.sendCallbacks = true;
      }
    }

    test.each([
      ['SUCCESS / SETTLED', { result: 'SUCCESS', status: 'SETTLED' }],
      ['DECLINED / DECLINED', { result: 'DECLINED', status: 'DECLINED', decline_reason: 'Forged.' }],
      ['another amount', { result: 'SUCCESS', status: 'SETTLED', amount: '0.01' }],
    ])('a genuine 3-D Secure callback rewritten to %s changes nothing: the gateway still says 3DS', async (_name, rewrite) => {
      const { request, genuine } = await challenged();
      const result = await acceptNotification(acquirer, records, { ...genuine, ...rewrite });
      expect(result).toMatchObject({ answer: 'OK', changed: false });
      expect((await records.entry(request.paymentId, request.idempotencyKey))?.state).toBe('action');
    });

    test('a genuine callback posted under another payment\'s order is refused, and that payment is unchanged', async () => {
      const a = await challenged();
      const c = await challenged();
      await gateway.answerChallenge(a.t.transId, true);
      const result = await acceptNotification(acquirer, records, { ...a.genuine, result: 'SUCCESS', status: 'SETTLED', order_id: c.t.orderId });
      expect(result).toEqual({ answer: 'ERROR', why: 'unconfirmed' });
      expect((await records.entry(c.request.paymentId, c.request.idempotencyKey))?.state).toBe('action');
    });

    test('a forged CREDITVOID SUCCESS refunds nothing in our records', async () => {
      gateway.sendCallbacks = false;
      let sale, outcome;
      try {
        sale = cardRequest(1);
        outcome = await acquirer.authorize(sale);
      } finally {
        gateway.sendCallbacks = true;
      }
      const t = gateway.transactions.get(outcome.acquirerRef)!;
      const refund = { idempotencyKey: `${sale.paymentId}.refund.f1`, paymentId: sale.paymentId, authorization: { idempotencyKey: sale.idempotencyKey, acquirerRef: t.transId }, amountMinor: 400, currency: 'EUR' };
      // A refund of ours is open (its request lost before the gateway got it) when the forgery arrives.
      gateway.dropNext('CREDITVOID');
      await expect(acquirer.refund(refund)).rejects.toThrow();
      const forged = { action: 'CREDITVOID', result: 'SUCCESS', status: 'SETTLED', order_id: t.orderId, trans_id: t.transId, amount: '4.00', hash: transactionHash(gateway.password, t.party, t.transId) };
      expect(await acceptNotification(acquirer, records, forged)).toMatchObject({ answer: 'OK', changed: false });
      expect((await records.entry(sale.paymentId, refund.idempotencyKey))?.state).toBe('sent');
      expect(t.refundedMinor).toBe(0);
      // Asked later, the gateway has no refund for it: never received.
      expect(await acquirer.lookup(refund)).toBeUndefined();
    });
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
    expect(await acceptNotification(acquirer, records, forged)).toEqual({ answer: 'ERROR', why: 'bad-hash' });
    expect(await acceptNotification(acquirer, records, { ...forged, order_id: 'pay_unknown.1' })).toEqual({ answer: 'ERROR', why: 'unknown-order' });
    expect((await records.entry(request.paymentId, request.idempotencyKey))?.state).toBe('action');
  });

  test('look-ups for the customer\'s page are coalesced per attempt: thirty returns, one gateway request', async () => {
    const request = cardRequest(5);
    await acquirer.authorize(request);
    const asked = () => gateway.requests.filter((r) => r.action === 'GET_TRANS_STATUS_BY_ORDER' && r.fields.order_id === request.idempotencyKey).length;
    const before = asked();
    const outcomes = await Promise.all(Array.from({ length: 30 }, () => acquirer.completeAction(request)));
    expect(asked() - before).toBe(1);
    expect(outcomes.every((o) => o.kind === 'action')).toBe(true);
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
    const wrong = new S2SCardAcquirer(singleAccountSettings({ url: gateway.url, clientKey: 'not-ours', password: gateway.password }, TIMEOUT_MS), records);
    const outcome = await wrong.authorize(cardRequest(1));
    expect(outcome).toMatchObject({ kind: 'declined', reason: expect.stringContaining('not found') });
  });
});
