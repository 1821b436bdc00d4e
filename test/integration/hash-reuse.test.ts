import { ORDER_NUMBER_STARTS_WITH_PAYMENT_ID } from '../../lambdas/use-cases/create-session';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { postJson } from '../support/http';
import { paidPayment, sessionBody } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * The protocol signs concatenated fields without separators, so the hash a customer holds after
 * paying — sha1(md5(UPPER(payment_id + number + amount + currency + description + password))), in
 * the return parameters and every callback — is also the hash of a session whose order number is
 * `<payment_id><number>` with the same amount, currency and description. Such sessions are refused:
 * a customer cannot open checkout links in the merchant's name (with their own success_url).
 */
let service: TestService;
let shop: MerchantCredentials;

beforeAll(async () => {
  service = await startTestService();
  shop = await service.createMerchant({ name: 'Hash Shop', settings: { returnParams: true } });
});
afterAll(() => service.close());

/** A paid payment and the hash the customer got back on success_url. */
async function customerHeldHash() {
  const paid = await paidPayment(service, shop);
  const hash = new URL(String(paid.page.headers.location)).searchParams.get('hash');
  expect(hash).toMatch(/^[0-9a-f]{40}$/);
  return { paid, hash: hash! };
}

/** A session body signed with a given hash instead of the merchant's. */
function forgedSession(number: string, order: { amount: string; currency: string; description: string }, hash: string) {
  const body = sessionBody(shop, { order: { ...order, number }, extra: { success_url: 'https://attacker.example/thanks' } }) as Record<string, unknown>;
  return postJson<{ errors?: { error_message: string }[]; redirect_url?: string }>(service.baseUrl, '/api/v1/session', { ...body, hash });
}

it.each([
  ['as the id was written', (id: string) => id],
  ['upper-cased (the hash is case-blind)', (id: string) => id.toUpperCase()],
])('a session signed with a customer-held return hash (payment id %s) is refused', async (_how, write) => {
  const { paid, hash } = await customerHeldHash();
  const res = await forgedSession(`${write(paid.paymentId)}${paid.order.number}`, paid.order, hash);
  expect(res.status).toBe(400);
  expect(res.json.errors).toEqual([{ error_code: 100000, error_message: `order.number: ${ORDER_NUMBER_STARTS_WITH_PAYMENT_ID}` }]);
  expect(res.json.redirect_url).toBeUndefined();
});

it('an order number that starts with a UUID that is not one of this merchant\'s payments is accepted', async () => {
  const other = await service.createMerchant({ name: 'Other Shop' });
  const foreign = await paidPayment(service, other);
  for (const number of [`${foreign.paymentId}-1`, '0b9a4c8e-1f7d-4e2b-9a6c-3d5e7f9a1b2c-7']) {
    const res = await service.signedPost<{ redirect_url?: string }>('/api/v1/session', sessionBody(shop, { order: { number } }), shop.password);
    expect([number, res.status]).toEqual([number, 200]);
  }
});

it('an order number that is exactly a payment id is not the attack (nothing follows it) and is accepted', async () => {
  const { paid } = await customerHeldHash();
  const res = await service.signedPost('/api/v1/session', sessionBody(shop, { order: { number: paid.paymentId } }), shop.password);
  expect(res.status).toBe(200);
});
