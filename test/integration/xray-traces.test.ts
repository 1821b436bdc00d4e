import { createSocket, type Socket } from 'node:dgram';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { LocalBackend } from '../../local/backend';

// As in Lambda (set before the modules load): a function name, a daemon (this test's UDP socket)
// and, per invocation, the trace header Lambda sets.
process.env.AWS_LAMBDA_FUNCTION_NAME = 'checkout-xray-test';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const { createDocumentClient, conditionalPut } = require('../../lambdas/adapters/dynamodb/client') as typeof import('../../lambdas/adapters/dynamodb/client');
const { requestObservability } = require('../../lambdas/middleware/observability') as typeof import('../../lambdas/middleware/observability');
const { telemetry, inSubsegment } = require('../../lambdas/observability/telemetry') as typeof import('../../lambdas/observability/telemetry');
const { startLocalBackend } = require('../../local/backend') as typeof import('../../local/backend');
const { daemonAddress } = require('../../lambdas/observability/xray') as typeof import('../../lambdas/observability/xray');

/**
 * Traces without the X-Ray SDK (ADR 0036), as X-Ray would receive them: a sampled invocation sends
 * its handler subsegment with the searchable annotations, one subsegment per DynamoDB call (through
 * the real SDK client against the local engine) and one per remote call, each a child of the
 * handler's, all in the invocation's trace, all out before the handler returns. Nothing of a
 * request or a response (a card number) reaches a datagram.
 */
const ROOT = '1-6734a1b2-0123456789abcdef01234567';
const PARENT = '1a2b3c4d5e6f7081';
const CARD = '4111111111111111';

let daemon: Socket;
let received: Buffer[] = [];
/**
 * Lets the datagrams already sent arrive: a few milliseconds, then one pass of the event loop's
 * poll phase (setImmediate runs after it), which a loaded machine's late timer alone would skip.
 */
const datagramsIn = async () => {
  await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setImmediate(r));
};
let backend: LocalBackend;

beforeAll(async () => {
  daemon = createSocket('udp4');
  daemon.on('message', (m) => received.push(m));
  await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
  // The shape Lambda gives it: a TCP and a UDP address.
  process.env.AWS_XRAY_DAEMON_ADDRESS = `tcp:127.0.0.1:${daemon.address().port} udp:127.0.0.1:${daemon.address().port}`;
  backend = await startLocalBackend();
});
afterAll(async () => {
  daemon.close();
  await backend.close();
  delete process.env._X_AMZN_TRACE_ID;
});
beforeEach(() => {
  received = [];
});

type Doc = Record<string, any>;
const documents = (): Doc[] =>
  received.map((m) => {
    const [header, body] = m.toString('utf8').split('\n');
    expect(JSON.parse(header!)).toEqual({ format: 'json', version: 1 });
    return JSON.parse(body!) as Doc;
  });

const event = (): APIGatewayProxyEventV2 =>
  ({ version: '2.0', routeKey: 'POST /x', rawPath: '/x', headers: {}, body: '', isBase64Encoded: false, requestContext: { requestId: 'req-1', http: { method: 'POST', path: '/x', sourceIp: '127.0.0.1' } } }) as unknown as APIGatewayProxyEventV2;
