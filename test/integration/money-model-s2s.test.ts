import fc from 'fast-check';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { cardDigits, orderHash, saleHash, transactionHash, walletHash } from '../../lambdas/adapters/s2s-card/hash';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import { checkAgainstGateway } from '../support/ledger-checker';
import { startFakeGateway } from '../support/s2s-card-gateway';
import { modelCheckOptions, modelRuns, s2sScenarioArb, startMoneyModel, type GatewayScenario, type ModelStore, type MoneyModel, type Scenario } from '../support/money-model';
import { until } from '../support/until';

/**
 * The money model (test/support/money-model.ts) over the S2S CARD connector: the same random
 * interleavings of every operation that moves money, faults at step boundaries and races, against
 * the fake gateway over real HTTP with each run's own misbehaviour of it (requests dropped, answers
 * lost after the work was done, answers past the client's timeout, callbacks lost, repeated, early,
 * late, held and delivered at once, CREDITVOIDs carried out later); then the reconciler; then the
 * ledger checker against the gateway's own ledger (checkAgainstGateway). MONEY_MODEL_RUNS sets the
 * number of runs, MONEY_MODEL_SEED replays a failing seed, as for the sandbox's model.
 */
/** Most runs on the in-memory store, a share on dynalite; a soak (MONEY_MODEL_RUNS) all on dynalite. */
const RUNS = modelRuns();

let model: MoneyModel;

beforeAll(async () => {
  model = await startMoneyModel({ connector: 's2s-card' });
}, 60_000);

afterAll(async () => {
  await model?.close();
});

describe('money model over the S2S CARD connector: our records agree with the gateway ledger under random operations, races, faults and a misbehaving gateway', () => {
  const holds = (store: ModelStore, runs: number) => async () => {
    const before = { ...model.stats, gatewayMoves: { ...model.stats.gatewayMoves }, wallets: { ...model.stats.wallets } };
    const wallets = () => ({ operations: model.stats.wallets.operations - before.wallets.operations, faults: model.stats.wallets.faults - before.wallets.faults, paid: model.stats.wallets.paid - before.wallets.paid });
    try {
      await fc.assert(
        fc.asyncProperty(s2sScenarioArb, async (scenario) => {
          const divergences = await model.run(scenario, { store });
          if (divergences.length) throw new Error(`ledger divergence:\n${divergences.map((d) => `  ${d.paymentId}: ${d.problem}`).join('\n')}`);
        }),
        // The random runs reach a same-day void about twice in a hundred: one run of each kind of
        // money movement goes first, so every kind is moved whatever the draw (the rest are random).
        { ...modelCheckOptions(runs), examples: runs >= 100 ? EVERY_MOVE.map((s) => [s] as [Scenario]) : [] },
      );
    } finally {
      console.log(
        `money model (s2s-card, ${store}): ${model.stats.runs - before.runs} runs, ${model.stats.operations - before.operations} operations, ${model.stats.faults - before.faults} faults injected, ` +
          `wallet payments: ${wallets().operations} submissions, ${wallets().faults} faults, ${wallets().paid} paid; ${model.stats.divergences - before.divergences} divergences; ` +
          `gateway faults so far ${JSON.stringify(model.stats.gatewayFaults)}; gateway transactions so far ${JSON.stringify(model.stats.gatewayMoves)}`,
      );
    }
    expect(model.stats.faults - before.faults).toBeGreaterThan(0);
    // Money moved at the gateway, every kind of it (a model whose payments never reach it proves nothing).
    const moved = (kind: string) => (model.stats.gatewayMoves?.[kind] ?? 0) - (before.gatewayMoves[kind] ?? 0);
    if (runs >= 100) for (const kind of ['sale/success', 'auth/success', 'capture/success', 'refund/success', 'void/success', 'reversal/success', 'chargeback/success']) expect({ [kind]: moved(kind) }).not.toEqual({ [kind]: 0 });
    // Wallet SALEs reached the gateway, were paid, and were hit by faults (ours and the gateway's).
    if (runs >= 50) for (const [what, n] of Object.entries(wallets())) expect({ [what]: n }).not.toEqual({ [what]: 0 });
    expect(model.stats.divergences).toBe(0);
  };
  (RUNS.memory ? it : it.skip)(`holds over ${RUNS.memory} random runs on the in-memory store`, holds('memory', RUNS.memory), 15 * 60_000);
  (RUNS.dynamodb ? it : it.skip)(`holds over ${RUNS.dynamodb} random runs on DynamoDB (dynalite)`, holds('dynamodb', RUNS.dynamodb), 15 * 60_000);
});

