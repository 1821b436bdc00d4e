import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { callbackFields } from '../../lambdas/domain/callback';
import type { Payment } from '../../lambdas/domain/payment';

/** The hash check the README gives merchants must accept our callbacks and refuse forged ones. */
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
  runInNewContext(`${example}\nresult = callbackIsGenuine(f, pw);`, sandbox);
  return sandbox.result as boolean;
}

it('the README has a JavaScript example of the callback check', () => {
  expect(example).toContain('function callbackIsGenuine');
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