const context = { functionName: 'checkout-xray-test', awsRequestId: 'r-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

function handlerDoing(work: () => Promise<void>) {
  return middy<APIGatewayProxyEventV2, { statusCode: number; body: string }>()
    .use(requestObservability())
    .handler(async () => {
      await work();
      return { statusCode: 200, body: '{}' };
    });
}

test('a sampled invocation: the handler, its DynamoDB calls and its remote call, in its trace, sent before it returns', async () => {
  process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=${PARENT};Sampled=1`;
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  const handler = handlerDoing(async () => {
    telemetry.paymentInContext('pay_traced', 'merchant_traced');
    await db.send(new PutCommand({ TableName: backend.tableName, Item: { pk: 'XRAY#1', sk: 'A', note: CARD } }));
    await db.send(new GetCommand({ TableName: backend.tableName, Key: { pk: 'XRAY#1', sk: 'A' } }));
    // A guarded write that loses: an error (4xx), not a fault.
    expect(await conditionalPut(db, { TableName: backend.tableName, Item: { pk: 'XRAY#1', sk: 'A' }, ConditionExpression: 'attribute_not_exists(pk)' })).toBe(false);
    await expect(
      inSubsegment('acquirer authorize', { payment_id: 'pay_traced' }, async () => {
        throw new TypeError(`refused card ${CARD}`);
      }),
    ).rejects.toThrow(TypeError);
  });
  await handler(event(), context);
  // Sent before the invocation returned: nothing waits for a later one to flush.
  await datagramsIn();
  const docs = documents();
  expect(received.map((m) => m.toString('utf8')).join('')).not.toContain(CARD);

  const root = docs.find((d) => d.name === '## checkout-xray-test');
  expect(root).toMatchObject({ type: 'subsegment', trace_id: ROOT, parent_id: PARENT, annotations: { ColdStart: true, Service: 'checkout', payment_id: 'pay_traced', merchant_key: 'merchant_traced' } });
  expect(root!.id).toMatch(/^[0-9a-f]{16}$/);
  expect(root!.fault).toBeUndefined();

  const dynamo = docs.filter((d) => d.name === 'DynamoDB');
  expect(dynamo.map((d) => d.aws.operation)).toEqual(['PutItem', 'GetItem', 'PutItem']);
  for (const d of dynamo) {
    expect(d).toMatchObject({ trace_id: ROOT, parent_id: root!.id, namespace: 'aws', type: 'subsegment' });
    expect(d.aws.request_id).toEqual(expect.any(String));
    expect(d.start_time).toBeGreaterThanOrEqual(root!.start_time);
    expect(d.end_time).toBeLessThanOrEqual(root!.end_time);
  }
  expect(dynamo[1]).toMatchObject({ http: { response: { status: 200 } } });
  expect(dynamo[2]).toMatchObject({ error: true, http: { response: { status: 400 } } });
  expect(dynamo[2]!.fault).toBeUndefined();

  const remote = docs.find((d) => d.name === 'acquirer authorize');
  expect(remote).toMatchObject({ namespace: 'remote', parent_id: root!.id, fault: true, annotations: { payment_id: 'pay_traced', error: 'TypeError' } });
  expect(new Set(docs.map((d) => d.id)).size).toBe(docs.length);
});

test('the next invocation is warm, has its own ids and annotations only of its own', async () => {
  process.env._X_AMZN_TRACE_ID = `Root=${ROOT.replace('0123', '9999')};Parent=${PARENT};Sampled=1`;
  await handlerDoing(async () => undefined)(event(), context);
  await datagramsIn();
  const [root, ...rest] = documents();
  expect(rest).toEqual([]);
  expect(root).toMatchObject({ trace_id: ROOT.replace('0123', '9999'), annotations: { ColdStart: false, Service: 'checkout' } });
  expect(root!.annotations.payment_id).toBeUndefined();
});

test('an error that escapes the handler marks its subsegment a fault', async () => {
  process.env._X_AMZN_TRACE_ID = `Root=${ROOT};Parent=${PARENT};Sampled=1`;
  const failing = middy().use(requestObservability()).handler(async () => {
    throw new Error(`boom ${CARD}`);
  });
  await expect(failing(event(), context)).rejects.toThrow('boom');
  await datagramsIn();
  const docs = documents();
  expect(docs).toHaveLength(1);
  expect(docs[0]).toMatchObject({ name: '## checkout-xray-test', fault: true });
  expect(JSON.stringify(docs)).not.toContain(CARD);
});

test('not sampled, or no trace header: no datagram, and the calls still happen', async () => {
  const db = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  for (const header of [`Root=${ROOT};Parent=${PARENT};Sampled=0`, undefined]) {
    if (header) process.env._X_AMZN_TRACE_ID = header;
    else delete process.env._X_AMZN_TRACE_ID;
    let read: unknown;
    await handlerDoing(async () => {
      read = (await db.send(new GetCommand({ TableName: backend.tableName, Key: { pk: 'XRAY#1', sk: 'A' } }))).Item;
    })(event(), context);
    expect(read).toMatchObject({ pk: 'XRAY#1' });
  }
  await datagramsIn();
  expect(received).toEqual([]);
});

test('the daemon address as Lambda sets it, or as a plain host:port', () => {
  expect(daemonAddress('169.254.79.129:2000')).toEqual({ host: '169.254.79.129', port: 2000 });
  expect(daemonAddress('tcp:169.254.79.129:2000 udp:169.254.79.129:2001')).toEqual({ host: '169.254.79.129', port: 2001 });
  expect(daemonAddress('udp:127.0.0.1:3000')).toEqual({ host: '127.0.0.1', port: 3000 });
  expect(daemonAddress('')).toBeUndefined();
  expect(daemonAddress('nonsense')).toBeUndefined();
});
