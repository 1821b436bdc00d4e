import fc from 'fast-check';
import { modelCheckOptions, modelRuns, scenarioArb, startMoneyModel, type ModelStore, type MoneyModel } from '../support/money-model';

/**
 * The money model (test/support/money-model.ts) as a property: random interleavings of every
 * operation that moves money, with faults at step boundaries and races, then the reconciler, then
 * the ledger checker. Most runs keep the payments in the in-memory store (held to the DynamoDB
 * store by test/contract/), a share on dynalite; MONEY_MODEL_RUNS (a soak) runs that many, all on
 * dynalite. MONEY_MODEL_SEED replays a failing seed.
 */
const RUNS = modelRuns();

let model: MoneyModel;

beforeAll(async () => {
  model = await startMoneyModel();
}, 60_000);

afterAll(async () => {
  await model?.close();
});

describe('money model: our records agree with the acquirer ledger under random operations, races and faults', () => {
  const holds = (store: ModelStore, runs: number) => async () => {
    const before = { ...model.stats, wallets: { ...model.stats.wallets } };
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const divergences = await model.run(scenario, { store });
        if (divergences.length) throw new Error(`ledger divergence:\n${divergences.map((d) => `  ${d.paymentId}: ${d.problem}`).join('\n')}`);
      }),
      modelCheckOptions(runs),
    );
    const faults = model.stats.faults - before.faults;
    const chargedBack = (model.stats.chargedBack ?? 0) - (before.chargedBack ?? 0);
    const wallets = { operations: model.stats.wallets.operations - before.wallets.operations, faults: model.stats.wallets.faults - before.wallets.faults, paid: model.stats.wallets.paid - before.wallets.paid };
    console.log(
      `money model (${store}): ${model.stats.runs - before.runs} runs, ${model.stats.operations - before.operations} operations, ${faults} faults injected, ${chargedBack} payments charged back, ` +
        `wallet payments: ${wallets.operations} submissions, ${wallets.faults} faults, ${wallets.paid} paid; ${model.stats.divergences - before.divergences} divergences`,
    );
    expect(faults).toBeGreaterThan(0);
    // Chargebacks and wallet payments happened, racing the rest, faults hitting wallet submissions
    // (a model that never reaches them proves nothing of them).
    if (model.stats.runs - before.runs >= 50) {
      expect(chargedBack).toBeGreaterThan(0);
      for (const [what, n] of Object.entries(wallets)) expect({ [what]: n }).not.toEqual({ [what]: 0 });
    }
    expect(model.stats.divergences).toBe(0);
  };
  (RUNS.memory ? it : it.skip)(`holds over ${RUNS.memory} random runs on the in-memory store`, holds('memory', RUNS.memory), 15 * 60_000);
  (RUNS.dynamodb ? it : it.skip)(`holds over ${RUNS.dynamodb} random runs on DynamoDB (dynalite)`, holds('dynamodb', RUNS.dynamodb), 15 * 60_000);
});
