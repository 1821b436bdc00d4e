import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { callbackFields, encodeForm } from '../../lambdas/domain/callback';
import { signatureHeader } from '../../lambdas/domain/webhook-signature';
import type { Payment } from '../../lambdas/domain/payment';

/**
 * The checks the README gives merchants: the signature (X-Checkout-Signature) must accept our
 * callbacks and refuse forged, altered and replayed ones — including one built from the hash a
 * customer holds; the legacy hash check must accept ours (it cannot tell a forged outcome).
 */
const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
const example = /### Callbacks[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];

const payment: Payment = {
  paymentId: 'f0a51dfa-fc43-11ec-8128-0242ac120004',
  merchantKey: 'm',
  status: 'settled',
  order: { number: 'order-1234', amount: '3.01', amountMinor: 301, currency: 'USD', description: 'Gift, wrapped — für Oma' },
  customer: { name: 'John Doe' },
  createdAt: '2030-03-01T06:00:00.000Z',
  updatedAt: '2030-03-01T06:00:00.000Z',
  transactions: [],
};
const password = '13a4822c5907ed235f3a068c76184fc3';
const fields = Object.fromEntries(
  callbackFields(payment, { transId: 't', type: 'sale', status: 'success', amountMinor: 301, at: payment.createdAt, orderStatus: 'settled' }, password),
);

function check(f: Record<string, string>, pw: string): boolean {
  const sandbox: Record<string, unknown> = { require, f, pw };
  runInNewContext(`${example}\nresult = callbackHashMatches(f, pw);`, sandbox);
  return sandbox.result as boolean;
}

function genuine(rawBody: string, header: string | undefined, secret: string, nowSeconds: number): boolean {
  const sandbox: Record<string, unknown> = { require, Buffer, rawBody, header, secret, nowSeconds };
  runInNewContext(`${example}\nresult = callbackIsGenuine(rawBody, header, secret, nowSeconds);`, sandbox);
  return sandbox.result as boolean;
}

it('the README has a JavaScript example of both checks, the signature first', () => {
  expect(example).toContain('function callbackIsGenuine');
  expect(example).toContain('function callbackHashMatches');
  expect(example!.indexOf('callbackIsGenuine')).toBeLessThan(example!.indexOf('callbackHashMatches'));
});

describe('the signature check', () => {
  const secret = 'whsec_test-secret';
  const sentAt = new Date('2030-03-01T06:00:00.000Z');
  const now = sentAt.getTime() / 1000;
  const body = encodeForm(Object.entries(fields));
  const header = signatureHeader(body, sentAt, [secret]);

  it('accepts a callback we sent', () => {
    expect(genuine(body, header, secret, now + 10)).toBe(true);
  });

  it('accepts it during a rotation with either secret', () => {
    const both = signatureHeader(body, sentAt, ['whsec_new', secret]);
    expect(genuine(body, both, secret, now)).toBe(true);
    expect(genuine(body, both, 'whsec_new', now)).toBe(true);
  });

  it('refuses the forged outcome a customer can build with the hash from their return URL', () => {
    // The customer of a declined payment holds its hash (cancel_url's return parameters): the legacy check passes…
    const declined = Object.fromEntries(
      callbackFields({ ...payment, status: 'decline' }, { transId: 't', type: 'sale', status: 'fail', amountMinor: 301, at: payment.createdAt, orderStatus: 'decline', reason: 'Declined by processing.' }, password),
    );
    const declinedBody = encodeForm(Object.entries(declined));
    expect(genuine(declinedBody, signatureHeader(declinedBody, sentAt, [secret]), secret, now)).toBe(true);
    const { reason: _reason, ...rest } = declined;
    const forged = { ...rest, order_status: 'settled', type: 'sale', status: 'success' };
    expect(check(forged, password)).toBe(true);
    // …but no signature can be made without the webhook secret.
    const forgedBody = encodeForm(Object.entries(forged));
    expect(genuine(forgedBody, undefined, secret, now)).toBe(false);
    expect(genuine(forgedBody, signatureHeader(declinedBody, sentAt, [secret]), secret, now)).toBe(false);
    expect(genuine(forgedBody, signatureHeader(forgedBody, sentAt, ['a guess']), secret, now)).toBe(false);
  });

  it('refuses a replay older than five minutes, and a body changed after signing', () => {
    expect(genuine(body, header, secret, now + 301)).toBe(false);
    expect(genuine(body.replace('order_amount=3.01', 'order_amount=30.10'), header, secret, now)).toBe(false);
    expect(genuine(body, header, 'whsec_another', now)).toBe(false);
  });
});

it('accepts a callback we sent, also with a non-ASCII description', () => {
  expect(check(fields, password)).toBe(true);
});

it.each([
  ['another password', { ...fields }, 'not-the-password'],
  ['a changed amount', { ...fields, order_amount: '301.00' }, password],
  ['a missing hash', { ...fields, hash: undefined as unknown as string }, password],
])('refuses %s', (_name, f, pw) => {
  expect(check(f, pw)).toBe(false);
});