/** A gateway that behaves, and a run that pays 10.00 and refunds 3.00 of it. */
const calm: GatewayScenario = {
  seed: 1, drop: 0, loseAnswer: 0, slow: 0, lookupsLost: 0, callbacksLost: 0, callbacksRepeated: 0, callbacksEarly: 0, callbackJitterMs: 0, callbacksHeld: false, creditVoid: 'immediate', followUpWaitMs: 150,
};
/**
 * One run of each kind of money movement at a calm gateway: sale, void; authorization, capture,
 * refund, chargeback; authorization, reversal; a Google Pay PAN_ONLY sale through its 3-D Secure
 * challenge, then a refund.
 */
const EVERY_MOVE: readonly Scenario[] = [
  { dms: false, card: 'approve', recurringInit: false, canClose: true, recurringAmount: '5.00', steps: [{ op: 'void' }], gateway: calm },
  { dms: true, card: 'approve', recurringInit: false, canClose: true, recurringAmount: '5.00', steps: [{ op: 'capture-all' }, { op: 'refund-part' }, { op: 'chargeback-part' }], gateway: calm },
  { dms: true, card: 'approve', recurringInit: false, canClose: true, recurringAmount: '5.00', steps: [{ op: 'release' }], gateway: calm },
  { dms: false, card: 'approve', wallet: 'googlePayPanOnly3ds', recurringInit: false, canClose: true, recurringAmount: '5.00', steps: [{ op: 'answer' }, { op: 'return' }, { op: 'refund-part' }], gateway: calm },
];
const payAndRefund: Scenario = { dms: false, card: 'approve', recurringInit: false, canClose: true, recurringAmount: '5.00', steps: [{ op: 'refund-part' }], gateway: calm };

describe('the S2S ledger checker is not blind', () => {
  it('a run that agrees passes; the same payment with our refunded amount changed, or a refund only the gateway made, is reported', async () => {
    expect(await model.run(payAndRefund)).toEqual([]);
    const [paymentId] = model.lastRun;
    const t = model.gateway!.ledgerOf(paymentId!)[0]!;
    expect(t).toMatchObject({ status: 'SETTLED', refundedMinor: 300 });

    // Ours says 4.00 refunded where the gateway refunded 3.00.
    const deps = model.service.deps;
    await deps.db.send(new UpdateCommand({ TableName: model.service.backend.tableName, Key: key.payment(paymentId!), UpdateExpression: 'SET refundedMinor = :r, refundHeldMinor = :r', ExpressionAttributeValues: { ':r': 400 } }));
    expect((await model.check(paymentId!)).map((d) => d.problem)).toEqual(expect.arrayContaining(['refunded: ours 400, gateway 300', 'money held: ours 600, gateway 700']));
    await deps.db.send(new UpdateCommand({ TableName: model.service.backend.tableName, Key: key.payment(paymentId!), UpdateExpression: 'SET refundedMinor = :r, refundHeldMinor = :r', ExpressionAttributeValues: { ':r': 300 } }));
    expect(await model.check(paymentId!)).toEqual([]);

    // The gateway refunds 1.00 more that we never recorded, and keeps a second one waiting.
    const raw = model.gateway!.transactions.get(t.transId)!;
    raw.refundedMinor += 100;
    raw.operations.push({ action: 'REFUND', result: 'SUCCESS', amountMinor: 100 }, { action: 'REFUND', result: 'WAITING', amountMinor: 50 });
    expect((await model.check(paymentId!)).map((d) => d.problem)).toEqual(
      expect.arrayContaining(['refunded: ours 300, gateway 400', 'successful refunds and reversals: ours 300, gateway 100,300', expect.stringMatching(/^the gateway still has waiting/)]),
    );
  }, 60_000);
});

