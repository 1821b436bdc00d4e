import { all, drop, mutated, set, validSessionBody, type Json, type Mutation } from '../support/fixtures';
import type { HttpAnswer } from '../support/http';
import { paymentIdOf } from '../support/links';
import { storedPayment } from '../support/payments';
import { serviceForFile } from '../support/suites';
import { signBody } from '../support/sign';

/**
 * Whatever arrives at the merchant API, the answer is a 4xx with the documented envelope, never a
 * 5xx, and nothing is stored; unknown routes too (the `$default` route's 404 and 405).
 */
const SESSION = '/api/v1/session';
const STATUS = '/api/v1/payment/status';

const { service, merchants: [merchant] } = serviceForFile({ merchants: [{}] });

const payments = async () => (await service.tableItems()).filter((item) => item.kind === 'payment');

/** A valid session body, signed, then changed (the change usually breaks the signature too). */
const session = (change: Mutation = () => undefined): Json => mutated(signBody(SESSION, validSessionBody(merchant.merchant_key), merchant.password), change);
const statusBody = (change: Mutation = () => undefined): Json =>
  mutated(signBody(STATUS, { merchant_key: merchant.merchant_key, payment_id: '63c781cc-de3d-11eb-a1f1-0242ac130006' }, merchant.password), change);

const json = (value: unknown) => JSON.stringify(value);
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

interface HostileRequest {
  readonly path: string;
  /** null: no content-type header at all. */
  readonly contentType?: string | null;
  readonly body: () => string | Buffer;
  /** The exact errors, as "<path>: <message>", when the case has a precise answer. */
  readonly errors?: readonly string[];
  readonly status?: number;
}

const BODY = {
  notJson: 'body: The request body is not valid JSON.',
  notObject: 'body: The request body should be a JSON object.',
  contentType: 'body: The request content type should be application/json.',
  blank: 'body: This value should not be blank.',
  tooLarge: 'body: The request body is too large. It should have 65536 bytes or less.',
  tooDeep: 'body: The request body is nested too deeply. It should have 16 levels or less.',
};
const HASH = 'hash: Hash is not valid.';
const AMOUNT_INVALID = 'order.amount: This value is not valid.';
const AMOUNT_POSITIVE = 'order.amount: This value should be greater than 0.';
const str = (path: string) => `${path}: This value should be of type string.`;

