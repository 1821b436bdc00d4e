import { sandboxLedger } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { sandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import { callbackFields } from '../../lambdas/domain/callback';
import { WALLET_RULES } from '../../lambdas/domain/wallet';
import type { Payment } from '../../lambdas/domain/payment';
import { sessionCommandOf, validateCreateSession } from '../../lambdas/protocol/merchant/session';
import { createSession } from '../../lambdas/use-cases/create-session';
import { payWithWallet, type CheckoutDeps, type WalletForm } from '../../lambdas/use-cases/checkout';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { validSessionBody } from '../support/fixtures';
import { statusOf } from '../support/merchant-site';
import { storedPaymentItems } from '../support/payments';
import { serviceForFile } from '../support/suites';
import { paymentDetail } from '../../lambdas/use-cases/admin/payment-reads';
import { searchPayments } from '../../lambdas/use-cases/admin/search';
import { paymentDetailView } from '../../lambdas/protocol/admin/payment-view';
import { pageWalletsOf } from '../../lambdas/checkout-page/wallets';

/**
 * The wallet path of the hosted page's pay use case (docs/wallets.md) against the DynamoDB engine
 * and the sandbox acquirer: the same claim, stable key and guarded answer as a card, so racing
 * submissions charge once; the token is kept nowhere; status and callbacks name the wallet.
 * The use case is called as the page's route calls it (test/e2e/checkout-wallets.test.ts drives the page).
 */
const { service, merchants: [shop, dmsShop, noWalletShop] } = serviceForFile({
  merchants: [
    { name: 'Wallet Shop', settings: { wallets: ['applepay', 'googlepay'], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' } },
    { name: 'Later Capture Shop', settings: { dms: true, wallets: ['applepay', 'googlepay'], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' } },
    { name: 'No Wallet Shop' },
  ],
});

const deps = () => service.deps as unknown as CheckoutDeps;
// The stage's wallets, as the page's route passes them: a payment is refused by the rule that hides the buttons.
const ctx = () => ({ baseUrl: service.baseUrl, browser: { ip: '203.0.113.9', userAgent: 'WalletTest/1.0' }, wallets: pageWalletsOf(service.deps.config) });

/** A session as a merchant will open it once the page shows the wallets (the gate on). */
async function session(merchant: MerchantCredentials, overrides: Record<string, unknown> = {}): Promise<{ token: string; paymentId: string }> {
  const body = validSessionBody(merchant.merchant_key, { methods: ['card', 'googlepay', 'applepay'], hash: 'x', ...overrides });
  const made = await createSession(service.deps, merchant.merchant_key, sessionCommandOf(validateCreateSession(body, { walletsOnPage: true })));
  return { token: made.linkToken, paymentId: made.paymentId };
}

function googlePay(expiry: string, authMethod: 'PAN_ONLY' | 'CRYPTOGRAM_3DS' = 'CRYPTOGRAM_3DS'): WalletForm {
  return { wallet: 'googlepay', network: 'VISA', last4: '1111', authMethod, paymentToken: sandboxWalletToken({ wallet: 'googlepay', network: 'VISA', last4: '1111', expiry, authMethod }) };
}

const storedPayment = async (paymentId: string) => (await storedPaymentItems(service.deps.db, service.backend.tableName, paymentId)) as unknown as Payment;

describe('paying a session with a wallet', () => {
  it('thirty concurrent submissions of one session make exactly one charge, recorded with the wallet and no card', async () => {
    const { token, paymentId } = await session(shop);
    const form = googlePay('01/38');
    const results = await Promise.all(Array.from({ length: 30 }, () => payWithWallet(deps(), token, form, ctx())));
    expect(results.filter((r) => r.kind === 'navigate' && r.why === 'success').length).toBeGreaterThanOrEqual(1);
    const ledger = await sandboxLedger(service.deps.db, service.backend.tableName, paymentId);
    expect(ledger.filter((e) => e.operation === 'sale' && e.outcome === 'approved')).toHaveLength(1);
    const payment = await storedPayment(paymentId);
    expect(payment).toMatchObject({ status: 'settled', attempt: 1, wallet: { wallet: 'googlepay', panType: 'dpan', brand: 'visa', last4: '1111' } });
    expect(payment.card).toBeUndefined();
    expect(payment.cardToken).toBeUndefined();
    // The token is card data: in no item of the table, not even the sandbox's own.
    expect(JSON.stringify(await service.tableItems())).not.toContain('CRYPTOGRAM_3DS');
  });

  it('status carries digital_wallet; the sale\'s callback carries digital_wallet and pan_type, and no card fields', async () => {
    const { token, paymentId } = await session(shop);
    await payWithWallet(deps(), token, googlePay('01/38', 'PAN_ONLY'), ctx());
    expect(await statusOf(service, shop, paymentId)).toMatchObject({ status: 'settled', digital_wallet: 'googlepay' });
    const payment = await storedPayment(paymentId);
    const sale = payment.transactions.find((t) => t.type === 'sale')!;
    const fields = Object.fromEntries(callbackFields(payment, sale, shop.password));
    expect(fields).toMatchObject({ status: 'success', digital_wallet: 'googlepay', pan_type: 'fpan' });
    expect(fields).not.toHaveProperty('card');
    expect(fields).not.toHaveProperty('card_expiration_date');
  });

  it('the decline card declines and the page stays open for another try (the card form is the fallback)', async () => {
    const { token, paymentId } = await session(shop);
    const result = await payWithWallet(deps(), token, googlePay('02/38'), ctx());
    expect(result).toMatchObject({ kind: 'form', declineReason: 'Declined by processing.' });
    expect(await storedPayment(paymentId)).toMatchObject({ status: 'decline', wallet: { wallet: 'googlepay' } });
  });

  it('PAN_ONLY on the 3-D Secure card sends the customer to the challenge; a cryptogram does not', async () => {
    const challenged = await session(shop);
    const action = await payWithWallet(deps(), challenged.token, googlePay('05/38', 'PAN_ONLY'), ctx());
    expect(action).toMatchObject({ kind: 'navigate', why: 'action', url: expect.stringContaining('/sandbox/challenge/') });
    expect((await storedPayment(challenged.paymentId)).status).toBe('3ds');
    // The challenge page names the card by the last four digits the wallet showed.
    const page = await (await fetch((action as { url: string }).url)).text();
    expect(page).toContain('1111');
    expect(page).not.toContain('····');
    const device = await session(shop);
    expect(await payWithWallet(deps(), device.token, googlePay('05/38', 'CRYPTOGRAM_3DS'), ctx())).toMatchObject({ kind: 'navigate', why: 'success' });
  });

  it('a submission that is not a wallet payment (no token, a card number for last four) is refused before any claim', async () => {
    const { token, paymentId } = await session(shop);
    for (const form of [{ ...googlePay('01/38'), paymentToken: '' }, { ...googlePay('01/38'), last4: '4111111111111111' }, { ...googlePay('01/38'), authMethod: undefined }]) {
      expect(await payWithWallet(deps(), token, form, ctx())).toMatchObject({ kind: 'form', problems: { wallet: 'wallet' } });
    }
    expect((await storedPayment(paymentId)).attempt).toBeUndefined();
  });

  it.each([
    ['a wallet the session does not offer', { methods: ['card', 'applepay'] }, shop],
    ['a session that keeps the card (recurring_init)', { methods: undefined, recurring_init: true }, shop],
    ['a merchant that captures later (DMS)', {}, dmsShop],
    ['a merchant whose wallets are off (its settings)', {}, noWalletShop],
  ] as const)('is refused, nothing is claimed or sent, for %s', async (_name, overrides, merchant) => {
    const { token, paymentId } = await session(merchant, overrides);
    const result = await payWithWallet(deps(), token, googlePay('01/38'), ctx());
    expect(result).toMatchObject({ kind: 'form', problems: { wallet: expect.any(String) } });
    if (merchant === dmsShop) expect(result).toMatchObject({ problems: { wallet: WALLET_RULES.noDms } });
    if ('recurring_init' in overrides) expect(result).toMatchObject({ problems: { wallet: WALLET_RULES.storesNoCard } });
    expect((await storedPayment(paymentId)).attempt).toBeUndefined();
    expect(await sandboxLedger(service.deps.db, service.backend.tableName, paymentId)).toHaveLength(0);
  });
});

describe('the portal', () => {
  it('shows the wallet on the payment\'s detail, and a search by last four finds wallet payments', async () => {
    const { token, paymentId } = await session(shop);
    await payWithWallet(deps(), token, { ...googlePay('01/38', 'PAN_ONLY'), last4: '4242', paymentToken: sandboxWalletToken({ wallet: 'googlepay', network: 'VISA', last4: '4242', expiry: '01/38', authMethod: 'PAN_ONLY' }) }, ctx());
    const detail = paymentDetailView(await paymentDetail(service.deps, paymentId));
    expect(detail.payment).toMatchObject({ wallet: { wallet: 'googlepay', pan_type: 'fpan', brand: 'visa', last4: '4242' } });
    expect(detail.payment.card).toBeUndefined();
    const found = await searchPayments(service.deps, { last4: '4242', merchant: shop.merchant_key });
    expect(found.found.map((f) => f.payment.paymentId)).toEqual([paymentId]);
  });
});
