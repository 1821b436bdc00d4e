import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readConfig } from '../../lambdas/config';
import { pay } from '../../lambdas/use-cases/checkout';
import { createSession } from '../../lambdas/use-cases/create-session';
import { sessionCommandOf, validateCreateSession } from '../../lambdas/protocol/merchant/session';
import { createMerchant } from '../../lambdas/use-cases/manage-merchants';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { refundPayment } from '../../lambdas/protocol/merchant/refund';
import { backendEnvironment, localDeps, startLocalBackend } from '../../local/backend';
import { validSessionBody } from '../support/fixtures';
import { TEST_PAN } from '../support/payments';
import { runSandboxCommand } from '../../local/sandbox-cli';
import { inProcess } from '../support/cli';
import { runTs } from '../support/processes';
import { ERRORS } from '../../lambdas/domain/errors';

/**
 * `npm run -s sandbox -- ledger PAYMENT_ID`: the sandbox acquirer's own records of a payment, the
 * truth our records are checked against, on a data directory: in this process through the entry
 * point's function, and once spawned as a developer runs it.
 */
jest.setTimeout(60_000);

const dataDir = mkdtempSync(join(tmpdir(), 'checkout-ledger-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const ledger = inProcess(runSandboxCommand, { DATA_DIR: dataDir });

let paymentId: string;

beforeAll(async () => {
  const backend = await startLocalBackend({ dataDir });
  const deps = localDeps(backend, readConfig(backendEnvironment(backend)));
  try {
    const merchant = await createMerchant(deps, { name: 'Ledger Shop' });
    const body = validateCreateSession({ ...validSessionBody(merchant.merchant_key, { order: { number: 'ledger-1', amount: '25.00', currency: 'USD', description: 'Ledger order' } }), hash: 'x' });
    const session = await createSession(deps, merchant.merchant_key, sessionCommandOf(body));
    paymentId = session.paymentId;
    await pay(deps, session.linkToken, { number: TEST_PAN, expiry: '01/38', cvv: '123', holder: 'Jo Doe' }, { baseUrl: 'http://127.0.0.1', browser: {} });
    await refundPayment(deps, merchant.merchant_key, { payment_id: paymentId, amount: '5.00' });
    await refundPayment(deps, merchant.merchant_key, { payment_id: paymentId, amount: '30.00' }).catch(() => undefined);
    await reconcileDue(deps);
  } finally {
    deps.db.destroy();
    deps.secretsClient.destroy();
    await backend.close();
  }
});

it('prints the acquirer records of the payment as JSON, oldest first, amounts as decimal strings (spawned as a developer runs it)', async () => {
  const run = await runTs('local/sandbox-cli.ts', ['ledger', paymentId], { DATA_DIR: dataDir });
  expect(run.code).toBe(0);
  const records = JSON.parse(run.stdout) as Record<string, unknown>[];
  expect(records.map((r) => [r.operation, r.amount, r.currency, r.outcome])).toEqual([
    ['sale', '25.00', 'USD', 'approved'],
    ['refund', '5.00', 'USD', 'approved'],
  ]);
  expect(records[1]).toMatchObject({ idempotency_key: expect.stringMatching(new RegExp(`^${paymentId}\\.refund\\.`)), of: `${paymentId}.1` });
  expect(run.stdout).not.toMatch(/4111111111111111/);
});

it('prints [] for a payment the acquirer never saw', async () => {
  const run = await ledger('ledger', '00000000-0000-4000-8000-000000000000');
  expect([run.code, JSON.parse(run.stdout)]).toEqual([0, []]);
});

it.each([[[]], [['ledger']], [['ledger', 'not-an-id']], [['list']]])('answers %j with the usage and exit code 2', async (args) => {
  const run = await ledger(...args);
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/ledger PAYMENT_ID|payment id/);
});

describe('chargeback PAYMENT_ID [AMOUNT] [REASON]: the sandbox acquirer raises one, as a cardholder\'s bank would', () => {
  // The payment of beforeAll: 25.00 USD, 5.00 refunded; 20.00 is left to charge back.
  it('refuses more than is left with the platform\'s 208010, and changes nothing', async () => {
    const run = await ledger('chargeback', paymentId, '20.01');
    expect([run.code, run.stderr.trim()]).toEqual([1, `sandbox: ${ERRORS.CHARGEBACK_AMOUNT_TOO_BIG.code} ${ERRORS.CHARGEBACK_AMOUNT_TOO_BIG.message}`]);
    expect((JSON.parse((await ledger('ledger', paymentId)).stdout) as { operation: string }[]).map((r) => r.operation)).toEqual(['sale', 'refund']);
  });

  it('raises a partial one with a reason code, then the rest; the ledger shows both', async () => {
    const first = await ledger('chargeback', paymentId, '7.50', '10.4');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ payment_id: paymentId, amount: '7.50', currency: 'USD', reason_code: '10.4', acquirer_ref: expect.stringMatching(/^sbx_/) });
    const rest = await ledger('chargeback', paymentId);
    expect(JSON.parse(rest.stdout)).toMatchObject({ amount: '12.50', reason_code: '4837' });
    const records = JSON.parse((await ledger('ledger', paymentId)).stdout) as Record<string, unknown>[];
    expect(records.map((r) => [r.operation, r.amount, r.outcome, r.reason_code])).toEqual([
      ['sale', '25.00', 'approved', undefined],
      ['refund', '5.00', 'approved', undefined],
      ['chargeback', '7.50', 'approved', '10.4'],
      ['chargeback', '12.50', 'approved', '4837'],
    ]);
    const none = await ledger('chargeback', paymentId, '0.01');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(String(ERRORS.CHARGEBACK_AMOUNT_TOO_BIG.code));
  });

  it('refuses a payment the acquirer never settled with 208014', async () => {
    const run = await ledger('chargeback', '00000000-0000-4000-8000-000000000000');
    expect([run.code, run.stderr.trim()]).toEqual([1, `sandbox: ${ERRORS.CHARGEBACK_NOT_SETTLED.code} ${ERRORS.CHARGEBACK_NOT_SETTLED.message}`]);
  });

  it.each([[['chargeback']], [['chargeback', 'not-an-id']], [['chargeback', '00000000-0000-4000-8000-000000000000', '1,00']], [['chargeback', '00000000-0000-4000-8000-000000000000', '1.00', 'bad reason!']], [['chargeback', '00000000-0000-4000-8000-000000000000', '1.00', '4837', 'more']]])(
    'answers %j with the usage and exit code 2',
    async (args) => {
      const run = await ledger(...args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/PAYMENT_ID|payment id|AMOUNT|REASON|unexpected/);
    },
  );
});
