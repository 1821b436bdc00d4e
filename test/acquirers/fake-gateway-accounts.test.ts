import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cardDigits, hashMatches, orderHash, saleHash, tokenSaleHash, transactionHash, type HashParty } from '../../lambdas/adapters/s2s-card/hash';
import { startFakeGateway, type FakeGateway } from '../support/s2s-card-gateway';
import { until } from '../support/until';

/**
 * The fake S2S CARD gateway serves several merchant accounts at one URL, as the real one does: a
 * transaction belongs to the account whose client key made it, every request is hashed with its own
 * account's password, another account's transaction is not found (the very answer an unknown one
 * gets) and is never touched, callbacks go to the owner's Notification URL signed with the owner's
 * password, and the gateway's ledger per account holds exactly that account's transactions. Driven
 * with raw form posts, as the connector sends them.
 */
jest.setTimeout(30_000);

type Fields = Record<string, string>;

/** A Notification URL that keeps what it receives and answers OK. */
interface Receiver {
  readonly url: string;
  readonly received: Fields[];
  close(): Promise<void>;
}

async function receiver(): Promise<Receiver> {
  const received: Fields[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push(Object.fromEntries(new URLSearchParams(body)));
      res.end('OK');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const post = (url: string, fields: Fields) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), signal: AbortSignal.timeout(5_000) }).then(
    async (r) => (await r.json()) as Record<string, unknown>,
  );

/** Waits for a condition on what arrived over HTTP (callbacks are sent after the answer). */
async function waitFor(what: string, done: () => boolean) {
  if (!(await until(done))) throw new Error(`timed out waiting for ${what}`);
}

const CARD = '4111111111111111';

/** One merchant on its own gateway account, paying with its own payer. */
interface Merchant {
  readonly clientKey: string;
  password: string;
  readonly party: HashParty;
  readonly inbox: Receiver;
}

let gateway: FakeGateway;
let shared: Receiver;
let a: Merchant;
let b: Merchant;

beforeEach(async () => {
  const [inboxA, inboxB] = [await receiver(), await receiver()];
  shared = await receiver();
  const bKey = randomUUID();
  gateway = await startFakeGateway({ notifyUrl: inboxA.url, accounts: [{ clientKey: bKey, password: 'b-password-1', notifyUrl: inboxB.url }] });
  a = { clientKey: gateway.clientKey, password: gateway.password, party: { email: 'payer.a@example.com', digits: cardDigits(CARD) }, inbox: inboxA };
  b = { clientKey: bKey, password: 'b-password-1', party: { email: 'payer.b@example.com', digits: cardDigits(CARD) }, inbox: inboxB };
});

afterEach(async () => {
  await gateway.close();
  await Promise.all([a.inbox.close(), b.inbox.close(), shared.close()]);
});

const saleFields = (m: Merchant, orderId: string, extra: Fields = {}): Fields => ({
  action: 'SALE',
  client_key: m.clientKey,
  order_id: orderId,
  order_amount: '10.00',
  order_currency: 'EUR',
  order_description: 'Accounts',
  card_number: CARD,
  card_exp_month: '01',
  card_exp_year: '2038',
  card_cvv2: '123',
  payer_email: m.party.email,
  payer_ip: '198.51.100.7',
  term_url_3ds: 'https://shop.example/back',
  hash: saleHash(m.password, m.party),
  ...extra,
});

async function pay(m: Merchant, orderId: string, extra: Fields = {}) {
  const answer = await post(gateway.url, saleFields(m, orderId, extra));
  expect(answer).toMatchObject({ result: 'SUCCESS', order_id: orderId });
  return answer as { trans_id: string; status: string; recurring_token?: string; card_token?: string };
}

/** A request about a trans_id, sent with `sender`'s client key, hashed (Formula 2) with `password` and `party`. */
const byTransId = (action: string, sender: Merchant, transId: string, party: HashParty, password = sender.password, extra: Fields = {}) =>
  post(gateway.url, { action, client_key: sender.clientKey, trans_id: transId, hash: transactionHash(password, party, transId), ...extra });

