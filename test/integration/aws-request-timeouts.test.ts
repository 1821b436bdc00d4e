import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { boundedRequests } from '../../lambdas/adapters/aws/request-timeouts';
import { createCognitoSignIns } from '../../lambdas/adapters/cognito/sign-ins';
import { createSesClient, SesMailer } from '../../lambdas/adapters/ses/mailer';

/**
 * A service that takes the request and never answers must not hold a function until its own
 * timeout: each client the jobs build gives a call up after its request timeout and tries again
 * (3 tries), then fails the call. The SDK's handler only warns past `requestTimeout` unless told to
 * throw (`boundedRequests`). Real SDK clients against a local server over HTTP.
 */
let server: Server;
let url = '';
let answering = false;
const sockets = new Set<Socket>();
let requests = 0;
const saved = { ...process.env };

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    req.resume().on('end', () => {
      if (!answering) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ MessageId: 'msg-1' }));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  Object.assign(process.env, { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_ENDPOINT_URL_SESV2: url, AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER: url });
});
afterAll(async () => {
  process.env = saved;
  for (const s of sockets) s.destroy();
  await new Promise<void>((done) => server.close(() => done()));
});
beforeEach(() => {
  requests = 0;
  answering = false;
});

const FAST = { connectionTimeoutMs: 500, requestTimeoutMs: 200 };
const mail = { to: 'ana@example.com', subject: 'Receipt', text: 'Paid', html: '<p>Paid</p>', paymentId: 'p-1' };

test('the handler options throw past the request timeout', () => {
  expect(boundedRequests(FAST)).toEqual({ connectionTimeout: 500, requestTimeout: 200, throwOnRequestTimeout: true });
});

test('SES never answering: the receipt send fails after three timed-out tries, in seconds', async () => {
  const mailer = new SesMailer(createSesClient(FAST), 'receipts@example.com', 'receipts');
  const started = Date.now();
  await expect(mailer.send(mail)).rejects.toThrow(/SES did not take the message \(TimeoutError\)/);
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(requests).toBe(3);
});

test('SES answering: the message id comes back (the same client, no timeout in the way)', async () => {
  answering = true;
  await expect(new SesMailer(createSesClient(FAST), 'receipts@example.com', 'receipts').send(mail)).resolves.toEqual({ messageId: 'msg-1' });
});

test('Cognito never answering: the sign-in import fails its run after three timed-out tries', async () => {
  const started = Date.now();
  await expect(createCognitoSignIns('eu-west-1_Pool', FAST).since(new Date(0))).rejects.toMatchObject({ name: 'TimeoutError' });
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(requests).toBe(3);
});
