import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DETAIL_FIELDS } from '../../lambdas/adapters/dynamodb/payment-store';
import { storedPaymentItems } from '../support/payments';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { ManualClock } from '../../lambdas/ports/clock';
import { all, mutated, set, validSessionBody, type Json } from '../support/fixtures';
import { paymentIdOf } from '../support/links';
import { serviceForFile } from '../support/suites';
import { hashFor } from '../support/sign';

/** POST /api/v1/session over HTTP, through the real handler, SDK and DynamoDB engine. */
const SESSION = '/api/v1/session';
const T0 = new Date('2030-01-15T10:00:00.000Z');
const T0_SECONDS = T0.getTime() / 1000;

const HASH_NOT_VALID = {
  error_code: 0,
  error_message: 'Request data is invalid.',
  errors: [{ error_code: 100000, error_message: 'hash: Hash is not valid.' }],
};

const clock = new ManualClock(T0);
const { service, merchants: [merchant] } = serviceForFile({ clock, merchants: [{ name: 'Gift Shop' }] });

const body = (overrides: Json = {}) => validSessionBody(merchant.merchant_key, overrides);

/** The payment's state item over its details item, as one object. */
const storedItem = (paymentId: string): Promise<Record<string, unknown>> => storedPaymentItems(service.deps.db, service.backend.tableName, paymentId);

async function createdItem(request: Json): Promise<Record<string, unknown>> {
  const res = await service.signedPost<{ redirect_url: string }>(SESSION, request, merchant.password);
  expect(res.status).toBe(200);
  return storedItem(paymentIdOf(res.json.redirect_url));
}

describe('a valid, signed session request', () => {
  it('is answered 200 with only a redirect_url of the form <base>/auth/<45-46 character token>', async () => {
    const res = await service.signedPost<Json>(SESSION, body(), merchant.password);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(Object.keys(res.json)).toEqual(['redirect_url']);
    expect(res.json.redirect_url).toMatch(new RegExp(`^${service.baseUrl}/auth/[A-Za-z0-9_-]{45,46}$`));
  });

  it('gives every session its own link', async () => {
    const [a, b] = await Promise.all([1, 2].map(() => service.signedPost<{ redirect_url: string }>(SESSION, body(), merchant.password)));
    expect(a?.json.redirect_url).not.toBe(b?.json.redirect_url);
  });

  it('stores one payment in status prepare with the amount in minor units and as the literal sent', async () => {
    const res = await service.signedPost<{ redirect_url: string }>(SESSION, body(), merchant.password);
    const paymentId = paymentIdOf(res.json.redirect_url);
    const item = await storedItem(paymentId);
    expect(item).toMatchObject({
      ...key.payment(paymentId),
      kind: 'payment',
      paymentId,
      merchantKey: merchant.merchant_key,
      status: 'prepare',
      order: { number: 'order-1234', amount: '0.19', amountMinor: 19, currency: 'USD', description: 'Important gift' },
      customer: { name: 'John Doe', email: 'john@example.com' },
      createdAt: T0.toISOString(),
      transactions: [],
      checkout: { operation: 'purchase', successUrl: 'https://shop.example/success', cancelUrl: 'https://shop.example/cancel', reqToken: false, recurringInit: false },
    });
  });

  it('stores it as two items: what the merchant asked (with the order lookup and the search entry) written once, the state apart and small', async () => {
    const res = await service.signedPost<{ redirect_url: string }>(SESSION, body(), merchant.password);
    const paymentId = paymentIdOf(res.json.redirect_url);
    const get = async (k: { pk: string; sk: string }) => (await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: k, ConsistentRead: true }))).Item!;
    const [state, details] = await Promise.all([get(key.payment(paymentId)), get(key.paymentDetails(paymentId))]);
    expect(Object.keys(details).sort()).toEqual(['checkout', 'gsi1pk', 'gsi1sk', 'kind', 'order', 'pk', 'searchPk', 'searchSk', 'sk']);
    expect(details.searchSk).toBe(`${T0.toISOString()}#${paymentId}`);
    // No index key on the state item: no change of it writes an index but the work queue and the outbox.
    for (const attribute of ['searchPk', 'searchSk', 'gsi1pk', 'gsi1sk']) expect(state).not.toHaveProperty(attribute);
    expect(details).toMatchObject({ kind: 'payment-details', gsi1pk: key.orderIndex(merchant.merchant_key, 'order-1234'), order: { number: 'order-1234' } });
    // The state item carries no field of the details, and the link's expiry as a number for the attempt's condition.
    for (const field of DETAIL_FIELDS) expect(state).not.toHaveProperty(field);
    expect(state.linkEnds).toBe(Date.parse((details.checkout as { expiresAt: string }).expiresAt));
    expect(state).not.toHaveProperty('paymentId');
    expect(JSON.stringify(state).length).toBeLessThan(600);
  });

  it('stores only a hash of the link secret, never the link token', async () => {
    const res = await service.signedPost<{ redirect_url: string }>(SESSION, body(), merchant.password);
    const token = res.json.redirect_url.split('/').pop() as string;
    const item = await storedItem(paymentIdOf(res.json.redirect_url));
    expect((item.checkout as Json).secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(item)).not.toContain(token);
    expect(JSON.stringify(item)).not.toContain(merchant.password);
  });

  it('sets the TTL attribute to the link expiry in epoch seconds: one hour by default', async () => {
    const item = await createdItem(body());
    expect(item.ttl).toBe(T0_SECONDS + 3600);
    expect((item.checkout as Json).expiresAt).toBe(new Date(T0.getTime() + 3_600_000).toISOString());
  });

  it.each([
    [1, 60],
    [15, 900],
    [720, 43_200],
  ])('honours session_expiry %d minutes', async (minutes, seconds) => {
    const item = await createdItem(body({ session_expiry: minutes }));
    expect(item.ttl).toBe(T0_SECONDS + seconds);
    expect((item.checkout as Json).expiresAt).toBe(new Date(T0.getTime() + seconds * 1000).toISOString());
  });

  it.each([
    ['KWD', '10.250', 10250],
    ['JPY', '1500', 1500],
    ['BHD', '0.001', 1],
  ])('keeps a %s amount %s exactly as sent', async (currency, amount, amountMinor) => {
    const item = await createdItem(body({ order: { number: 'o-1', amount, currency, description: 'Tickets for 2' } }));
    expect(item.order).toMatchObject({ amount, amountMinor, currency });
  });

  it('reads a JSON number amount in the currency format, signed either as sent or in that format', async () => {
    const order = { number: 'o-2', amount: 10.25, currency: 'KWD', description: 'Gift' };
    for (const signedAmount of ['10.25', '10.250']) {
      const hash = hashFor(SESSION, { order: { ...order, amount: signedAmount } }, merchant.password);
      const res = await service.post<{ redirect_url: string }>(SESSION, body({ order, hash }));
      expect(res.status).toBe(200);
      expect((await storedItem(paymentIdOf(res.json.redirect_url))).order).toMatchObject({ amount: '10.250', amountMinor: 10250 });
    }
  });

  it('stores the checkout options the merchant asked for', async () => {
    const item = await createdItem(
      body({
        methods: ['card'],
        url_target: '_top',
        expiry_url: 'https://shop.example/expired',
        error_url: 'https://shop.example/error',
        recurring_init: 'true',
        schedule_id: 'monthly-1',
        req_token: 'Y',
        custom_data: { basket: 'b-7' },
        parameters: { card: { descriptor: 'GIFTSHOP' } },
      }),
    );
    expect(item).toMatchObject({ recurringInit: true, scheduleId: 'monthly-1', customData: { basket: 'b-7' } });
    expect(item.checkout).toMatchObject({
      methods: ['card'],
      urlTarget: '_top',
      expiryUrl: 'https://shop.example/expired',
      errorUrl: 'https://shop.example/error',
      recurringInit: true,
      reqToken: true,
      parameters: { card: { descriptor: 'GIFTSHOP' } },
    });
  });

  it('refuses a card_token that does not exist with 205005, storing nothing', async () => {
    const before = (await service.tableItems()).length;
    const res = await service.signedPost(SESSION, body({ card_token: 'T'.repeat(64) }), merchant.password);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error_code: 205005, error_message: 'Card token is invalid or not found.', errors: [] });
    expect((await service.tableItems()).length).toBe(before);
  });

  it('is accepted with a hash in upper-case hex', async () => {
    const request = body();
    const res = await service.post(SESSION, { ...request, hash: hashFor(SESSION, request, merchant.password).toUpperCase() });
    expect(res.status).toBe(200);
  });

  it('is accepted with a hash made by a client that upper-cases every Unicode letter', async () => {
    const request = body({ order: { number: 'order-5', amount: '2.00', currency: 'EUR', description: 'Café crème' } });
    const res = await service.post(SESSION, { ...request, hash: hashFor(SESSION, request, merchant.password, 'unicode') });
    expect(res.status).toBe(200);
  });

  it('accepts the JSON content type with parameters and odd spacing', async () => {
    const request = { ...body(), hash: hashFor(SESSION, body(), merchant.password) };
    for (const contentType of ['application/json; charset=utf-8', 'application/json ; charset=UTF-8', 'Application/JSON']) {
      const res = await service.request({ path: SESSION, headers: { 'content-type': contentType }, body: JSON.stringify(request) });
      expect({ contentType, status: res.status }).toEqual({ contentType, status: 200 });
    }
  });
});

