import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import { pageWalletsOf } from '../../lambdas/checkout-page/wallets';
import type { Deps } from '../../lambdas/container';
import { callbackFields } from '../../lambdas/domain/callback';
import type { Acquirer } from '../../lambdas/ports/acquirer';
import { ManualClock } from '../../lambdas/ports/clock';
import { sessionCommandOf, validateCreateSession } from '../../lambdas/protocol/merchant/session';
import { pay, payWithWallet, type CheckoutDeps } from '../../lambdas/use-cases/checkout';
import { createSession } from '../../lambdas/use-cases/create-session';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { validSessionBody } from '../support/fixtures';
import { checkPayment } from '../support/ledger-checker';
import { storedPayment } from '../support/payments';
import { serviceForFile } from '../support/suites';

/**
 * A late approval's reversal names the card of the attempt it reverses. The customer pays with a
 * card; the acquirer takes the sale but its answer is lost, and for a while it cannot say what became
 * of it; the reconciler declines the attempt here (it does not count against the customer) and
 * watches it; the customer pays the same link with Google Pay; the acquirer then reports the card's
 * sale approved, and the reconciler reverses it. The reversal's callback must carry that card (not
 * the wallet the payment was paid with), and the wallet sale's callback the wallet. (The reversal is
 * sent as soon as it is recorded: closing its key at the acquirer first, as for an operation left in
 * flight, barred it and left the first sale charged.)
 */
const T0 = new Date('2031-06-07T09:00:00.000Z');
const clock = new ManualClock(T0);
const { service, merchants: [shop] } = serviceForFile({
  clock,
  clockAt: T0,
  merchants: [{ name: 'Two Attempts Shop', settings: { wallets: ['googlepay'], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' } }],
});
const MINUTE = 60_000;
const ctx = () => ({ baseUrl: service.baseUrl, browser: { ip: '203.0.113.9', userAgent: 'LateReversalTest/1.0' } });

test('the reversal of a late approval names the card of its own attempt, the wallet sale the wallet', async () => {
  const body = validSessionBody(shop.merchant_key, { methods: ['card', 'googlepay'], hash: 'x' });
  const { linkToken, paymentId } = await createSession(service.deps, shop.merchant_key, sessionCommandOf(validateCreateSession(body, { walletsOnPage: true })));

  // The acquirer approves the card's sale, but its answer is lost and it cannot say for a while.
  const real = service.deps.acquirer;
  let silent = true;
  const unknown = { kind: 'unknown' as const, acquirerRef: '', reason: 'no answer' };
  const losing: Acquirer = new Proxy(real, {
    get: (obj, prop, receiver) => {
      if (prop === 'authorize') return async (request: Parameters<Acquirer['authorize']>[0]) => (await obj.authorize(request), unknown);
      if (silent && (prop === 'lookup' || prop === 'close')) return async () => unknown;
      return Reflect.get(obj, prop, receiver);
    },
  });
  const deps = { ...service.deps, acquirer: losing } as Deps;
  const first = await pay(deps as unknown as CheckoutDeps, linkToken, { number: '4111111111111111', expiry: '01/38', cvv: '123', holder: 'Ada Lovelace', email: 'ada@example.com', country: 'GB' }, ctx());
  expect(first.kind).toBe('processing');

  // The reconciler cannot learn the answer: the attempt is declined here and watched.
  clock.set(new Date(T0.getTime() + 10 * MINUTE));
  await reconcileDue(deps);
  const declined = await storedPayment(service, paymentId);
  expect(declined.status).toBe('decline');
  expect(Object.values(declined.watching ?? {})).toEqual([expect.objectContaining({ attempt: 1, paidWith: { card: expect.objectContaining({ expMonth: 1, expYear: 2038 }) } })]);

  // Attempt 2: Google Pay on the same link, approved.
  const token = sandboxWalletToken({ wallet: 'googlepay', network: 'VISA', last4: '1111', expiry: '01/38', authMethod: 'CRYPTOGRAM_3DS' });
  const paid = await payWithWallet(service.deps as unknown as CheckoutDeps, linkToken, { wallet: 'googlepay', network: 'VISA', last4: '1111', authMethod: 'CRYPTOGRAM_3DS', paymentToken: token }, { ...ctx(), wallets: pageWalletsOf(service.deps.config) });
  expect(paid.kind).toBe('navigate');
  expect((await storedPayment(service, paymentId)).status).toBe('settled');

  // The acquirer now reports the card's sale approved: the reconciler reverses it.
  silent = false;
  clock.set(new Date(T0.getTime() + 50 * MINUTE));
  await reconcileDue(deps);
  const p = await storedPayment(service, paymentId);
  expect(p.status).toBe('settled');
  const reversal = p.transactions.find((t) => t.type === 'reversal')!;
  const walletSale = p.transactions.find((t) => t.type === 'sale' && t.status === 'success' && !t.internal)!;
  expect(reversal).toMatchObject({ status: 'success' });
  // The sandbox reversed the card's sale: one sale of each attempt, the first given back.
  expect((await sandboxLedger(service.deps.db, service.backend.tableName, paymentId)).map((r) => [r.operation, r.outcome])).toEqual([
    ['sale', 'approved'],
    ['sale', 'approved'],
    ['reversal', 'approved'],
  ]);

  const fields = (tx: typeof reversal) => Object.fromEntries(callbackFields(p, tx, shop.password));
  expect(fields(reversal)).toMatchObject({ type: 'reversal', card: '411111****1111', card_expiration_date: '01/2038' });
  expect(fields(reversal)).not.toHaveProperty('digital_wallet');
  expect(fields(walletSale)).toMatchObject({ type: 'sale', digital_wallet: 'googlepay', pan_type: 'dpan' });
  expect(fields(walletSale)).not.toHaveProperty('card');
  expect(checkPayment(p, await sandboxLedger(service.deps.db, service.backend.tableName, paymentId), { settled: true })).toEqual([]);
});