const rows: [string, HostileRequest][] = [
  // Not JSON, or not the JSON we take.
  ['malformed JSON', { path: SESSION, body: () => '{"merchant_key": "k", }', errors: [BODY.notJson] }],
  ['truncated JSON', { path: SESSION, body: () => json(session()).slice(0, 120), errors: [BODY.notJson] }],
  ['JSON followed by garbage', { path: SESSION, body: () => `${json(session())}xyz`, errors: [BODY.notJson] }],
  ['two JSON documents', { path: SESSION, body: () => `${json(session())}${json(session())}`, errors: [BODY.notJson] }],
  ['single-quoted pseudo-JSON', { path: SESSION, body: () => "{'merchant_key': 'k'}", errors: [BODY.notJson] }],
  ['JSON with comments', { path: SESSION, body: () => `/* hi */ ${json(session())}`, errors: [BODY.notJson] }],
  ['a UTF-8 byte order mark before the JSON', { path: SESSION, body: () => `\uFEFF${json(session())}`, errors: [BODY.notJson] }],
  ['a form body labelled JSON', { path: SESSION, body: () => 'merchant_key=k&hash=h', errors: [BODY.notJson] }],
  ['a base64 body labelled JSON', { path: SESSION, body: () => Buffer.from(json(session())).toString('base64'), errors: [BODY.notJson] }],
  ['a NUL byte in the JSON', { path: SESSION, body: () => `{"merchant_key":"k"\u0000}`, errors: [BODY.notJson] }],
  ['invalid UTF-8 bytes outside strings', { path: SESSION, body: () => Buffer.from([0xff, 0xfe, 0x7b, 0x7d]), errors: [BODY.notJson] }],
  ['UTF-16 encoded JSON', { path: SESSION, contentType: 'application/json; charset=utf-16le', body: () => Buffer.from(json(session()), 'utf16le'), errors: [BODY.notJson] }],
  ['a number of 400 digits', { path: SESSION, body: () => json(session()).replace('"0.19"', '1e400'), errors: [AMOUNT_INVALID] }],
  // Content type and size.
  ['no content type', { path: SESSION, contentType: null, body: () => json(session()), errors: [BODY.contentType] }],
  ['text/plain', { path: SESSION, contentType: 'text/plain', body: () => json(session()), errors: [BODY.contentType] }],
  ['a form content type', { path: SESSION, contentType: 'application/x-www-form-urlencoded', body: () => 'merchant_key=k', errors: [BODY.contentType] }],
  ['multipart', { path: SESSION, contentType: 'multipart/form-data; boundary=x', body: () => '--x\r\n\r\n{}\r\n--x--', errors: [BODY.contentType] }],
  ['a lookalike content type', { path: SESSION, contentType: 'application/jsonp', body: () => json(session()), errors: [BODY.contentType] }],
  ['binary content, base64-encoded by the gateway', { path: SESSION, contentType: 'application/octet-stream', body: () => Buffer.from([0, 1, 2, 255]), errors: [BODY.contentType] }],
  ['a +json type (base64-encoded by the gateway) carrying broken JSON', { path: SESSION, contentType: 'application/vnd.checkout+json', body: () => '{oops', errors: [BODY.notJson] }],
  ['an empty body', { path: SESSION, body: () => '', errors: [BODY.blank] }],
  ['a whitespace body', { path: SESSION, body: () => ' \n\t\r ', errors: [BODY.blank] }],
  ['a body over 64 KB', { path: SESSION, body: () => json(session(set('order.description', 'a'.repeat(70_000)))), errors: [BODY.tooLarge] }],
  ['a body over 64 KB of multi-byte characters', { path: SESSION, body: () => json(session(set('order.description', 'é'.repeat(33_000)))), errors: [BODY.tooLarge] }],
  ['10,000-deep array nesting', { path: SESSION, body: () => deep(10_000), errors: [BODY.tooDeep] }],
  ['100-deep object nesting', { path: SESSION, body: () => '{"a":'.repeat(100) + '1' + '}'.repeat(100), errors: [BODY.tooDeep] }],
  ['deep nesting inside a field', { path: SESSION, body: () => json(session(set('custom_data', JSON.parse(deep(20))))), errors: [BODY.tooDeep] }],
  // Prototype keys.
  ['a __proto__ key', { path: SESSION, body: () => json(session()).replace('{', '{"__proto__":{"isAdmin":true},'), errors: [BODY.notJson] }],
  ['a nested __proto__ key', { path: SESSION, body: () => json(session()).replace('"order":{', '"order":{"__proto__":{"x":1},'), errors: [BODY.notJson] }],
  ['a constructor key', { path: SESSION, body: () => json({ ...session(), constructor: { prototype: { polluted: true } } }), errors: [BODY.notJson] }],
  ['a prototype key in custom_data', { path: SESSION, body: () => json(session(set('custom_data', { prototype: 'x' }))), errors: [BODY.notJson] }],
  // Top level that is not an object.
  ['a JSON array', { path: SESSION, body: () => json([session()]), errors: [BODY.notObject] }],
  ['a JSON number', { path: SESSION, body: () => '42', errors: [BODY.notObject] }],
  ['a JSON string', { path: SESSION, body: () => '"hello"', errors: [BODY.notObject] }],
  ['JSON null', { path: SESSION, body: () => 'null', errors: [BODY.notObject] }],
  ['JSON true', { path: SESSION, body: () => 'true', errors: [BODY.notObject] }],
  ['an empty object', {
    path: SESSION,
    body: () => '{}',
    errors: ['merchant_key: This value should not be blank.', 'operation: This value should not be blank.', 'order: This value should not be blank.', 'success_url: This value should not be blank.', 'hash: This value should not be blank.'],
  }],
  // Duplicate keys: the last one wins, and it is validated.
  ['duplicate keys, the last one a different merchant', { path: SESSION, body: () => json(session()).replace(/}$/, ',"merchant_key":"someone-else"}'), errors: [HASH] }],
  ['duplicate keys, the last one of the wrong type', { path: SESSION, body: () => json(session()).replace(/}$/, ',"operation":5}'), errors: ['operation: The value you selected is not a valid choice.'] }],
  // Amounts that are not amounts.
  ...(['1e5', '0x10', 'Infinity', '-Infinity', 'NaN', '1_000.00', ' 1.00', '1.00 ', '1,00', '١٠.٠٠'] as const).map(
    (amount): [string, HostileRequest] => [`the amount ${JSON.stringify(amount)}`, { path: SESSION, body: () => json(session(set('order.amount', amount))), errors: [AMOUNT_INVALID] }],
  ),
  ...([['-1.00', '-1.00'], ['0.00', '0.00'], ['0', 0], ['-5', -5], ['-0.01', -0.01]] as const).map(
    ([label, amount]): [string, HostileRequest] => [`the amount ${label}`, { path: SESSION, body: () => json(session(set('order.amount', amount))), errors: [AMOUNT_POSITIVE] }],
  ),
  ['the amount as an object', { path: SESSION, body: () => json(session(set('order.amount', { value: '1.00' }))), errors: [AMOUNT_INVALID] }],
  ['the amount as an array', { path: SESSION, body: () => json(session(set('order.amount', ['1.00']))), errors: [AMOUNT_INVALID] }],
  ['a huge amount', { path: SESSION, body: () => json(session(set('order.amount', `${'9'.repeat(40)}.00`))), errors: [AMOUNT_INVALID] }],
  // Wrong types, field by field.
  ...(['merchant_key', 'success_url', 'cancel_url', 'url_target', 'hash', 'order.number', 'order.currency', 'order.description', 'customer.name', 'customer.email', 'billing_address.city', 'billing_address.phone'] as const).flatMap(
    (field): [string, HostileRequest][] => [
      [`${field} as a number`, { path: SESSION, body: () => json(session(set(field, 12345))), errors: [str(field)] }],
      [`${field} as an object`, { path: SESSION, body: () => json(session(set(field, { $ne: null }))), errors: [str(field)] }],
      [`${field} as an array`, { path: SESSION, body: () => json(session(set(field, ['x']))), errors: [str(field)] }],
    ],
  ),
  ['operation as an object', { path: SESSION, body: () => json(session(set('operation', { $in: ['purchase'] }))), errors: ['operation: The value you selected is not a valid choice.'] }],
  ['methods as an object', { path: SESSION, body: () => json(session(set('methods', { 0: 'card' }))), errors: ['methods: This value should be of type array.'] }],
  ['card_token as an object', { path: SESSION, body: () => json(session(set('card_token', { token: 'x' }))), errors: ['card_token: This value should be of type array.'] }],
  ['recurring_init as an object', { path: SESSION, body: () => json(session(set('recurring_init', {}))), errors: ['recurring_init: This value should be of type bool.'] }],
  ['req_token as an array', { path: SESSION, body: () => json(session(set('req_token', [true]))), errors: ['req_token: This value should be of type bool.'] }],
  ['order as an array', { path: SESSION, body: () => json(session(set('order', [1, 2]))), errors: ['order: This value should be of type array.'] }],
  ['customer as a string', { path: SESSION, body: () => json(session(set('customer', 'John'))), errors: ['customer: This value should be of type array.'] }],
  ['billing_address as an array', { path: SESSION, body: () => json(session(set('billing_address', ['US']))), errors: ['billing_address: This value should be of type array.'] }],
  ['session_expiry as an object', { path: SESSION, body: () => json(session(set('session_expiry', { m: 5 }))), errors: ['session_expiry: This value should be of type numeric.'] }],
  ['custom_data as an array', { path: SESSION, body: () => json(session(set('custom_data', ['x']))), errors: ['custom_data: This value should be of type array.'] }],
  // Huge strings within the size limit.
  ['a 60,000-character merchant_key', { path: SESSION, body: () => json(session(set('merchant_key', 'k'.repeat(60_000)))), errors: ['merchant_key: This value is too long. It should have 255 characters or less.'] }],
  ['a 60,000-character description', { path: SESSION, body: () => json(session(set('order.description', 'a'.repeat(60_000)))), errors: ['order.description: This value is too long. It should have 1024 characters or less.'] }],
  ['a 60,000-character success_url', { path: SESSION, body: () => json(session(set('success_url', `https://a.example/${'a'.repeat(60_000)}`))), errors: ['success_url: This value is too long. It should have 1024 characters or less.'] }],
  // Unicode and control characters.
  ['a NUL character in the customer name', { path: SESSION, body: () => json(session(set('customer.name', 'John\u0000Doe'))), errors: ['customer.name: This value is not valid.'] }],
  ['a right-to-left override in the order number', { path: SESSION, body: () => json(session(set('order.number', 'order\u202E1'))), errors: ['order.number: This value is not valid.'] }],
  ['a lone surrogate in the description', { path: SESSION, body: () => json(session(set('order.description', 'Gift \ud800'))), errors: ['order.description: This value is not valid.'] }],
  // Descriptions take what shops write (emoji, HTML-looking text): valid, so only the (unsigned) hash fails; escaped wherever shown.
  ['an emoji in the description', { path: SESSION, body: () => json(session(set('order.description', 'Gift 🎁'))), errors: ['hash: Hash is not valid.'] }],
  ['control characters in the description', { path: SESSION, body: () => json(session(set('order.description', 'Gift\u0007\u001b[31m'))), errors: ['order.description: This value is not valid.'] }],
  ['invalid UTF-8 bytes inside the description', {
    path: SESSION,
    body: () => Buffer.concat([Buffer.from(json(session(set('order.description', 'Gift XX'))).split('XX')[0] as string), Buffer.from([0xc3, 0x28]), Buffer.from(json(session(set('order.description', 'Gift XX'))).split('XX')[1] as string)]),
    errors: ['hash: Hash is not valid.'],
  }],
  ['a newline in the merchant_key', { path: SESSION, body: () => json(session(set('merchant_key', `${merchant.merchant_key}\n`))), errors: [HASH] }],
  // Injection strings: refused by the field rules.
  ['SQL in the order number', { path: SESSION, body: () => json(session(set('order.number', "1' OR '1'='1"))), errors: ['order.number: This value is not valid.'] }],
  ['SQL in the customer name', { path: SESSION, body: () => json(session(set('customer.name', "Robert'); DROP TABLE payments;--"))), errors: ['customer.name: This value is not valid.'] }],
  ['HTML in the description', { path: SESSION, body: () => json(session(set('order.description', '<script>alert(1)</script>'))), errors: ['hash: Hash is not valid.'] }],
  ['HTML in the city', { path: SESSION, body: () => json(session(set('billing_address.city', '<img src=x onerror=alert(1)>'))), errors: ['billing_address.city: This value is not valid.'] }],
  ['a javascript: success_url', { path: SESSION, body: () => json(session(set('success_url', 'javascript:alert(document.cookie)'))), errors: ['success_url: This value is not a valid URL.'] }],
  ['a data: cancel_url', { path: SESSION, body: () => json(session(set('cancel_url', 'data:text/html,<script>alert(1)</script>'))), errors: ['cancel_url: This value is not a valid URL.'] }],
  ['a header-splitting url_target', { path: SESSION, body: () => json(session(set('url_target', 'x\r\nSet-Cookie: a=b'))), errors: ['url_target: This value is not valid.'] }],
  ['an operator object as merchant_key (NoSQL style)', { path: SESSION, body: () => json(session(set('merchant_key', { $gt: '' }))), errors: [str('merchant_key')] }],
  // The hash.
  ['a hash of 39 characters', { path: SESSION, body: () => json(session((b) => void (b.hash = (b.hash as string).slice(0, 39)))), errors: [HASH] }],
  ['a hash of 41 characters', { path: SESSION, body: () => json(session((b) => void (b.hash = `${b.hash as string}0`))), errors: [HASH] }],
  ['a non-hex hash of 40 characters', { path: SESSION, body: () => json(session(set('hash', 'z'.repeat(40)))), errors: [HASH] }],
  ['the hash with spaces around it', { path: SESSION, body: () => json(session((b) => void (b.hash = ` ${b.hash as string} `))), errors: [HASH] }],
  ['the md5 stage instead of the hash', { path: SESSION, body: () => json(session(set('hash', 'd41d8cd98f00b204e9800998ecf8427e'))), errors: [HASH] }],
  ['a hash of another merchant_key', { path: SESSION, body: () => json(session(set('merchant_key', '00000000-0000-4000-8000-000000000000'))), errors: [HASH] }],
  ['no hash', { path: SESSION, body: () => json(session(drop('hash'))), errors: ['hash: This value should not be blank.'] }],
  // The status endpoint.
  ['status: malformed JSON', { path: STATUS, body: () => '{"payment_id":', errors: [BODY.notJson] }],
  ['status: an empty body', { path: STATUS, body: () => '', errors: [BODY.blank] }],
  ['status: a JSON array', { path: STATUS, body: () => '[]', errors: [BODY.notObject] }],
  ['status: no content type', { path: STATUS, contentType: null, body: () => json(statusBody()), errors: [BODY.contentType] }],
  ['status: deep nesting', { path: STATUS, body: () => deep(10_000), errors: [BODY.tooDeep] }],
  ['status: a __proto__ key', { path: STATUS, body: () => json(statusBody()).replace('{', '{"__proto__":{"a":1},'), errors: [BODY.notJson] }],
  ['status: neither payment_id nor order_id', { path: STATUS, body: () => json(statusBody(drop('payment_id'))), errors: ['payment_id: This value should not be blank.'] }],
  ['status: payment_id null', { path: STATUS, body: () => json(statusBody(set('payment_id', null))), errors: ['payment_id: This value should not be blank.'] }],
  ['status: payment_id empty', { path: STATUS, body: () => json(statusBody(set('payment_id', ''))), errors: ['payment_id: This value should not be blank.'] }],
  ['status: payment_id as a number', { path: STATUS, body: () => json(statusBody(set('payment_id', 42))), errors: [str('payment_id')] }],
  ['status: payment_id as an operator object', { path: STATUS, body: () => json(statusBody(set('payment_id', { $ne: null }))), errors: [str('payment_id')] }],
  ['status: order_id as an array', { path: STATUS, body: () => json(statusBody(all(drop('payment_id'), set('order_id', ['o'])))), errors: [str('order_id')] }],
  ['status: payment_id of 256 characters', { path: STATUS, body: () => json(statusBody(set('payment_id', 'p'.repeat(256)))), errors: ['payment_id: This value is too long. It should have 255 characters or less.'] }],
  ['status: merchant_key as an array', { path: STATUS, body: () => json(statusBody(set('merchant_key', [merchant.merchant_key]))), errors: [str('merchant_key')] }],
  ['status: a hash of the wrong length', { path: STATUS, body: () => json(statusBody(set('hash', 'abc'))), errors: [HASH] }],
  ['status: a non-hex hash', { path: STATUS, body: () => json(statusBody(set('hash', 'g'.repeat(40)))), errors: [HASH] }],
  ['status: the hash as a number', { path: STATUS, body: () => json(statusBody(set('hash', 1234))), errors: [str('hash')] }],
  ['status: SQL as payment_id, signed', { path: STATUS, status: 404, body: () => json(signBody(STATUS, { merchant_key: merchant.merchant_key, payment_id: "' OR 1=1 --" }, merchant.password)), errors: [] }],
  ['status: an unknown payment, signed', { path: STATUS, status: 404, body: () => json(statusBody()), errors: [] }],
];

