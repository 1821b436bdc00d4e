import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { key } from '../../lambdas/adapters/dynamodb/keys';
import { setDeps } from '../../lambdas/container';
import { handler as dispatch } from '../../lambdas/handlers/callback-dispatch';
import { handler as callbackJob } from '../../lambdas/handlers/callback-job';
import { handler as captureJob } from '../../lambdas/handlers/capture-job';
import { handler as reconcileJob } from '../../lambdas/handlers/reconcile-job';
import { ManualClock } from '../../lambdas/ports/clock';
import { updateMerchantSettings } from '../../lambdas/use-cases/manage-merchants';
import { AUDIT_ANCHOR_JOB_ID, JOBS, SIGN_IN_IMPORT_JOB_ID } from '../../lib/jobs';
import { handler as anchorJob } from '../../lambdas/handlers/audit-anchor-job';
import { handler as chargebackRatesJob } from '../../lambdas/handlers/chargeback-rates-job';
import { handler as receiptJob } from '../../lambdas/handlers/receipt-job';
import { handler as receiptFeedback } from '../../lambdas/handlers/receipt-feedback';
import { handler as signInImportJob } from '../../lambdas/handlers/sign-in-import-job';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lambdaContext } from '../../local/lambda-context';
import { receivingMerchants } from '../support/callback-receiver';
import { IDEMPOTENCY_KEY_HEADER } from '../../lambdas/domain/request-key';
import { paidPayment, recurringBody, sessionBody, statusOf, submitPage, openSession } from '../support/payments';
import { signBody } from '../support/sign';
import { startTestService, type TestService } from '../support/service';
import { asFunction, CALLBACK_DISPATCHER_ID, RECEIPT_FEEDBACK_ID, describe as describeCall, type CheckedCall } from '../support/table-access';

/**
 * The functions no HTTP request reaches — the scheduled jobs and the stream dispatcher — run through
 * their own handlers as their Lambda would, on work that takes them down their table paths: a
 * timed-out attempt whose approval issues a card token and a recurring chain, an abandoned 3-D
 * Secure challenge closed at link expiry, an automatic capture and an expired authorization's
 * release, callbacks to a URL that times out and then answers, and a stream record. Every call
 * they make is checked against the IAM grant of their declaration (test/support/table-access.ts);
 * the routes are checked the same way by every integration test that calls them.
 */
const T0 = new Date('2030-09-01T08:00:00.000Z');
const MINUTE = 60_000;
const clock = new ManualClock(T0);
let service: TestService;
const merchants = receivingMerchants(() => service, 'Table Access Shop');
/** The anchor export's store (the S3 bucket's stand-in); the job's table calls are what is checked. */
const anchorDir = mkdtempSync(join(tmpdir(), 'checkout-table-access-anchors-'));

beforeAll(async () => {
  service = await startTestService({ clock, env: { CALLBACK_TIMEOUT_MS: '300', CALLBACK_FIRST_RETRY_MS: '100', AUDIT_ANCHOR_DIR: anchorDir, RECEIPT_MAIL_DIR: join(anchorDir, 'mail'), OPERATOR_POOL_ID: 'eu-west-1_TableAccess' } });
});
afterAll(async () => {
  await merchants.close();
  await service.close();
  rmSync(anchorDir, { recursive: true, force: true });
});

/** Runs a handler as the function `id` (a job id, or the dispatcher), with its Lambda context. */
async function runAs<T>(id: string, handler: (event: never, context: Context) => Promise<T>, event: unknown = {}): Promise<T> {
  setDeps(service.deps);
  return asFunction(id, () => handler(event as never, lambdaContext(id, 60)));
}

const calls = (fn: string): string[] => [...new Set(service.tableAccess.observed().filter((c: CheckedCall) => c.fn === fn).map(describeCall))].sort();

test('the reconciliation job: a timed-out attempt approved later issues its tokens; an abandoned challenge is closed once the link expires', async () => {
  const { shop } = await merchants.merchant();
  const timedOut = await paidPayment(service, shop, { card: '08/38', reqToken: true, recurringInit: true });
  expect(timedOut.status.status).toBe('prepare');
  const challenged = await openSession(service, shop);
  expect((await submitPage(service, challenged, { card: '05/38' })).status).toBeLessThan(500);
  expect((await statusOf(service, shop, challenged.paymentId)).status).toBe('3ds');

  clock.advance(3 * MINUTE);
  await runAs('ReconcileAttempts', reconcileJob);
  expect((await statusOf(service, shop, timedOut.paymentId)).status).toBe('settled');

  clock.advance(3 * 24 * 60 * MINUTE);
  await runAs('ReconcileAttempts', reconcileJob);
  expect((await statusOf(service, shop, challenged.paymentId)).status).toBe('decline');

  expect(calls('ReconcileAttempts')).toEqual(
    expect.arrayContaining([
      'ReconcileAttempts Query index work',
      'ReconcileAttempts Query PAYMENT#',
      'ReconcileAttempts UpdateItem PAYMENT#',
      'ReconcileAttempts GetItem MERCHANT#',
      'ReconcileAttempts UpdateItem SANDBOX#',
      'ReconcileAttempts PutItem CARDTOKEN#',
      'ReconcileAttempts PutItem RECURRING#',
    ]),
  );
});

