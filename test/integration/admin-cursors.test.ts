import { encodeCursor } from '../../lambdas/adapters/dynamodb/cursor';
import { ERRORS } from '../../lambdas/domain/errors';
import { adminRequest, seedOperator, signIn } from '../support/admin';
import { paidPayment } from '../support/payments';
import { startTestService, type TestService } from '../support/service';

/**
 * The portal's page cursors are sealed (HMAC with a key of the stack; locally of the data
 * directory): a malformed cursor is a 400 in the envelope, never a 500, and an edited one (a count's
 * running total, a search position, the audit log's key) is refused rather than believed.
 */
let service: TestService;
let token: string;
const BAD_CURSOR = { error_code: ERRORS.REQUEST_INVALID.code, error_message: ERRORS.REQUEST_INVALID.message, errors: [{ error_code: ERRORS.FIELD_INVALID.code, error_message: 'cursor: This value is not valid.' }] };

beforeAll(async () => {
  service = await startTestService();
  token = await signIn(service, await seedOperator(service, 'cursor-viewer', 'a-long-viewer-password', 'viewer'));
  const shop = await service.createMerchant({ name: 'Cursor Shop' });
  await paidPayment(service, shop);
});
afterAll(() => service.close());

const get = (path: string) => adminRequest<Record<string, unknown>>(service, 'GET', path, token);
const forged = (position: unknown) => encodeURIComponent(encodeCursor(position));

it.each([
  ['/admin/api/audit', 'bnVsbA'],
  ['/admin/api/audit', forged({ day: 0, key: { pk: 'AUDIT#2030-01-01', sk: 'x' } })],
  ['/admin/api/audit', 'not a cursor'],
  ['/admin/api/payments', forged({ day: 0, merchant: 0 })],
  ['/admin/api/payments/count', forged({ day: 0, merchant: 0, counted: 123456789 })],
  ['/admin/api/payments/count', 'bnVsbA'],
  ['/admin/api/payments/export', forged({ day: 0, merchant: 0 })],
])('GET %s?cursor=%s is refused with 400 in the envelope', async (path, cursor) => {
  const res = await get(`${path}?cursor=${cursor}`);
  expect([res.status, res.json]).toEqual([400, BAD_CURSOR]);
});

it("a count's cursor cannot carry a running total of the client's choosing: an edited one is refused", async () => {
  const first = await get('/admin/api/payments/count');
  expect(first.status).toBe(200);
  // A cursor we sealed, with its total edited inside and the tag kept.
  const sealed = (await import('../../lambdas/adapters/dynamodb/cursor')).sealCursor({ day: 0, merchant: 0, counted: 1 });
  const [, tag] = sealed.split('.');
  const edited = `${encodeCursor({ day: 0, merchant: 0, counted: 123456789 })}.${tag}`;
  const res = await get(`/admin/api/payments/count?cursor=${encodeURIComponent(edited)}`);
  expect([res.status, res.json]).toEqual([400, BAD_CURSOR]);
  // The genuine sealed cursor is taken.
  expect((await get(`/admin/api/payments/count?cursor=${encodeURIComponent(sealed)}`)).status).toBe(200);
});