function expectEnvelope(res: HttpAnswer): void {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json).toEqual({ error_code: expect.any(Number), error_message: expect.any(String), errors: expect.any(Array) });
  for (const item of (res.json as { errors: unknown[] }).errors) {
    expect(item).toEqual({ error_code: expect.any(Number), error_message: expect.any(String) });
  }
}

describe('hostile requests to the merchant API', () => {
  let paymentsBefore: number;
  beforeAll(async () => {
    paymentsBefore = (await payments()).length;
  });

  it('the table has a case for every kind of hostile input', () => {
    expect(rows.length).toBeGreaterThanOrEqual(30);
    expect(new Set(rows.map(([name]) => name)).size).toBe(rows.length);
  });

  it.each(rows)('%s: answered 4xx with the error envelope', async (_name, r) => {
    const res = await service.request({
      path: r.path,
      headers: r.contentType === null ? {} : { 'content-type': r.contentType ?? 'application/json' },
      body: r.body(),
    });
    expect(res.status).toBe(r.status ?? 400);
    expectEnvelope(res);
    if (r.errors) expect((res.json as { errors: { error_message: string }[] }).errors.map((e) => e.error_message)).toEqual(r.errors);
  });

  it('stored nothing for any of them', async () => {
    expect((await payments()).length).toBe(paymentsBefore);
  });
});