describe('the S2S ledger checker compares what paid', () => {
  it('a wallet payment that agrees passes; the same payment recorded as a card\'s or as the other wallet\'s is reported', async () => {
    const applePay: Scenario = { ...payAndRefund, wallet: 'applePay' };
    expect(await model.run(applePay)).toEqual([]);
    const [paymentId] = model.lastRun;
    const ledger = model.gateway!.ledgerOf(paymentId!);
    expect(ledger).toMatchObject([{ status: 'SETTLED', digitalWallet: 'applepay', refundedMinor: 300 }]);
    const ours = (await model.service.deps.store.findPayment(paymentId!))!;
    expect(ours.wallet).toMatchObject({ wallet: 'applepay', panType: 'dpan' });
    expect(checkAgainstGateway(ours, ledger, { settled: true })).toEqual([]);
    const { wallet: _wallet, ...asCard } = ours;
    expect(checkAgainstGateway(asCard, ledger, { settled: true }).map((d) => d.problem)).toEqual(['paid with: ours a card, gateway applepay']);
    expect(checkAgainstGateway({ ...ours, wallet: { ...ours.wallet!, wallet: 'googlepay' } }, ledger, { settled: true }).map((d) => d.problem)).toEqual(['paid with: ours googlepay, gateway applepay']);
  }, 60_000);
});

