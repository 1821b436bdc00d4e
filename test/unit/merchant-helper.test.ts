import vectorsFile from '../fixtures/hash-vectors.json';
import { UsageError } from '../../local/cli';
import { parseApiCommand } from '../../local/merchant-api-command';
import { amountDecimalsHint, signMessage, type SignedMessage } from '../../local/merchant-requests';
import { refusalLine } from '../../local/http-server';

/**
 * `npm run merchant -- sign|status|refund|void`: `sign` gives the protocol's known answers (it
 * signs with the service's own field lists), the usage is checked before anything is sent, and an
 * amount written with the wrong decimals is explained beside the protocol's fixed words.
 */
const vectors = vectorsFile as { vectors: { name: string; fields: string[]; password: string; hash: string }[] };
const MESSAGE_OF: Record<string, SignedMessage> = {
  'session': 'session',
  'session, JPY (exponent 0)': 'session',
  'session, KWD (exponent 3)': 'session',
  'status / void / retry by payment_id': 'void',
  'status by order_id': 'status',
  'capture / refund': 'refund',
  'recurring': 'recurring',
  'callback / return parameters': 'callback',
  'session, non-ASCII description, ASCII-only upper-casing (the platform)': 'session',
};

describe('sign', () => {
  it.each(vectors.vectors.filter((v) => MESSAGE_OF[v.name]).map((v) => [v.name, v] as const))('%s: the known answer', (_name, v) => {
    expect(signMessage(MESSAGE_OF[v.name]!, v.fields, v.password)).toBe(v.hash);
  });

  it('signs status, retry and capture as their siblings', () => {
    expect(signMessage('status', ['p-1'], 'pw')).toBe(signMessage('void', ['p-1'], 'pw'));
    expect(signMessage('retry', ['p-1'], 'pw')).toBe(signMessage('void', ['p-1'], 'pw'));
    expect(signMessage('capture', ['p-1', '1.00'], 'pw')).toBe(signMessage('refund', ['p-1', '1.00'], 'pw'));
  });
});

describe('the command line', () => {
  it.each([
    [['sign', 'session', 'demo-1', '25.00', 'USD', 'Demo order'], { name: 'sign', message: 'session', values: ['demo-1', '25.00', 'USD', 'Demo order'] }],
    [['status', 'p-1'], { name: 'status', paymentId: 'p-1' }],
    [['status', '--order-id', 'demo-1'], { name: 'status', orderId: 'demo-1' }],
    [['refund', 'p-1'], { name: 'refund', paymentId: 'p-1' }],
    [['refund', 'p-1', '2.50', '--base-url', 'https://api.example'], { name: 'refund', paymentId: 'p-1', amount: '2.50', who: { baseUrl: 'https://api.example' } }],
    [['void', 'p-1', '--merchant-key', 'k', '--password', 'pw'], { name: 'void', paymentId: 'p-1', who: { merchantKey: 'k', password: 'pw' } }],
  ])('%j', (argv, expected) => {
    expect(parseApiCommand(argv)).toMatchObject(expected);
  });

  it.each([
    [['sign', 'session', 'demo-1', '25.00', 'USD'], 'sign session takes 4 values: order.number order.amount order.currency order.description'],
    [['sign', 'payment'], 'sign needs a message: session, recurring, status, void, retry, refund, capture, callback'],
    [['status'], 'status takes a payment id: status PAYMENT_ID (or --order-id ORDER)'],
    [['refund', 'p-1', '1.00', 'extra'], 'refund takes a payment id and, optionally, an amount: refund PAYMENT_ID [AMOUNT]'],
    [['void', 'p-1', '--password', 'pw'], '--merchant-key and --password go together'],
    [['void', 'p-1', '--base-url', 'localhost:3000'], '--base-url must be an http(s) URL such as http://127.0.0.1:3000, not "localhost:3000"'],
    [['void', 'p-1', '--order-id', 'o'], '--order-id: only status takes it'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseApiCommand(argv)).toThrow(new UsageError(message));
  });
});

describe('an amount with the wrong decimals', () => {
  it.each([
    ['1500.00', 'JPY', 'JPY amounts take no decimals (e.g. "1500"); "1500.00" is answered "order.amount: This value is not valid." (docs/errors.md)'],
    ['1500.', 'JPY', 'JPY amounts take no decimals (e.g. "1500"); "1500." is answered "order.amount: This value is not valid." (docs/errors.md)'],
    ['10.5', 'USD', 'USD amounts take exactly 2 decimals (e.g. "10.00"); "10.5" is answered "order.amount: This value is not valid." (docs/errors.md)'],
    ['10.25', 'KWD', 'KWD amounts take exactly 3 decimals (e.g. "10.000"); "10.25" is answered "order.amount: This value is not valid." (docs/errors.md)'],
  ])('%s %s is explained', (amount, currency, hint) => {
    expect(amountDecimalsHint(amount, currency)).toBe(hint);
  });

  it.each([['1500', 'JPY'], ['10.00', 'USD'], ['10.250', 'KWD'], ['10.00', 'XXY'], ['abc', 'USD']])('%s %s needs no word', (amount, currency) => {
    expect(amountDecimalsHint(amount, currency)).toBeUndefined();
  });

  it("is explained in the runner's log line, the merchant's answer unchanged", () => {
    const body = JSON.stringify({ error_code: 0, error_message: 'Request data is invalid.', errors: [{ error_code: 100000, error_message: 'order.amount: This value is not valid.' }] });
    expect(refusalLine('POST', 'CreateSession (POST /api/v1/session)', 400, { body, contentType: 'application/json' })).toBe(
      "refused POST CreateSession (POST /api/v1/session) 400: Request data is invalid. order.amount: This value is not valid. (an amount is a string with exactly its currency's decimals: 10.00 USD, 1500 JPY (none), 10.250 KWD; docs/errors.md)",
    );
    const other = JSON.stringify({ error_code: 0, error_message: 'Request data is invalid.', errors: [{ error_code: 100000, error_message: 'order.currency: This value is not valid.' }] });
    expect(refusalLine('POST', 'CreateSession (POST /api/v1/session)', 400, { body: other })).not.toContain('decimals');
  });
});
