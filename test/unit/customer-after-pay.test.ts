import { customerAfterPay, type Customer } from '../../lambdas/domain/payment';

/**
 * The customer a page attempt records (protocol.md §7: `customer` is conditional; the page asks for
 * what the payment needs). The session's own values always win; what was typed on the page fills
 * in only what the session left out.
 */
type Typed = Parameters<typeof customerAfterPay>[1];

const rows: readonly (readonly [rule: string, session: Customer, typed: Typed, recorded: Customer])[] = [
  ['a session without a customer takes the cardholder as the name and the e-mail typed', {}, { holder: 'Maria Schmidt', email: 'maria@example.com' }, { name: 'Maria Schmidt', email: 'maria@example.com' }],
  ["the session's name wins over the cardholder (someone else's card)", { name: 'John Doe' }, { holder: 'Jane Doe', email: 'j@example.com' }, { name: 'John Doe', email: 'j@example.com' }],
  ["the session's e-mail wins over one typed", { email: 'session@example.com' }, { holder: 'Ana Lima', email: 'typed@example.com' }, { name: 'Ana Lima', email: 'session@example.com' }],
  ['a full session customer is kept as it is', { name: 'John Doe', email: 'john@example.com' }, { holder: 'Card Holder', email: 'other@example.com' }, { name: 'John Doe', email: 'john@example.com' }],
  ['a saved card has no cardholder typed: no name', {}, { email: 'maria@example.com' }, { email: 'maria@example.com' }],
  ['no e-mail asked (the method needs none): no e-mail', {}, { holder: 'Maria Schmidt' }, { name: 'Maria Schmidt' }],
  ['nothing known, nothing typed: an empty customer', {}, {}, {}],
  ['blank typed values are not a name or an e-mail', {}, { holder: '   ', email: '' }, {}],
  ['a blank name or e-mail kept on the session counts as none', { name: '', email: ' ' }, { holder: 'Ana Lima', email: 'ana@example.com' }, { name: 'Ana Lima', email: 'ana@example.com' }],
  ['typed values are kept without the spaces around them', {}, { holder: '  Maria Schmidt ', email: ' maria@example.com ' }, { name: 'Maria Schmidt', email: 'maria@example.com' }],
];

it.each(rows)('%s', (_rule, session, typed, recorded) => {
  const result = customerAfterPay(session, typed);
  // toStrictEqual: no key present with an undefined value (it would be stored and echoed as such).
  expect(result).toStrictEqual(recorded);
});

it('does not change the session customer it was given', () => {
  const session: Customer = Object.freeze({ email: 'session@example.com' });
  customerAfterPay(session, { holder: 'Ana Lima', email: 'typed@example.com' });
  expect(session).toStrictEqual({ email: 'session@example.com' });
});
