import { randomUUID } from 'node:crypto';
import { ERRORS } from '../../lambdas/domain/errors';
import { ManualClock } from '../../lambdas/ports/clock';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { validSessionBody } from '../support/fixtures';
import { recordCalls, type CallLog } from '../support/sdk-calls';
import { startTestService, type TestService } from '../support/service';

/**
 * Abuse of the merchant API (ADR 0025): an unknown merchant_key is refused from the merchant
 * directory and a per-instance memory of unknown keys, never with a Secrets Manager call; each
 * merchant has its own requests per second, counted in the table across instances, so one
 * merchant's flood (or a forger's, in its name) answers 429 to that merchant only.
 */
const STATUS = '/api/v1/payment/status';
const SESSION = '/api/v1/session';
const PER_SECOND = 5;
const clock = new ManualClock('2030-07-01T09:00:00.000Z');

let service: TestService;
let flooder: MerchantCredentials;
let bystander: MerchantCredentials;
let secretsCalls: CallLog;
let dbCalls: CallLog;

beforeAll(async () => {
  service = await startTestService({ clock, env: { MERCHANT_REQUESTS_PER_SECOND: String(PER_SECOND) } });
  [flooder, bystander] = [await service.createMerchant({ name: 'Flood Shop' }), await service.createMerchant({ name: 'Quiet Shop' })];
  secretsCalls = recordCalls(service.deps.secretsClient, 'secrets');
  dbCalls = recordCalls(service.deps.db, 'dynamodb');
});
afterAll(() => service.close());
beforeEach(() => {
  // A fresh second for each test: its windows are its own.
  clock.advance(10_000);
  secretsCalls.reset();
  dbCalls.reset();
});

const status = (m: MerchantCredentials) => service.signedPost(STATUS, { merchant_key: m.merchant_key, payment_id: randomUUID() }, m.password);
const HASH_REFUSAL = { error_code: ERRORS.REQUEST_INVALID.code, error_message: ERRORS.REQUEST_INVALID.message, errors: [{ error_code: ERRORS.FIELD_INVALID.code, error_message: 'hash: Hash is not valid.' }] };

describe('an unknown merchant_key', () => {
  it('costs no Secrets Manager call: refused after one read of the merchant directory, then from memory', async () => {
    const keys = Array.from({ length: 30 }, () => randomUUID());
    for (const key of keys) {
      const res = await service.post(SESSION, validSessionBody(key, { hash: 'a'.repeat(40) }));
      expect([res.status, res.json]).toEqual([400, HASH_REFUSAL]);
    }
    expect(secretsCalls.calls).toEqual([]);
    expect(dbCalls.calls).toEqual(Array(keys.length).fill('GetItemCommand'));

    dbCalls.reset();
    await service.post(SESSION, validSessionBody(keys[0]!, { hash: 'a'.repeat(40) }));
    expect(dbCalls.calls).toEqual([]);
  });

  it('answers exactly as a known merchant with a wrong hash, so keys cannot be enumerated', async () => {
    const unknown = await service.post(SESSION, validSessionBody(randomUUID(), { hash: 'a'.repeat(40) }));
    const known = await service.post(SESSION, validSessionBody(bystander.merchant_key, { hash: 'a'.repeat(40) }));
    expect([unknown.status, unknown.json]).toEqual([known.status, known.json]);
  });

  it('a merchant created after its key was tried works at once on the instance that tried it', async () => {
    const key = `late-${randomUUID()}`;
    expect((await service.post(SESSION, validSessionBody(key, { hash: 'a'.repeat(40) }))).status).toBe(400);
    const { createMerchant } = await import('../../lambdas/use-cases/manage-merchants');
    const created = await createMerchant(service.deps, { name: 'Late Shop', merchantKey: key });
    expect((await status(created)).status).toBe(404);
  });
});

describe('each merchant its own requests per second', () => {
  it(`one merchant's flood gets 429 with Retry-After beyond ${PER_SECOND} a second; another merchant in the same second is not refused`, async () => {
    const [flood, quiet] = await Promise.all([
      Promise.all(Array.from({ length: 4 * PER_SECOND }, () => status(flooder))),
      Promise.all(Array.from({ length: PER_SECOND }, () => status(bystander))),
    ]);
    // Admitted requests ask for a payment that does not exist: 404, after the limit was checked.
    expect(flood.filter((r) => r.status === 404)).toHaveLength(PER_SECOND);
    const refused = flood.filter((r) => r.status === 429);
    expect(refused).toHaveLength(3 * PER_SECOND);
    for (const r of refused) {
      expect(r.json).toEqual({ error_code: ERRORS.MERCHANT_RATE_LIMITED.code, error_message: ERRORS.MERCHANT_RATE_LIMITED.message, errors: [] });
      expect(r.headers['retry-after']).toBe('1');
    }
    expect(quiet.map((r) => r.status)).toEqual(Array(PER_SECOND).fill(404));
  });

  it('the next second the merchant is served again', async () => {
    for (let i = 0; i < PER_SECOND; i++) expect((await status(flooder)).status).toBe(404);
    expect((await status(flooder)).status).toBe(429);
    clock.advance(1000);
    expect((await status(flooder)).status).toBe(404);
  });

  it("a forger's requests in a merchant's name are refused at the hash and spend none of its limit", async () => {
    const forged = await Promise.all(Array.from({ length: 4 * PER_SECOND }, () => service.post(STATUS, { merchant_key: bystander.merchant_key, payment_id: randomUUID(), hash: 'b'.repeat(40) })));
    expect(forged.every((r) => r.status === 400)).toBe(true);
    const genuine = await Promise.all(Array.from({ length: PER_SECOND }, () => status(bystander)));
    expect(genuine.map((r) => r.status)).toEqual(Array(PER_SECOND).fill(404));
  });

  it('counts in the table, so every instance sees one count: a second instance of the function admits no more', async () => {
    const { DynamoMerchantRateLimiter } = await import('../../lambdas/adapters/dynamodb/merchant-rate');
    const other = new DynamoMerchantRateLimiter(service.deps.db, service.backend.tableName, PER_SECOND);
    for (let i = 0; i < PER_SECOND; i++) expect((await status(flooder)).status).toBe(404);
    await expect(other.admit(flooder.merchant_key, clock.now())).resolves.toEqual({ allowed: false, retryAfterSeconds: 1 });
    await expect(other.admit(bystander.merchant_key, clock.now())).resolves.toEqual({ allowed: true });
  });
});
