import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { validSessionBody } from '../support/fixtures';
import { paymentIdOf } from '../support/links';
import { recordCalls, type CallLog } from '../support/sdk-calls';
import { startTestService, type TestService } from '../support/service';

/**
 * What each request costs in AWS calls, counted on the real SDK clients: a warm request reads no
 * secret, an unknown merchant costs a directory read and never a secret, and every signed request
 * takes one conditional write of its merchant's count of this second (ADR 0025) before its own calls.
 */
const SESSION = '/api/v1/session';
const STATUS = '/api/v1/payment/status';
const SECRET_CACHE_SECONDS = 300;

let service: TestService;
let merchant: MerchantCredentials;
let secretsCalls: CallLog;
let dbCalls: CallLog;
const clock = new ManualClock('2030-05-05T12:00:00.000Z');

beforeAll(async () => {
  service = await startTestService({ clock, env: { SECRET_CACHE_TTL_SECONDS: String(SECRET_CACHE_SECONDS) } });
  merchant = await service.createMerchant();
  secretsCalls = recordCalls(service.deps.secretsClient, 'secrets');
  dbCalls = recordCalls(service.deps.db, 'dynamodb');
});
afterAll(() => service.close());

beforeEach(() => {
  secretsCalls.reset();
  dbCalls.reset();
});

const createSession = async (orderNumber = 'order-1') => {
  const res = await service.signedPost<{ redirect_url: string }>(
    SESSION,
    validSessionBody(merchant.merchant_key, { order: { number: orderNumber, amount: '1.00', currency: 'USD', description: 'Gift' } }),
    merchant.password,
  );
  expect(res.status).toBe(200);
  return paymentIdOf(res.json.redirect_url);
};

describe('Secrets Manager', () => {
  it('is read once for a cold merchant (after the directory confirms it), then not at all while the password is cached', async () => {
    clock.advance(SECRET_CACHE_SECONDS * 1000);
    await createSession();
    expect(secretsCalls.calls).toEqual(['GetSecretValueCommand']);
    expect(dbCalls.calls[0]).toBe('GetItemCommand');

    secretsCalls.reset();
    const paymentId = await createSession();
    await service.signedPost(STATUS, { merchant_key: merchant.merchant_key, payment_id: paymentId }, merchant.password);
    expect(secretsCalls.calls).toEqual([]);
  });

  it('is read again once the cache entry has expired', async () => {
    await createSession();
    clock.advance(SECRET_CACHE_SECONDS * 1000 + 1);
    await createSession();
    expect(secretsCalls.calls).toEqual(['GetSecretValueCommand']);
  });

  it('is never read for an unknown merchant_key: the merchant directory says so once, then memory does', async () => {
    const body = validSessionBody('0d7e4b1c-0000-4000-8000-00000000beef', { hash: 'a'.repeat(40) });
    expect((await service.post(SESSION, body)).status).toBe(400);
    expect((await service.post(SESSION, body)).status).toBe(400);
    expect(secretsCalls.calls).toEqual([]);
    expect(dbCalls.calls).toEqual(['GetItemCommand']);
  });

  it('is not called at all for a merchant_key no merchant could have', async () => {
    await service.post(SESSION, validSessionBody('<script>', { hash: 'a'.repeat(40) }));
    expect(secretsCalls.calls).toEqual([]);
  });
});

/**
 * The merchant's request count (ADR 0025) is one `UpdateItem` per block of requests this instance
 * takes from the second's window: a request either takes a block (that write first) or uses one
 * taken before (no write). The rest of a request's calls are fixed.
 */
const split = (calls: readonly string[]) => ({ counted: calls.filter((c, i) => i === 0 && c === 'UpdateItemCommand').length, rest: calls.filter((c, i) => !(i === 0 && c === 'UpdateItemCommand')) });

describe('DynamoDB', () => {
  // The merchant's request of this second (its first: a block is taken), then a payment: its
  // details (written once) and its state (ADR 0023), two puts, each one write unit.
  it('create session is the merchant\'s request count (when it takes a block), then exactly two writes: the details, then the state', async () => {
    await createSession();
    expect(split(dbCalls.calls)).toEqual({ counted: expect.any(Number), rest: ['PutItemCommand', 'PutItemCommand'] });
    expect(split(dbCalls.calls).counted).toBeLessThanOrEqual(1);
  });

  it('status by payment_id is exactly one read (after the request count): a query of the payment\'s partition for both items', async () => {
    const paymentId = await createSession();
    dbCalls.reset();
    await service.signedPost(STATUS, { merchant_key: merchant.merchant_key, payment_id: paymentId }, merchant.password);
    expect(split(dbCalls.calls)).toEqual({ counted: expect.any(Number), rest: ['QueryCommand'] });
    expect(split(dbCalls.calls).counted).toBeLessThanOrEqual(1);
  });

  // The order index holds keys only (write units are what scale, docs/architecture.md): the payment is read by key after.
  it('status by order_id is one query of the order index and one read of the payment', async () => {
    await createSession('order-q');
    dbCalls.reset();
    const res = await service.signedPost(STATUS, { merchant_key: merchant.merchant_key, order_id: 'order-q' }, merchant.password);
    expect(res.status).toBe(200);
    expect(split(dbCalls.calls)).toEqual({ counted: expect.any(Number), rest: ['QueryCommand', 'QueryCommand'] });
    expect(split(dbCalls.calls).counted).toBeLessThanOrEqual(1);
  });

  it('is not called for a request refused by validation or signature', async () => {
    await service.post(SESSION, validSessionBody(merchant.merchant_key, { hash: 'a'.repeat(40) }));
    await service.post(SESSION, { merchant_key: merchant.merchant_key });
    await service.post(STATUS, { merchant_key: merchant.merchant_key, payment_id: 'x', hash: 'a'.repeat(40) });
    expect(dbCalls.calls).toEqual([]);
  });
});