describe('the fake gateway misbehaves as switched, and its ledger says what it did', () => {
  const party = { email: 'payer@example.com', digits: cardDigits('4111111111111111') };
  const post = (url: string, fields: Record<string, string>, timeoutMs = 5_000) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString(), signal: AbortSignal.timeout(timeoutMs) }).then(
      async (r) => (await r.json()) as Record<string, unknown>,
    );

  it('a dropped request is never carried out; a lost answer and a slow answer are; a CREDITVOID held waiting shows `waiting` until it is done, then its callback names the payment', async () => {
    const received: Record<string, string>[] = [];
    const { createServer } = await import('node:http');
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(Object.fromEntries(new URLSearchParams(body)));
        res.end('OK');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const gateway = await startFakeGateway({ notifyUrl: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/`, adversity: { creditVoid: 'held' } });
    try {
      const sale = (orderId: string) => ({
        action: 'SALE', client_key: gateway.clientKey, order_id: orderId, order_amount: '10.00', order_currency: 'USD', order_description: 'Switches',
        card_number: '4111111111111111', card_exp_month: '01', card_exp_year: '2038', card_cvv2: '123', payer_email: party.email, payer_ip: '198.51.100.7',
        term_url_3ds: 'https://shop.example/back', hash: saleHash(gateway.password, party),
      });
      gateway.dropNext('SALE');
      await expect(post(gateway.url, sale('pay_dropped.1'))).rejects.toThrow();
      expect(gateway.ledgerOf('pay_dropped')).toEqual([]);

      gateway.loseAnswerNext('SALE');
      await expect(post(gateway.url, sale('pay_lost.1'))).rejects.toThrow();
      expect(gateway.ledgerOf('pay_lost')).toMatchObject([{ status: 'SETTLED', transactions: [{ type: 'sale', status: 'success', amountMinor: 1000 }] }]);

      gateway.delayNext('SALE', 400);
      await expect(post(gateway.url, sale('pay_slow.1'), 100)).rejects.toThrow();
      expect(gateway.ledgerOf('pay_slow')).toMatchObject([{ status: 'SETTLED' }]);

      const t = gateway.ledgerOf('pay_lost')[0]!;
      const refund = await post(gateway.url, { action: 'CREDITVOID', client_key: gateway.clientKey, trans_id: t.transId, amount: '3.00', hash: transactionHash(gateway.password, party, t.transId) });
      expect(refund).toMatchObject({ result: 'ACCEPTED' });
      const details = await post(gateway.url, { action: 'GET_TRANS_DETAILS', client_key: gateway.clientKey, trans_id: t.transId, hash: transactionHash(gateway.password, party, t.transId) });
      expect(details).toMatchObject({ status: 'SETTLED', transactions: [{ type: 'sale', status: 'success' }, { type: 'refund', status: 'waiting', amount: '3.00' }] });
      // What is accepted is reserved: 7.01 more does not fit beside the waiting 3.00.
      expect(await post(gateway.url, { action: 'CREDITVOID', client_key: gateway.clientKey, trans_id: t.transId, amount: '7.01', hash: transactionHash(gateway.password, party, t.transId) })).toMatchObject({ result: 'ERROR', error_code: 208006 });
      gateway.finishWaiting();
      expect(gateway.ledgerOf('pay_lost')[0]).toMatchObject({ status: 'SETTLED', refundedMinor: 300, transactions: [{ type: 'sale' }, { type: 'refund', status: 'success', amountMinor: 300 }] });
      await until(() => received.some((c) => c.action === 'CREDITVOID'));
      expect(received.find((c) => c.action === 'CREDITVOID')).toMatchObject({ result: 'SUCCESS', trans_id: t.transId, order_id: 'pay_lost.1', amount: '3.00' });
      expect(gateway.faults).toMatchObject({ 'SALE dropped': 1, 'SALE answer lost': 1 });
    } finally {
      await gateway.close();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  }, 30_000);

  it('a wallet SALE meets the SALE switches (dropped, answer lost, slow) as a card SALE does; its ledger and status name the wallet, and its faults are counted apart', async () => {
    // The chances of the model's draw, keyed by action as the model sets them: SALE covers the wallet SALE.
    const gateway = await startFakeGateway({ seed: 7, adversity: { drop: { SALE: 1 } } });
    try {
      const email = 'payer@example.com';
      const wallet = (orderId: string, expiry = '01/38') => ({
        action: 'SALE', client_key: gateway.clientKey, order_id: orderId, order_amount: '10.00', order_currency: 'USD', order_description: 'Wallet switches',
        digital_wallet: 'googlepay', payment_token: sandboxWalletToken({ wallet: 'googlepay', network: 'VISA', last4: '1111', expiry, authMethod: 'PAN_ONLY' }),
        payer_email: email, term_url_3ds: 'https://shop.example/back', hash: walletHash(gateway.password, email),
      });
      await expect(post(gateway.url, wallet('pay_wdropped.1'))).rejects.toThrow();
      expect(gateway.ledgerOf('pay_wdropped')).toEqual([]);

      gateway.adversity = { ...gateway.adversity, drop: {}, loseAnswer: { SALE: 1 } };
      await expect(post(gateway.url, wallet('pay_wlost.1'))).rejects.toThrow();
      expect(gateway.ledgerOf('pay_wlost')).toMatchObject([{ status: 'SETTLED', digitalWallet: 'googlepay', transactions: [{ type: 'sale', status: 'success', amountMinor: 1000 }] }]);

      gateway.adversity = { ...gateway.adversity, loseAnswer: {}, slow: { SALE: 1 }, slowMs: 400 };
      // PAN_ONLY on the 3-D Secure card: the redirect to the ACS, answered late.
      await expect(post(gateway.url, wallet('pay_wslow.1', '05/38'), 100)).rejects.toThrow();
      expect(gateway.ledgerOf('pay_wslow')).toMatchObject([{ status: '3DS', digitalWallet: 'googlepay' }]);

      // Its later requests are signed over empty card digits (Formula 2 and 7).
      const party = { email, digits: '' };
      const t = gateway.ledgerOf('pay_wlost')[0]!;
      gateway.adversity = { ...gateway.adversity, slow: {} };
      expect(await post(gateway.url, { action: 'GET_TRANS_STATUS_BY_ORDER', client_key: gateway.clientKey, order_id: 'pay_wlost.1', hash: orderHash(gateway.password, party, 'pay_wlost.1') })).toMatchObject({ status: 'SETTLED', trans_id: t.transId, digital_wallet: 'googlepay' });
      expect(await post(gateway.url, { action: 'CREDITVOID', client_key: gateway.clientKey, trans_id: t.transId, amount: '3.00', hash: transactionHash(gateway.password, party, t.transId) })).toMatchObject({ result: 'ACCEPTED' });
      expect(gateway.ledgerOf('pay_wlost')[0]).toMatchObject({ refundedMinor: 300 });
      expect(gateway.faults).toEqual({ 'wallet SALE dropped': 1, 'wallet SALE answer lost': 1, 'wallet SALE slow': 1 });
    } finally {
      await gateway.close();
    }
  }, 30_000);
});