describe('the signature', () => {
  it('a wrong hash is refused with exactly the hash envelope', async () => {
    const res = await service.post(SESSION, { ...body(), hash: 'f'.repeat(40) });
    expect(res.status).toBe(400);
    expect(res.json).toEqual(HASH_NOT_VALID);
  });

  it('a hash over different field values is refused', async () => {
    const hash = hashFor(SESSION, body(), merchant.password);
    const res = await service.post(SESSION, mutated({ ...body(), hash }, set('order.amount', '0.20')));
    expect(res.json).toEqual(HASH_NOT_VALID);
  });

  it('a hash made with another merchant password is refused', async () => {
    const other = await service.createMerchant();
    const res = await service.signedPost(SESSION, body(), other.password);
    expect(res.json).toEqual(HASH_NOT_VALID);
  });

  it.each([
    ['an unknown merchant_key', 'b3d4e5f6-0000-4000-8000-000000000000'],
    ['a merchant_key no merchant could have', 'not a key!'],
  ])('%s gets the very same answer as a wrong hash', async (_name, merchantKey) => {
    const wrongHash = await service.post(SESSION, { ...body(), hash: 'f'.repeat(40) });
    const unknown = await service.signedPost(SESSION, { ...body(), merchant_key: merchantKey }, merchant.password);
    expect({ status: unknown.status, body: unknown.text }).toEqual({ status: wrongHash.status, body: wrongHash.text });
  });

  it('is checked only after the body is valid: a broken body reports its fields, not the hash', async () => {
    const res = await service.post(SESSION, mutated({ ...body(), hash: 'bad' }, all(set('order.amount', '0.00'))));
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      error_code: 0,
      error_message: 'Request data is invalid.',
      errors: [{ error_code: 100000, error_message: 'order.amount: This value should be greater than 0.' }],
    });
  });
});