/** What arrived at a Notification URL, in a stable order (separate connections may overtake each other). */
const arrived = (inbox: Receiver) => inbox.received.map((c) => [c.action, c.trans_id, c.amount].join(' ')).sort();

/** A callback verifies with Formula 2 under this password, as the connector checks it (the payer's e-mail and card digits it stored). */
const verifies = (cb: Fields, password: string, party: HashParty) => hashMatches(cb.hash, transactionHash(password, party, cb.trans_id!));

describe('fake S2S CARD gateway: many merchant accounts at one URL', () => {
  it('lists its accounts; one opened later gets its own random credentials; a taken client key is refused', () => {
    expect(gateway.accounts()).toEqual([a.clientKey, b.clientKey]);
    const c = gateway.addAccount();
    const d = gateway.addAccount({ password: 'd-password' });
    expect(gateway.accounts()).toEqual([a.clientKey, b.clientKey, c.clientKey, d.clientKey]);
    expect(new Set([a.clientKey, b.clientKey, c.clientKey, d.clientKey]).size).toBe(4);
    expect(c.password).toMatch(/^[0-9a-f]{32}$/);
    expect(c.password).not.toBe(a.password);
    expect(d.password).toBe('d-password');
    expect(() => gateway.addAccount({ clientKey: b.clientKey })).toThrow(/exists already/);
    expect(() => gateway.ledgerOfAccount('no-such-account')).toThrow(/no account/);
  });

  it('each account reads and refunds its own transaction; the other account’s is not found, exactly as an unknown one, and nothing changes', async () => {
    const ta = await pay(a, 'pay_a.1');
    const tb = await pay(b, 'pay_b.1');
    const held = await pay(a, 'pay_a_auth.1', { auth: 'Y' });

    // Its own: answered.
    expect(await byTransId('GET_TRANS_STATUS', a, ta.trans_id, a.party)).toMatchObject({ result: 'SUCCESS', status: 'SETTLED', trans_id: ta.trans_id, order_id: 'pay_a.1' });
    expect(await byTransId('GET_TRANS_DETAILS', b, tb.trans_id, b.party)).toMatchObject({ result: 'SUCCESS', status: 'SETTLED', trans_id: tb.trans_id, mail: b.party.email, transactions: [{ type: 'sale', status: 'success' }] });
    expect(await post(gateway.url, { action: 'GET_TRANS_STATUS_BY_ORDER', client_key: b.clientKey, order_id: 'pay_b.1', hash: orderHash(b.password, b.party, 'pay_b.1') })).toMatchObject({ result: 'SUCCESS', trans_id: tb.trans_id });

    // The other's: for every action, with the sender's own password or even with the owner's, the
    // answer an unknown trans_id or order gets, and the owner's ledger stays as it was.
    const ledgerA = gateway.ledgerOfAccount(a.clientKey);
    const ledgerB = gateway.ledgerOfAccount(b.clientKey);
    const unknown = randomUUID();
    for (const action of ['GET_TRANS_STATUS', 'GET_TRANS_DETAILS', 'CREDITVOID', 'CAPTURE', 'VOID']) {
      const extra: Fields = action === 'CREDITVOID' ? { amount: '1.00' } : {};
      const notFound = await byTransId(action, b, unknown, a.party, b.password, extra);
      expect({ action, answer: notFound }).toEqual({ action, answer: { result: 'ERROR', error_code: 208001, error_message: 'Payment not found.' } });
      expect({ action, answer: await byTransId(action, b, ta.trans_id, a.party, b.password, extra) }).toEqual({ action, answer: notFound });
      expect({ action, answer: await byTransId(action, b, ta.trans_id, a.party, a.password, extra) }).toEqual({ action, answer: notFound });
      expect({ action, answer: await byTransId(action, b, held.trans_id, a.party, a.password) }).toEqual({ action, answer: notFound });
      expect({ action, answer: await byTransId(action, a, tb.trans_id, b.party, b.password, extra) }).toEqual({ action, answer: notFound });
    }
    const byOrder = (sender: Merchant, orderId: string, password: string, party: HashParty) =>
      post(gateway.url, { action: 'GET_TRANS_STATUS_BY_ORDER', client_key: sender.clientKey, order_id: orderId, hash: orderHash(password, party, orderId) });
    const noOrder = await byOrder(b, 'pay_none.1', b.password, a.party);
    expect(noOrder).toEqual({ result: 'ERROR', error_code: 208001, error_message: 'Payment not found.' });
    expect(await byOrder(b, 'pay_a.1', b.password, a.party)).toEqual(noOrder);
    expect(await byOrder(b, 'pay_a.1', a.password, a.party)).toEqual(noOrder);
    expect(await byOrder(a, 'pay_b.1', b.password, b.party)).toEqual(noOrder);
    expect(gateway.ledgerOfAccount(a.clientKey)).toEqual(ledgerA);
    expect(gateway.ledgerOfAccount(b.clientKey)).toEqual(ledgerB);

    // Its own refund works, and the callbacks of each account are its own only: nothing came of the above.
    expect(await byTransId('CREDITVOID', a, ta.trans_id, a.party, a.password, { amount: '4.00' })).toMatchObject({ result: 'ACCEPTED', trans_id: ta.trans_id });
    expect(await byTransId('CREDITVOID', b, tb.trans_id, b.party, b.password, { amount: '3.00' })).toMatchObject({ result: 'ACCEPTED', trans_id: tb.trans_id });
    expect(gateway.ledgerOf('pay_a')).toMatchObject([{ refundedMinor: 400, transactions: [{ type: 'sale' }, { type: 'refund', status: 'success', amountMinor: 400 }] }]);
    expect(gateway.ledgerOf('pay_b')).toMatchObject([{ refundedMinor: 300, transactions: [{ type: 'sale' }, { type: 'refund', status: 'success', amountMinor: 300 }] }]);
    await waitFor('both refunds’ callbacks', () => a.inbox.received.some((c) => c.action === 'CREDITVOID') && b.inbox.received.some((c) => c.action === 'CREDITVOID'));
    expect(arrived(a.inbox)).toEqual([`CREDITVOID ${ta.trans_id} 4.00`, `SALE ${held.trans_id} 10.00`, `SALE ${ta.trans_id} 10.00`].sort());
    expect(arrived(b.inbox)).toEqual([`CREDITVOID ${tb.trans_id} 3.00`, `SALE ${tb.trans_id} 10.00`].sort());
  });

  it('an order id is its account’s own: the same one at two accounts is two payments, neither a duplicate of the other', async () => {
    const ta = await pay(a, 'pay_same.1');
    const tb = await pay(b, 'pay_same.1');
    expect(tb.trans_id).not.toBe(ta.trans_id);
    expect(await post(gateway.url, saleFields(b, 'pay_same.1'))).toMatchObject({ result: 'ERROR', error_code: 400 });
    for (const [m, t] of [[a, ta], [b, tb]] as const) {
      expect(await post(gateway.url, { action: 'GET_TRANS_STATUS_BY_ORDER', client_key: m.clientKey, order_id: 'pay_same.1', hash: orderHash(m.password, m.party, 'pay_same.1') })).toMatchObject({ trans_id: t.trans_id });
      expect(gateway.byOrder('pay_same.1', m.clientKey)?.transId).toBe(t.trans_id);
    }
    expect(gateway.byOrder('pay_same.1')?.transId).toBe(ta.trans_id);
  });

  it('a request with one account’s client key and the other’s password fails 204001; an unknown client key 204002', async () => {
    const ta = await pay(a, 'pay_a.1');
    const crossed = { ...a, password: b.password };
    expect(await post(gateway.url, saleFields(crossed, 'pay_a.2'))).toEqual({ result: 'ERROR', error_code: 204001, error_message: 'Hash is not valid.' });
    for (const action of ['GET_TRANS_STATUS', 'GET_TRANS_DETAILS', 'CREDITVOID']) {
      expect({ action, answer: await byTransId(action, a, ta.trans_id, a.party, b.password) }).toEqual({ action, answer: { result: 'ERROR', error_code: 204001, error_message: 'Hash is not valid.' } });
    }
    expect(await post(gateway.url, { action: 'GET_TRANS_STATUS_BY_ORDER', client_key: a.clientKey, order_id: 'pay_a.1', hash: orderHash(b.password, a.party, 'pay_a.1') })).toMatchObject({ error_code: 204001 });
    expect(await post(gateway.url, saleFields({ ...b, clientKey: randomUUID() }, 'pay_x.1'))).toEqual({ result: 'ERROR', error_code: 204002, error_message: 'Enabled merchant mappings or MIDs not found.' });
    expect(gateway.ledgerOfAccount(a.clientKey).map((t) => t.orderId)).toEqual(['pay_a.1']);
    expect(gateway.ledgerOfAccount(b.clientKey)).toEqual([]);
  });

  it('a card token or recurring token of another account is refused as an unknown one', async () => {
    const first = await pay(a, 'pay_a.1', { req_token: 'Y', recurring_init: 'Y' });
    expect(first.card_token).toBeDefined();
    expect(first.recurring_token).toBeDefined();
    const tokenSale = (m: Merchant, orderId: string, token: string) => ({
      action: 'SALE', client_key: m.clientKey, order_id: orderId, order_amount: '5.00', order_currency: 'EUR', order_description: 'Accounts', card_token: token,
      payer_email: m.party.email, payer_ip: '198.51.100.7', term_url_3ds: 'https://shop.example/back', hash: tokenSaleHash(m.password, m.party.email, token),
    });
    const recurring = (m: Merchant, orderId: string, firstTransId: string, token: string) => ({
      action: 'RECURRING_SALE', client_key: m.clientKey, order_id: orderId, order_amount: '5.00', order_description: 'Accounts',
      recurring_first_trans_id: firstTransId, recurring_token: token, hash: saleHash(m.password, a.party),
    });

    const unknownCardToken = await post(gateway.url, tokenSale(b, 'pay_b.1', 'f'.repeat(64)));
    expect(unknownCardToken).toMatchObject({ result: 'ERROR', error_code: 205005 });
    expect(await post(gateway.url, tokenSale(b, 'pay_b.2', first.card_token!))).toEqual(unknownCardToken);
    const unknownRecurring = await post(gateway.url, recurring(b, 'pay_b.3', randomUUID(), randomUUID()));
    expect(unknownRecurring).toMatchObject({ result: 'ERROR', error_code: 100000, errors: [{ error_message: 'recurring_token: The recurring token is not valid.' }] });
    expect(await post(gateway.url, recurring(b, 'pay_b.4', first.trans_id, first.recurring_token!))).toEqual(unknownRecurring);
    expect(gateway.ledgerOfAccount(b.clientKey)).toEqual([]);

    // The owner's own tokens work.
    expect(await post(gateway.url, tokenSale(a, 'pay_a.2', first.card_token!))).toMatchObject({ result: 'SUCCESS' });
    expect(await post(gateway.url, recurring(a, 'pay_a.3', first.trans_id, first.recurring_token!))).toMatchObject({ result: 'SUCCESS' });
    expect(gateway.ledgerOfAccount(a.clientKey).map((t) => t.orderId)).toEqual(['pay_a.1', 'pay_a.2', 'pay_a.3']);
  });

  it('callbacks of each account go to its own Notification URL and verify with its own password only, a chargeback’s too', async () => {
    const ta = await pay(a, 'pay_a.1');
    const tb = await pay(b, 'pay_b.1');
    await waitFor('the sale callbacks', () => a.inbox.received.length === 1 && b.inbox.received.length === 1);
    expect(gateway.chargeback(tb.trans_id, 600)).toEqual({ ok: true, amountMinor: 600 });
    expect(gateway.chargeback(ta.trans_id)).toEqual({ ok: true, amountMinor: 1000 });
    await waitFor('the callbacks', () => a.inbox.received.length === 2 && b.inbox.received.length === 2);

    expect(a.inbox.received.map((c) => [c.action, c.trans_id])).toEqual([['SALE', ta.trans_id], ['CHARGEBACK', ta.trans_id]]);
    expect(b.inbox.received.map((c) => [c.action, c.trans_id])).toEqual([['SALE', tb.trans_id], ['CHARGEBACK', tb.trans_id]]);
    expect(b.inbox.received[1]).toMatchObject({ status: 'CHARGEBACK', amount: '6.00', reason_code: '4837' });
    for (const cb of a.inbox.received) expect([verifies(cb, a.password, a.party), verifies(cb, b.password, a.party)]).toEqual([true, false]);
    for (const cb of b.inbox.received) expect([verifies(cb, b.password, b.party), verifies(cb, a.password, b.party)]).toEqual([true, false]);
    expect(gateway.ledgerOf('pay_b')).toMatchObject([{ status: 'CHARGEBACK', chargedBackMinor: 600, clientKey: b.clientKey }]);
  });

  it('held, repeated and late callbacks each reach the owner’s URL signed with the owner’s password; an account without a URL of its own uses the gateway’s', async () => {
    const c = gateway.addAccount();
    const cm: Merchant = { clientKey: c.clientKey, password: c.password, party: { email: 'payer.c@example.com', digits: cardDigits(CARD) }, inbox: shared };
    gateway.adversity = { ...gateway.adversity, callbacks: { lose: 0, repeat: 1, beforeAnswer: 0, jitterMs: 30, hold: true } };
    const ta = await pay(a, 'pay_a.1');
    const tb = await pay(b, 'pay_b.1');
    const tc = await pay(cm, 'pay_c.1');
    // The first account's URL is the gateway's: moving it moves C's callbacks too.
    gateway.notifyUrl = shared.url;
    gateway.setNotifyUrl(a.clientKey, a.inbox.url);
    await gateway.deliverCallbacks();

    // Four copies of each sale's callback (three repeats), all held, then sent at once in a random order.
    expect(gateway.faults).toMatchObject({ 'callback held': 12, 'callback repeated': 3 });
    for (const [m, t] of [[a, ta], [b, tb], [cm, tc]] as const) {
      expect(arrived(m.inbox)).toEqual(Array(4).fill(`SALE ${t.trans_id} 10.00`));
      for (const cb of m.inbox.received) expect([verifies(cb, m.password, m.party), verifies(cb, m === b ? a.password : b.password, m.party)]).toEqual([true, false]);
    }
  });

  it('the ledger per account lists exactly its own transactions, each with its payment; ledgerOf and accountOf work across accounts', async () => {
    const ta1 = await pay(a, 'pay_a1.1');
    const ta2 = await pay(a, 'pay_a2.1', { auth: 'Y' });
    const tb1 = await pay(b, 'pay_b1.1');
    const declined = await post(gateway.url, saleFields(b, 'pay_b1.2', { card_exp_month: '02' }));
    expect(declined).toMatchObject({ result: 'DECLINED' });
    expect(await byTransId('CAPTURE', a, ta2.trans_id, a.party, a.password, { amount: '7.00' })).toMatchObject({ result: 'SUCCESS' });
    expect(await byTransId('CREDITVOID', b, tb1.trans_id, b.party, b.password, { amount: '2.50' })).toMatchObject({ result: 'ACCEPTED' });

    expect(gateway.ledgerOfAccount(a.clientKey)).toEqual([
      expect.objectContaining({ transId: ta1.trans_id, orderId: 'pay_a1.1', paymentId: 'pay_a1', clientKey: a.clientKey, status: 'SETTLED', capturedMinor: 1000 }),
      expect.objectContaining({ transId: ta2.trans_id, orderId: 'pay_a2.1', paymentId: 'pay_a2', clientKey: a.clientKey, status: 'SETTLED', auth: true, capturedMinor: 700 }),
    ]);
    expect(gateway.ledgerOfAccount(b.clientKey)).toEqual([
      expect.objectContaining({ transId: tb1.trans_id, orderId: 'pay_b1.1', paymentId: 'pay_b1', clientKey: b.clientKey, status: 'SETTLED', refundedMinor: 250 }),
      expect.objectContaining({ orderId: 'pay_b1.2', paymentId: 'pay_b1', clientKey: b.clientKey, status: 'DECLINED' }),
    ]);
    // The same entries ledgerOf gives, per payment, whichever account.
    expect(gateway.ledgerOf('pay_a2')).toEqual([gateway.ledgerOfAccount(a.clientKey)[1]]);
    expect(gateway.ledgerOf('pay_b1')).toEqual(gateway.ledgerOfAccount(b.clientKey));
    expect(gateway.paymentIds().sort()).toEqual(['pay_a1', 'pay_a2', 'pay_b1']);
    expect([gateway.accountOf(ta1.trans_id), gateway.accountOf('pay_a2.1'), gateway.accountOf(tb1.trans_id), gateway.accountOf('pay_b1.2'), gateway.accountOf('pay_none.1')]).toEqual([
      a.clientKey,
      a.clientKey,
      b.clientKey,
      b.clientKey,
      undefined,
    ]);
  });

  it('after a password rotation the old password fails 204001, the new one works, and callbacks (held ones too) are signed with the new one', async () => {
    const tb = await pay(b, 'pay_b.1');
    await waitFor('the sale callback', () => b.inbox.received.length === 1);
    expect(verifies(b.inbox.received[0]!, 'b-password-1', b.party)).toBe(true);

    gateway.adversity = { ...gateway.adversity, callbacks: { ...gateway.adversity.callbacks, hold: true } };
    expect(await byTransId('CREDITVOID', b, tb.trans_id, b.party, b.password, { amount: '1.00' })).toMatchObject({ result: 'ACCEPTED' });
    gateway.rotatePassword(b.clientKey, 'b-password-2');
    const old = b.password;
    b.password = 'b-password-2';

    expect(await byTransId('GET_TRANS_STATUS', b, tb.trans_id, b.party, old)).toMatchObject({ result: 'ERROR', error_code: 204001 });
    expect(await post(gateway.url, saleFields({ ...b, password: old }, 'pay_b.2'))).toMatchObject({ result: 'ERROR', error_code: 204001 });
    expect(await byTransId('GET_TRANS_STATUS', b, tb.trans_id, b.party)).toMatchObject({ result: 'SUCCESS', status: 'SETTLED' });
    await pay(b, 'pay_b.3');
    // The held refund callback was made before the rotation and is sent after it.
    await gateway.deliverCallbacks();
    await waitFor('the callbacks after the rotation', () => b.inbox.received.length === 3);
    for (const cb of b.inbox.received.slice(1)) expect([verifies(cb, 'b-password-2', b.party), verifies(cb, old, b.party)]).toEqual([true, false]);

    // The first account's password is `gateway.password`, which follows its rotation; A is unaffected by B's.
    expect(await byTransId('GET_TRANS_STATUS', a, tb.trans_id, b.party, 'b-password-2')).toMatchObject({ error_code: 208001 });
    gateway.rotatePassword(a.clientKey, 'a-password-2');
    expect(gateway.password).toBe('a-password-2');
    expect(await post(gateway.url, saleFields(a, 'pay_a.1'))).toMatchObject({ error_code: 204001 });
    expect(await post(gateway.url, saleFields({ ...a, password: 'a-password-2' }, 'pay_a.1'))).toMatchObject({ result: 'SUCCESS' });
    expect(() => gateway.rotatePassword('no-such-account', 'x')).toThrow(/no account/);
  });
});