test('the capture job: an automatic capture, and the release of an expired authorization', async () => {
  const { shop: auto } = await merchants.merchant();
  await updateMerchantSettings(service.deps, auto.merchant_key, { dms: true, autoCaptureDelayMinutes: 1 });
  const { shop: manual } = await merchants.merchant();
  await updateMerchantSettings(service.deps, manual.merchant_key, { dms: true });
  const captured = await paidPayment(service, auto, { card: '01/38' });
  const expiring = await paidPayment(service, manual, { card: '01/38' });
  expect([captured.status.status, expiring.status.status]).toEqual(['pending', 'pending']);

  clock.advance(2 * MINUTE);
  await runAs('CaptureAuthorizations', captureJob);
  expect((await statusOf(service, auto, captured.paymentId)).status).toBe('settled');
  clock.advance(30 * 24 * 60 * MINUTE);
  await runAs('CaptureAuthorizations', captureJob);
  expect((await statusOf(service, manual, expiring.paymentId)).status).toBe('reversal');

  expect(calls('CaptureAuthorizations')).toEqual(
    expect.arrayContaining(['CaptureAuthorizations Query index work', 'CaptureAuthorizations GetItem MERCHANT#', 'CaptureAuthorizations UpdateItem SANDBOX#', 'CaptureAuthorizations UpdateItem PAYMENT#']),
  );
});

test('the callback relay: a URL that times out (its health recorded), then answers', async () => {
  const { shop, receiver } = await merchants.merchant();
  receiver.script('hang');
  await paidPayment(service, shop);
  await runAs('DeliverCallbacks', callbackJob);
  clock.advance(5 * MINUTE);
  await runAs('DeliverCallbacks', callbackJob);
  expect(receiver.received.length).toBeGreaterThanOrEqual(2);
  expect(calls('DeliverCallbacks')).toEqual(
    expect.arrayContaining([
      'DeliverCallbacks Query index sending',
      'DeliverCallbacks UpdateItem PAYMENT#',
      'DeliverCallbacks PutItem PAYMENT#',
      'DeliverCallbacks GetItem MERCHANT#',
      'DeliverCallbacks GetItem ENDPOINT#',
      'DeliverCallbacks PutItem ENDPOINT#',
    ]),
  );
});

test('the stream dispatcher delivers a payment the stream hands it, without reading the outbox index', async () => {
  const { shop, receiver } = await merchants.merchant();
  const paid = await paidPayment(service, shop);
  const image = marshall((await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: key.payment(paid.paymentId) }))).Item!, { removeUndefinedValues: true });
  const event: DynamoDBStreamEvent = {
    Records: [{ eventName: 'MODIFY', dynamodb: { Keys: { pk: image.pk as never, sk: image.sk as never }, NewImage: image as never, OldImage: { ...image, transactions: { L: [] } } as never, SequenceNumber: '1' } }],
  };
  expect(await runAs(CALLBACK_DISPATCHER_ID, dispatch, event)).toEqual({ batchItemFailures: [] });
  expect(receiver.received.some((c) => c.fields.id === paid.paymentId)).toBe(true);
  expect(calls(CALLBACK_DISPATCHER_ID)).not.toContain(`${CALLBACK_DISPATCHER_ID} Query index sending`);
  // The payment read in one query of its partition; delivered at the first attempt, the release is its record (no PutItem).
  expect(calls(CALLBACK_DISPATCHER_ID)).toEqual(expect.arrayContaining([`${CALLBACK_DISPATCHER_ID} Query PAYMENT#`, `${CALLBACK_DISPATCHER_ID} UpdateItem PAYMENT#`]));
});

