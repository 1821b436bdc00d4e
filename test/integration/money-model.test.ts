import fc from 'fast-check';
import { scenarioArb, startMoneyModel, type MoneyModel } from '../support/money-model';

/**
 * The money model (test/support/money-model.ts) as a property: random interleavings of every
 * operation that moves money, with faults at step boundaries and races, then the reconciler, then
 * the ledger checker. MONEY_MODEL_RUNS sets the number of runs (CI: the default below; more for a
 * long soak); MONEY_MODEL_SEED replays a failing seed.
 */
const RUNS = Number(process.env.MONEY_MODEL_RUNS ?? 200);

let model: MoneyModel;

beforeAll(async () => {
  model = await startMoneyModel();
}, 60_000);

afterAll(async () => {
  await model?.close();
});

describe('money model: our records agree with the acquirer ledger under random operations, races and faults', () => {
  it(`holds over ${RUNS} random runs`, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        const divergences = await model.run(scenario);
        if (divergences.length) throw new Error(`ledger divergence:\n${divergences.map((d) => `  ${d.paymentId}: ${d.problem}`).join('\n')}`);
      }),
      { numRuns: RUNS, seed: process.env.MONEY_MODEL_SEED ? Number(process.env.MONEY_MODEL_SEED) : undefined },
    );
    console.log(`money model: ${model.stats.runs} runs, ${model.stats.operations} operations, ${model.stats.faults} faults injected, ${model.stats.divergences} divergences`);
    expect(model.stats.faults).toBeGreaterThan(0);
    expect(model.stats.divergences).toBe(0);
  }, 15 * 60_000);
});
