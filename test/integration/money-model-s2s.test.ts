import fc from 'fast-check';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { s2sScenarioArb, startMoneyModel, type GatewayScenario, type MoneyModel, type Scenario } from '../support/money-model';

/**
 * The money model (test/support/money-model.ts) over the S2S CARD connector: the same random
 * interleavings of every operation that moves money, faults at step boundaries and races, against
 * the fake gateway over real HTTP with each run's own misbehaviour of it (requests dropped, answers
 * lost after the work was done, answers past the client's timeout, callbacks lost, repeated, early,
 * late, held and delivered at once, CREDITVOIDs carried out later); then the reconciler; then the
 * ledger checker against the gateway's own ledger (checkAgainstGateway). MONEY_MODEL_RUNS sets the
 * number of runs, MONEY_MODEL_SEED replays a failing seed, as for the sandbox's model.
 */
const RUNS = Number(process.env.MONEY_MODEL_RUNS ?? 200);

let model: MoneyModel;

beforeAll(async () => {
  model = await startMoneyModel({ connector: 's2s-card' });
}, 60_000);

afterAll(async () => {
  await model?.close();
});

describe('money model over the S2S CARD connector: our records agree with the gateway ledger under random operations, races, faults and a misbehaving gateway', () => {
  it(`holds over ${RUNS} random runs`, async () => {
    try {
      await fc.assert(
        fc.asyncProperty(s2sScenarioArb, async (scenario) => {
          const divergences = await model.run(scenario);
          if (divergences.length) throw new Error(`ledger divergence:\n${divergences.map((d) => `  ${d.paymentId}: ${d.problem}`).join('\n')}`);
        }),
        { numRuns: RUNS, seed: process.env.MONEY_MODEL_SEED ? Number(process.env.MONEY_MODEL_SEED) : undefined },
      );
    } finally {
      console.log(
        `money model (s2s-card): ${model.stats.runs} runs, ${model.stats.operations} operations, ${model.stats.faults} faults injected, ${model.stats.divergences} divergences; ` +
          `gateway faults ${JSON.stringify(model.stats.gatewayFaults)}; gateway transactions ${JSON.stringify(model.stats.gatewayMoves)}`,
      );
    }
    expect(model.stats.faults).toBeGreaterThan(0);
    // Money moved at the gateway, every kind of it (a model whose payments never reach it proves nothing).
    if (RUNS >= 100) for (const kind of ['sale/success', 'auth/success', 'capture/success', 'refund/success', 'void/success', 'reversal/success']) expect({ [kind]: model.stats.gatewayMoves?.[kind] ?? 0 }).not.toEqual({ [kind]: 0 });
    expect(model.stats.divergences).toBe(0);
  }, 15 * 60_000);
});

/** A gateway that behaves, and a run that pays 10.00 and refunds 3.00 of it. */
const calm: GatewayScenario = {
  seed: 1, drop: 0, loseAnswer: 0, slow: 0, lookupsLost: 0, callbacksLost: 0, callbacksRepeated: 0, callbacksEarly: 0, callbackJitterMs: 0, callbacksHeld: false, creditVoid: 'immediate', followUpWaitMs: 60,
};
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