test('the stream dispatcher drops the details of a link DynamoDB\'s TTL removed, and nothing else', async () => {
  const { shop } = await merchants.merchant();
  const link = await openSession(service, shop);
  const details = key.paymentDetails(link.paymentId);
  const read = async () => (await service.deps.db.send(new GetCommand({ TableName: service.backend.tableName, Key: details, ConsistentRead: true }))).Item;
  const removal = (by: { type: string; principalId: string }): DynamoDBStreamEvent => ({
    Records: [{ eventName: 'REMOVE', userIdentity: by, dynamodb: { Keys: { pk: { S: `PAYMENT#${link.paymentId}` }, sk: { S: 'PAYMENT' } }, SequenceNumber: '2' } }],
  });
  // A deletion by anyone but TTL is not an expiry (nothing of ours deletes a state item, but never assume).
  await runAs(CALLBACK_DISPATCHER_ID, dispatch, removal({ type: 'Service', principalId: 'someone.amazonaws.com' }));
  expect(await read()).toBeDefined();
  await runAs(CALLBACK_DISPATCHER_ID, dispatch, removal({ type: 'Service', principalId: 'dynamodb.amazonaws.com' }));
  expect(await read()).toBeUndefined();
  expect(calls(CALLBACK_DISPATCHER_ID)).toContain(`${CALLBACK_DISPATCHER_ID} DeleteItem PAYMENT#`);
});

test('every merchant route claims an Idempotency-Key (a put of a REQUESTKEY# item) before its use case runs', async () => {
  const { shop } = await merchants.merchant();
  const unknownPayment = { merchant_key: shop.merchant_key, payment_id: '00000000-0000-4000-8000-000000000000' };
  const recurring = recurringBody(shop, { initTransId: 'no-such-trans', token: 'no-such-token' });
  const requests: [string, Record<string, unknown>][] = [
    ['/api/v1/session', sessionBody(shop)],
    ['/api/v1/payment/status', unknownPayment],
    ['/api/v1/payment/recurring', recurring],
    ['/api/v1/payment/re%D1%81urring', recurring],
    ['/api/v1/payment/void', unknownPayment],
    ['/api/v1/payment/refund', { ...unknownPayment, amount: '1.00' }],
    ['/api/v1/payment/retry', unknownPayment],
    ['/api/v1/payment/capture', { ...unknownPayment, amount: '1.00' }],
  ];
  for (const [path, body] of requests) {
    const answer = await service.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', [IDEMPOTENCY_KEY_HEADER]: `table-access-${path}` },
      body: JSON.stringify(signBody(path, body, shop.password)),
    });
    expect(`${path} ${answer.status}`).toMatch(/ (200|400|404|409)$/);
  }
  const claims = service.tableAccess.observed().filter((c) => c.action === 'PutItem' && c.leadingKeys?.every((k) => k.startsWith('REQUESTKEY#'))).map((c) => c.fn);
  expect([...new Set(claims)].sort()).toEqual(['CapturePayment', 'CreateSession', 'PaymentStatus', 'RecurringPayment', 'RecurringPaymentCyrillic', 'RefundPayment', 'RetryPayment', 'VoidPayment']);
});

test('a 3-D Secure challenge on a session asking for a token and a chain: the answer stores the credential, the return issues the tokens', async () => {
  const { shop } = await merchants.merchant();
  const session = await openSession(service, shop, { reqToken: true, recurringInit: true });
  const paid = await submitPage(service, session, { card: '05/38' });
  expect(paid.status).toBe(303);
  const challenge = new URL(String(paid.headers.location ?? ''), service.baseUrl);
  const page = await service.request({ method: 'GET', path: `${challenge.pathname}${challenge.search}` });
  expect(page.status).toBe(200);
  const answered = await service.request({
    path: challenge.pathname,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ code: '123456', decision: 'confirm', return: challenge.searchParams.get('return') ?? '' }).toString(),
  });
  expect(answered.status).toBe(303);
  const back = await service.request({ method: 'GET', path: String(answered.headers.location ?? '') });
  expect(back.status).toBe(303);
  expect(await statusOf(service, shop, session.paymentId)).toMatchObject({ status: 'settled', card_token: expect.any(String), recurring_token: expect.any(String) });
  expect(calls('SandboxChallengeAnswer')).toContain('SandboxChallengeAnswer PutItem SANDBOX-CREDENTIAL#');
  expect(calls('CheckoutComplete')).toEqual(expect.arrayContaining(['CheckoutComplete PutItem CARDTOKEN#', 'CheckoutComplete PutItem RECURRING#']));
});

test('the audit anchor export reads the days\' heads and nothing else', async () => {
  const { shop } = await merchants.merchant();
  await service.deps.audit.append({ id: `table-access-${shop.merchant_key}`, at: clock.now().toISOString(), actor: 'cli:test', action: 'merchant.settings', target: shop.merchant_key, targetKind: 'merchant', outcome: 'done' });
  const report = await runAs(AUDIT_ANCHOR_JOB_ID, anchorJob);
  expect(report.written).toEqual(expect.arrayContaining([expect.stringMatching(/checkpoint at entry \d+$/)]));
  expect(calls(AUDIT_ANCHOR_JOB_ID)).toEqual([`${AUDIT_ANCHOR_JOB_ID} Query AUDIT#`]);
});