describe('unknown routes get the envelope too, and store nothing', () => {
  it.each([
    ['GET', SESSION, 405, 'Method GET is not allowed on /api/v1/session; use POST.'],
    ['PUT', SESSION, 405, 'Method PUT is not allowed on /api/v1/session; use POST.'],
    ['DELETE', STATUS, 405, 'Method DELETE is not allowed on /api/v1/payment/status; use POST.'],
    ['POST', '/api/v1/sessions', 404, 'No route: POST /api/v1/sessions does not exist.'],
    ['POST', `${SESSION}/`, 404, 'No route: POST /api/v1/session/ does not exist.'],
    ['POST', '/API/V1/SESSION', 404, 'No route: POST /API/V1/SESSION does not exist.'],
    ['POST', '/api/v2/session', 404, 'No route: POST /api/v2/session does not exist.'],
    // Dot segments are resolved before routing (as a URL is): /api/session.
    ['POST', '/api/v1/%2e%2e/session', 404, 'No route: POST /api/session does not exist.'],
    ['POST', '/', 404, 'No route: POST / does not exist.'],
  ])('%s %s is %d', async (method, path, status, message) => {
    const before = (await payments()).length;
    const res = await service.request({ method, path, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : json(session()) });
    expect([res.status, res.json]).toEqual([status, { error_code: status * 1000, error_message: message, errors: [] }]);
    expect((await payments()).length).toBe(before);
  });
});

describe('strings that look like injections but break no rule', () => {
  it('are stored and echoed exactly as sent, as data', async () => {
    const description = '"; DROP TABLE payments; #';
    const customData = { note: "<script>alert('x')</script>", sql: "' OR 1=1 --", template: '${process.env}' };
    const res = await service.signedPost<{ redirect_url: string }>(
      SESSION,
      validSessionBody(merchant.merchant_key, { order: { number: 'inject-1', amount: '1.00', currency: 'USD', description }, custom_data: customData }),
      merchant.password,
    );
    expect(res.status).toBe(200);
    const paymentId = paymentIdOf(res.json.redirect_url);
    const stored = await storedPayment(service, paymentId);
    expect(stored).toMatchObject({ order: { description }, customData });

    const status = await service.signedPost<Json>(STATUS, { merchant_key: merchant.merchant_key, payment_id: paymentId }, merchant.password);
    expect(status.json.order).toMatchObject({ description });
  });

  it('a JSON body the gateway base64-encodes (a +json content type) is decoded and accepted', async () => {
    const res = await service.request({ path: SESSION, headers: { 'content-type': 'application/vnd.checkout+json' }, body: json(session()) });
    expect(res.status).toBe(200);
  });
});