test('the chargeback-rate job reads the month\'s chargebacks and counts the charged-back merchant\'s settled payments, keeping its closed days', async () => {
  const { shop } = await merchants.merchant();
  const paid = await paidPayment(service, shop);
  expect(await service.deps.sandbox.raiseChargeback(paid.paymentId, 100, '10.4')).toMatchObject({ raised: {} });
  await runAs('ReconcileAttempts', reconcileJob);
  const report = await runAs('CheckChargebackRates', chargebackRatesJob);
  expect(report.merchants).toBeGreaterThan(0);
  // Its closed days are kept too (PutItem SETTLEDDAY#) once the month has one: chargeback-denominator.test.ts runs the job on such a month.
  expect(calls('CheckChargebackRates')).toEqual(
    expect.arrayContaining(['CheckChargebackRates BatchGetItem PAYMENT#', 'CheckChargebackRates Query DISPUTE#', 'CheckChargebackRates Query SETTLEDDAY#', 'CheckChargebackRates Query index searchKeys']),
  );
});

test('a receipt: queued by the relay, sent by the receipt job, its address suppressed by the bounce function', async () => {
  const { shop } = await merchants.merchant({ emailReceipts: true });
  const paid = await paidPayment(service, shop);
  await runAs('DeliverCallbacks', callbackJob);
  expect((await runAs('SendReceipts', receiptJob)).sent).toBe(1);
  const bounce = { source: 'aws.ses', 'detail-type': 'Email Bounced', detail: { eventType: 'Bounce', bounce: { bounceType: 'Permanent', bouncedRecipients: [{ emailAddress: 'john@example.com' }] } } };
  expect(await runAs(RECEIPT_FEEDBACK_ID, receiptFeedback, bounce)).toEqual({ suppressed: 1 });
  expect(calls('DeliverCallbacks')).toContain('DeliverCallbacks PutItem RECEIPT#');
  expect(calls('SendReceipts')).toEqual(['SendReceipts GetItem SUPPRESSION#', 'SendReceipts Query index work', 'SendReceipts UpdateItem RECEIPT#']);
  expect(calls(RECEIPT_FEEDBACK_ID)).toEqual([`${RECEIPT_FEEDBACK_ID} UpdateItem SUPPRESSION#`]);
  expect(paid.status.status).toBe('settled');
});

test('the sign-in import appends to the audit log and reads nothing else of the table', async () => {
  // A stand-in for Cognito's API: one operator, one sign-in (the job runs on AWS only).
  const cognito = createServer((req, res) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    req.resume().on('end', () => {
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(target.endsWith('ListUsers') ? { Users: [{ Username: 'olga' }] } : { AuthEvents: [{ EventId: `ev-${clock.now().getTime()}`, EventType: 'SignIn', EventResponse: 'Pass', CreationDate: clock.now().getTime() / 1000 - 60 }] }));
    });
  });
  await new Promise<void>((done) => cognito.listen(0, '127.0.0.1', () => done()));
  process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER = `http://127.0.0.1:${(cognito.address() as AddressInfo).port}`;
  try {
    expect(await runAs(SIGN_IN_IMPORT_JOB_ID, signInImportJob)).toMatchObject({ imported: 1 });
    // A second run sees the same sign-in: its id is known (read, not appended again).
    expect(await runAs(SIGN_IN_IMPORT_JOB_ID, signInImportJob)).toMatchObject({ imported: 0, known: 1 });
  } finally {
    delete process.env.AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER;
    await new Promise<void>((done) => cognito.close(() => done()));
  }
  expect([...new Set(calls(SIGN_IN_IMPORT_JOB_ID))].sort()).toEqual([`${SIGN_IN_IMPORT_JOB_ID} GetItem AUDITID#`, `${SIGN_IN_IMPORT_JOB_ID} PutItem AUDIT#`, `${SIGN_IN_IMPORT_JOB_ID} PutItem AUDITID#`, `${SIGN_IN_IMPORT_JOB_ID} Query AUDIT#`]);
});

test('every job and the dispatcher stayed within its grant', () => {
  for (const id of [...JOBS.map((j) => j.id), CALLBACK_DISPATCHER_ID, RECEIPT_FEEDBACK_ID]) expect(calls(id).length).toBeGreaterThan(0);
  expect(service.tableAccess.refused().map(describeCall)).toEqual([]);
});
