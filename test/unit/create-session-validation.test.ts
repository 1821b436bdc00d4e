import { ApiError } from '../../lambdas/domain/errors';
import { validateCreateSession, type CreateSessionRequest } from '../../lambdas/protocol/merchant/session';
import { all, drop, mutated, set, validSessionBody, type Mutation } from '../support/fixtures';

/**
 * Create-session validation, field by field (seed-spec 2.1, protocol.md §2-§4). Each row edits a
 * valid body and states the exact errors the merchant receives: "<dotted path>: <rule message>".
 */
const valid = { ...validSessionBody('merchant-1'), hash: 'a'.repeat(40) };

function errorsOf(mutation: Mutation): string[] {
  try {
    validateCreateSession(mutated(valid, mutation));
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    const envelope = e.toEnvelope();
    expect(e.httpStatus).toBe(400);
    expect(envelope.error_code).toBe(0);
    expect(envelope.error_message).toBe('Request data is invalid.');
    for (const item of envelope.errors) expect(item.error_code).toBe(100000);
    return envelope.errors.map((item) => item.error_message);
  }
  return [];
}

const BLANK = 'This value should not be blank.';
const INVALID = 'This value is not valid.';
const URL = 'This value is not a valid URL.';
const CHOICE = 'The value you selected is not a valid choice.';
const POSITIVE = 'This value should be greater than 0.';
const long = (n: number) => `This value is too long. It should have ${n} characters or less.`;
const short = (n: number) => `This value is too short. It should have ${n} characters or more.`;
const type = (t: string) => `This value should be of type ${t}.`;

type Row = readonly [rule: string, change: Mutation, errors: string[]];

const ROWS: Record<string, readonly Row[]> = {
  merchant_key: [
    ['is required', drop('merchant_key'), [`merchant_key: ${BLANK}`]],
    ['may not be empty', set('merchant_key', ''), [`merchant_key: ${BLANK}`]],
    ['null is blank', set('merchant_key', null), [`merchant_key: ${BLANK}`]],
    ['is a string, not a number', set('merchant_key', 12345), [`merchant_key: ${type('string')}`]],
    ['is a string, not an object', set('merchant_key', { id: 1 }), [`merchant_key: ${type('string')}`]],
    ['is a string, not an array', set('merchant_key', ['k']), [`merchant_key: ${type('string')}`]],
    ['has at most 255 characters', set('merchant_key', 'k'.repeat(256)), [`merchant_key: ${long(255)}`]],
  ],
  operation: [
    ['is required', drop('operation'), [`operation: ${BLANK}`]],
    ['may not be empty', set('operation', ''), [`operation: ${BLANK}`]],
    ['is purchase (sale is not a choice)', set('operation', 'sale'), [`operation: ${CHOICE}`]],
    ['is case-sensitive', set('operation', 'PURCHASE'), [`operation: ${CHOICE}`]],
    ['a number is not a choice', set('operation', 1), [`operation: ${CHOICE}`]],
  ],
  methods: [
    ['may not be an empty list', set('methods', []), [`methods: ${BLANK}`]],
    // Reported on `methods`, as the platform does (its invalid example), not on the element.
    ['an empty-string element is blank', set('methods', ['']), [`methods: ${BLANK}`]],
    ['each is an available method', set('methods', ['card', 'bitcoin']), [`methods: ${CHOICE}`]],
    ['is a list, not a string', set('methods', 'card'), [`methods: ${type('array')}`]],
    ['has at most 10 elements', set('methods', Array(11).fill('card')), ['methods: This collection should contain 10 elements or less.']],
  ],
  success_url: [
    ['is required', drop('success_url'), [`success_url: ${BLANK}`]],
    ['may not be empty', set('success_url', ''), [`success_url: ${BLANK}`]],
    ['is a URL', set('success_url', 'shop.example/success'), [`success_url: ${URL}`]],
    ['is an http(s) URL', set('success_url', 'javascript:alert(1)'), [`success_url: ${URL}`]],
    ['carries no credentials', set('success_url', 'https://user:pw@shop.example/'), [`success_url: ${URL}`]],
    ['has no whitespace', set('success_url', 'https://shop.example/a b'), [`success_url: ${URL}`]],
    ['has at most 1024 characters', set('success_url', `https://shop.example/${'a'.repeat(1004)}`), [`success_url: ${long(1024)}`]],
  ],
  cancel_url: [
    ['is a URL', set('cancel_url', 'not a url'), [`cancel_url: ${URL}`]],
    ['is an http(s) URL', set('cancel_url', 'ftp://shop.example/cancel'), [`cancel_url: ${URL}`]],
    ['has at most 1024 characters', set('cancel_url', `https://shop.example/${'a'.repeat(1004)}`), [`cancel_url: ${long(1024)}`]],
  ],
  url_target: [
    ['is _blank, _self, _parent, _top or a frame name', set('url_target', '_new'), [`url_target: ${INVALID}`]],
    ['a frame name starts with a letter', set('url_target', '1frame'), [`url_target: ${INVALID}`]],
    ['is a string', set('url_target', 1), [`url_target: ${type('string')}`]],
  ],
  req_token: [
    ['is a boolean', set('req_token', 'maybe'), [`req_token: ${type('bool')}`]],
    ['is a boolean, not 2', set('req_token', 2), [`req_token: ${type('bool')}`]],
  ],
  card_token: [
    ['each token has exactly 64 characters', set('card_token', ['abc']), ['card_token.0: This value should have exactly 64 characters.']],
    ['each token is letters and digits', set('card_token', ['-'.repeat(64)]), [`card_token.0: ${INVALID}`]],
    ['is a list of strings', set('card_token', [64]), [`card_token.0: ${type('string')}`]],
    ['is a list or a string, not a number', set('card_token', 5), [`card_token: ${type('array')}`]],
    ['has at most 10 tokens', set('card_token', Array(11).fill('a'.repeat(64))), ['card_token: This collection should contain 10 elements or less.']],
  ],
  recurring_init: [
    ['is a boolean', set('recurring_init', 'yes'), [`recurring_init: ${type('bool')}`]],
  ],
  schedule_id: [
    ['is allowed only with recurring_init', set('schedule_id', 'sched-1'), ['schedule_id: This value is allowed only when recurring_init is true.']],
    ['is letters, digits, _ and -', all(set('recurring_init', true), set('schedule_id', 'a b')), [`schedule_id: ${INVALID}`]],
    ['has at most 255 characters', all(set('recurring_init', true), set('schedule_id', 's'.repeat(256))), [`schedule_id: ${long(255)}`]],
  ],
  hash: [
    ['is required', drop('hash'), [`hash: ${BLANK}`]],
    ['may not be empty', set('hash', ''), [`hash: ${BLANK}`]],
    ['is a string', set('hash', 1234), [`hash: ${type('string')}`]],
    ['has at most 255 characters', set('hash', 'a'.repeat(256)), [`hash: ${long(255)}`]],
  ],
  order: [
    ['is required', drop('order'), [`order: ${BLANK}`]],
    ['null is blank', set('order', null), [`order: ${BLANK}`]],
    ['is an object', set('order', 'order-1'), [`order: ${type('array')}`]],
  ],
  'order.number': [
    ['is required', drop('order.number'), [`order.number: ${BLANK}`]],
    ['may not be empty', set('order.number', ''), [`order.number: ${BLANK}`]],
    // The platform's characters: ASCII letters, digits and -!"#$%&'()*+,./:;@ (protocol.md §7).
    ['takes an invoice reference', set('order.number', 'INV/2026/00001-12'), []],
    ['takes # (A#1)', set('order.number', 'A#1'), []],
    ['takes : and @ (x:y@z)', set('order.number', 'x:y@z'), []],
    ['takes every character of the platform\'s list', set('order.number', `a1-!"#$%&'()*+,./:;@Z`), []],
    ['takes 255 of them', set('order.number', '#/'.repeat(127) + 'A'), []],
    ...[...'_?=[]~<>{}|\\^`'].map((c): Row => [`has no ${c} (not in the platform's list)`, set('order.number', `order${c}1`), [`order.number: ${INVALID}`]]),
    ['has no spaces', set('order.number', 'order 1'), [`order.number: ${INVALID}`]],
    ['has no tab or line break', set('order.number', 'order\t1\n'), [`order.number: ${INVALID}`]],
    ['has no letters outside ASCII', set('order.number', 'Bestellung-Größe'), [`order.number: ${INVALID}`]],
    ['has at most 255 characters', set('order.number', 'a'.repeat(256)), [`order.number: ${long(255)}`]],
    ['is a string', set('order.number', 1234), [`order.number: ${type('string')}`]],
  ],
  'order.amount': [
    ['is required', drop('order.amount'), [`order.amount: ${BLANK}`]],
    ['null is blank', set('order.amount', null), [`order.amount: ${BLANK}`]],
    ['may not be empty', set('order.amount', ''), [`order.amount: ${BLANK}`]],
    ['is greater than 0', set('order.amount', '0.00'), ['order.amount: This value should be greater than 0.']],
    ['is not negative', set('order.amount', '-1.00'), ['order.amount: This value should be greater than 0.']],
    ['as a number, is greater than 0', set('order.amount', 0), ['order.amount: This value should be greater than 0.']],
    ['has as many decimals as the currency (USD: 2)', set('order.amount', '1.0'), [`order.amount: ${INVALID}`]],
    ['has decimals when the currency has them', set('order.amount', '10'), [`order.amount: ${INVALID}`]],
    ['has no decimals in JPY', all(set('order.currency', 'JPY'), set('order.amount', '1500.00')), [`order.amount: ${INVALID}`]],
    ['has three decimals in KWD', all(set('order.currency', 'KWD'), set('order.amount', '10.25')), [`order.amount: ${INVALID}`]],
    ['is plain digits, no exponent', set('order.amount', '1e5'), [`order.amount: ${INVALID}`]],
    ['is a number or a string, not a boolean', set('order.amount', true), [`order.amount: ${INVALID}`]],
    ['is at most 100000000000.00 (exact integer arithmetic)', set('order.amount', '100000000000.01'), [`order.amount: ${INVALID}`]],
  ],
  'order.currency': [
    ['is required', drop('order.currency'), [`order.currency: ${BLANK}`]],
    ['may not be empty', set('order.currency', ''), [`order.currency: ${BLANK}`]],
    ['is upper case', set('order.currency', 'usd'), [`order.currency: ${INVALID}`]],
    ['is ISO 4217', set('order.currency', 'XYZ'), [`order.currency: ${INVALID}`]],
    ['is money (XAU, gold, is not)', set('order.currency', 'XAU'), [`order.currency: ${INVALID}`]],
    ['has three letters', set('order.currency', 'US'), [`order.currency: ${INVALID}`]],
  ],
  'order.description': [
    ['is required', drop('order.description'), [`order.description: ${BLANK}`]],
    ['may not be empty', set('order.description', ''), [`order.description: ${BLANK}`]],
    ['has at least 2 characters', set('order.description', 'a'), [`order.description: ${short(2)}`]],
    ['has at most 1024 characters', set('order.description', 'a'.repeat(1025)), [`order.description: ${long(1024)}`]],
    ['takes the punctuation shops write', set('order.description', 'Payment Order # S00042-1 in the store http://localhost:8069/ [a_b]?x=1~'), []],
    ['takes HTML-looking text (escaped wherever it is shown)', set('order.description', 'Gift <b> & "box"'), []],
    ['has no control characters', set('order.description', 'Gift\tbox'), [`order.description: ${INVALID}`]],
    ['has no line breaks', set('order.description', 'Gift\nbox'), [`order.description: ${INVALID}`]],
    ['has no line separators', set('order.description', 'Gift\u2028box'), [`order.description: ${INVALID}`]],
    ['has no bidi overrides or zero-width characters', set('order.description', 'Gift\u202ebox\u200b'), [`order.description: ${INVALID}`]],
    ['takes exactly 2 characters', set('order.description', 'ab'), []],
    ['takes exactly 1024 characters', set('order.description', 'a'.repeat(1024)), []],
    ['takes every ASCII punctuation', set('order.description', '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'), []],
    ['takes any script, symbols and a no-break space', set('order.description', 'Заказ № 5 — 贈り物\u00a0🎁'), []],
    ['has no NEL (a C1 control character)', set('order.description', 'Gift\u0085box'), [`order.description: ${INVALID}`]],
    ['has no DEL', set('order.description', 'Gift\u007fbox'), [`order.description: ${INVALID}`]],
    ['has no paragraph separator', set('order.description', 'Gift\u2029box'), [`order.description: ${INVALID}`]],
    ['has no soft hyphen or byte order mark (format characters)', set('order.description', '\ufeffGift\u00adbox'), [`order.description: ${INVALID}`]],
    ['has no private-use or unassigned code points', set('order.description', 'Gift\ue000\u0378'), [`order.description: ${INVALID}`]],
  ],
  customer: [
    // Conditional, as on the platform: the page asks for what the payment needs.
    ['may be left out', drop('customer'), []],
    ['may be null', set('customer', null), []],
    ['may be empty', set('customer', {}), []],
    ['may carry only an e-mail', set('customer', { email: 'john@example.com' }), []],
    ['is an object', set('customer', 'John'), [`customer: ${type('array')}`]],
  ],
  'customer.name': [
    ['may be left out', drop('customer.name'), []],
    ['may be sent empty (read as not given)', set('customer.name', ''), []],
    ['has at least 2 characters', set('customer.name', 'J'), [`customer.name: ${short(2)}`]],
    ['has at most 32 characters', set('customer.name', 'J'.repeat(33)), [`customer.name: ${long(32)}`]],
    ['is basic Latin letters', set('customer.name', 'John 3'), [`customer.name: ${INVALID}`]],
    ['has no accented letters', set('customer.name', 'José Díaz'), [`customer.name: ${INVALID}`]],
  ],
  'customer.email': [
    ['is an e-mail address', set('customer.email', 'john.example.com'), [`customer.email: ${INVALID}`]],
    ['may be sent empty (read as not given)', set('customer.email', ''), []],
    ['has at most 255 characters', set('customer.email', `${'j'.repeat(250)}@example.com`), [`customer.email: ${long(255)}`]],
  ],
  billing_address: [
    ['is an object', set('billing_address', 'Main St'), [`billing_address: ${type('array')}`]],
  ],
  'billing_address.country': [
    ['has exactly 2 characters', set('billing_address.country', 'USA'), ['billing_address.country: This value should have exactly 2 characters.']],
    ['is ISO 3166-1 alpha-2', set('billing_address.country', 'XX'), [`billing_address.country: ${INVALID}`]],
    ['is upper case', set('billing_address.country', 'us'), [`billing_address.country: ${INVALID}`]],
  ],
  'billing_address.state': [
    ['has at least 2 characters', set('billing_address.state', 'C'), [`billing_address.state: ${short(2)}`]],
    ['has at most 32 characters', all(set('billing_address.country', 'DE'), set('billing_address.state', 'B'.repeat(33))), [`billing_address.state: ${long(32)}`]],
    ['is letters', all(set('billing_address.country', 'DE'), set('billing_address.state', 'Bayern 2')), [`billing_address.state: ${INVALID}`]],
    ['is a 2-letter code in the USA', set('billing_address.state', 'California'), [`billing_address.state: ${INVALID}`]],
    ['is a 2-letter code in Japan', all(set('billing_address.country', 'JP'), set('billing_address.state', 'Tokyo')), [`billing_address.state: ${INVALID}`]],
  ],
  'billing_address.city': [
    ['has at least 2 characters', set('billing_address.city', 'L'), [`billing_address.city: ${short(2)}`]],
    ['has at most 32 characters', set('billing_address.city', 'L'.repeat(33)), [`billing_address.city: ${long(32)}`]],
    ['is letters', set('billing_address.city', 'C1ty'), [`billing_address.city: ${INVALID}`]],
  ],
  'billing_address.address': [
    ['has at least 2 characters', set('billing_address.address', '1'), [`billing_address.address: ${short(2)}`]],
    ['has at most 32 characters', set('billing_address.address', 'a'.repeat(33)), [`billing_address.address: ${long(32)}`]],
    ['is letters and digits', set('billing_address.address', '<1 Main St>'), [`billing_address.address: ${INVALID}`]],
  ],
  'billing_address.zip': [
    ['has at least 2 characters', set('billing_address.zip', '9'), [`billing_address.zip: ${short(2)}`]],
    ['has at most 10 characters', set('billing_address.zip', '12345678901'), [`billing_address.zip: ${long(10)}`]],
    ['is letters and digits', set('billing_address.zip', '90$01'), [`billing_address.zip: ${INVALID}`]],
  ],
  'billing_address.phone': [
    ['has at most 32 characters', set('billing_address.phone', '1'.repeat(33)), [`billing_address.phone: ${long(32)}`]],
    ['is 0-9 + ( ) -', set('billing_address.phone', 'call me'), [`billing_address.phone: ${INVALID}`]],
  ],
  parameters: [
    ['is an object keyed by method', set('parameters', 'x'), [`parameters: ${type('array')}`]],
    ['method names are letters, digits, _ and -', set('parameters', { 'ca rd': {} }), [`parameters.ca rd: ${INVALID}`]],
    ['values are string maps', set('parameters', { card: { mode: 1 } }), [`parameters.card.mode: ${type('string')}`]],
    ['values have at most 255 characters', set('parameters', { card: { mode: 'm'.repeat(256) } }), [`parameters.card.mode: ${long(255)}`]],
  ],
  session_expiry: [
    ['is at least 1 minute', set('session_expiry', 0), ['session_expiry: This value should be between 1 and 720.']],
    ['is at most 720 minutes', set('session_expiry', 721), ['session_expiry: This value should be between 1 and 720.']],
    ['is whole minutes', set('session_expiry', 1.5), [`session_expiry: ${type('integer')}`]],
    ['is a number', set('session_expiry', 'soon'), [`session_expiry: ${type('numeric')}`]],
  ],
  expiry_url: [
    ['is a URL', set('expiry_url', 'expired'), [`expiry_url: ${URL}`]],
    ['has at most 1024 characters', set('expiry_url', `https://shop.example/${'a'.repeat(1004)}`), [`expiry_url: ${long(1024)}`]],
  ],
  error_url: [
    ['is a URL', set('error_url', 'error'), [`error_url: ${URL}`]],
  ],
  custom_data: [
    ['is an object', set('custom_data', 'x'), [`custom_data: ${type('array')}`]],
    ['values are strings', set('custom_data', { basket: 1 }), [`custom_data.basket: ${type('string')}`]],
    ['values have at most 255 characters', set('custom_data', { basket: 'b'.repeat(256) }), [`custom_data.basket: ${long(255)}`]],
    ['keys are letters, digits, _ and -', set('custom_data', { 'a.b': 'x' }), [`custom_data.a.b: ${INVALID}`]],
    ['has at most 20 entries', set('custom_data', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']))), ['custom_data: This collection should contain 20 elements or less.']],
  ],
};

describe('create session: the valid body', () => {
  it('passes validation', () => {
    expect(errorsOf(() => undefined)).toEqual([]);
  });
});

describe.each(Object.entries(ROWS))('create session: %s', (_field, rows) => {
  it.each(rows.map(([rule, change, errors]) => [rule, change, errors] as const))('%s', (_rule, change, errors) => {
    expect(errorsOf(change)).toEqual(errors);
  });
});

describe('create session: several invalid fields', () => {
  it('give one item per invalid field, in the order of the schema', () => {
    const change = all(set('success_url', 'x'), set('order.number', ''), set('order.amount', '0.00'), set('customer.name', 'J'));
    // The platform's order: operation, methods, order.*, cancel_url, success_url, then the rest.
    expect(errorsOf(change)).toEqual([
      `order.number: ${BLANK}`,
      'order.amount: This value should be greater than 0.',
      `success_url: ${URL}`,
      `customer.name: ${short(2)}`,
    ]);
  });

  it('check the amount against the currency even when other fields failed', () => {
    expect(errorsOf(all(set('merchant_key', ''), set('order.amount', '1.5')))).toEqual([`merchant_key: ${BLANK}`, `order.amount: ${INVALID}`]);
  });

  it('give the platform\'s own invalid example item for item (protocol.md §7)', () => {
    const change = all(
      set('operation', 'credit'),
      set('methods', ['']),
      set('order', { number: '', amount: '1.2', currency: 'Dollar', description: '' }),
      set('cancel_url', '1.com'),
      set('success_url', ''),
      set('recurring_init', 'true'),
    );
    expect(errorsOf(change)).toEqual([
      `operation: ${CHOICE}`,
      `methods: ${BLANK}`,
      `order.number: ${BLANK}`,
      `order.amount: ${POSITIVE}`,
      `order.currency: ${INVALID}`,
      `order.description: ${BLANK}`,
      `cancel_url: ${URL}`,
      `success_url: ${BLANK}`,
    ]);
  });

  it('give one item for a field that breaks several rules', () => {
    expect(errorsOf(set('order.number', `${'_'.repeat(300)}`))).toEqual([`order.number: ${long(255)}`]);
  });
});

/**
 * The amount when the currency is not valid (there is no currency to judge its decimals by): the
 * platform answers "1.2" with currency "Dollar" as "should be greater than 0". An amount written as
 * some currency writes amounts gets no item (the currency's item says what is wrong); a number no
 * currency writes that way, zero and negatives are "greater than 0"; what is no number is not valid.
 */
describe('create session: the amount beside a currency that is not valid', () => {
  const CURRENCY = `order.currency: ${INVALID}`;
  it.each([
    ['1.2', 'Dollar', [`order.amount: ${POSITIVE}`, CURRENCY]],
    ['1.20', 'Dollar', [CURRENCY]],
    ['1500', 'Dollar', [CURRENCY]],
    ['10.250', 'usd', [CURRENCY]],
    [12.5, 'Dollar', [CURRENCY]],
    ['0', 'Dollar', [`order.amount: ${POSITIVE}`, CURRENCY]],
    ['0.0', 'Dollar', [`order.amount: ${POSITIVE}`, CURRENCY]],
    ['0.00', 'XYZ', [`order.amount: ${POSITIVE}`, CURRENCY]],
    [0, 'Dollar', [`order.amount: ${POSITIVE}`, CURRENCY]],
    ['-5.00', 'Dollar', [`order.amount: ${POSITIVE}`, CURRENCY]],
    ['ten', 'Dollar', [`order.amount: ${INVALID}`, CURRENCY]],
    ['1e5', 'Dollar', [`order.amount: ${INVALID}`, CURRENCY]],
    ['', 'Dollar', [`order.amount: ${BLANK}`, CURRENCY]],
    ['1.2', '', [`order.amount: ${POSITIVE}`, `order.currency: ${BLANK}`]],
  ] as const)('%p with %p', (amount, currency, errors) => {
    expect(errorsOf(all(set('order.amount', amount), set('order.currency', currency)))).toEqual(errors);
  });

  it.each(['0', '0.0', '0.00', 0, '000.000'])('zero written as %p is "greater than 0" with a valid currency too (USD, JPY)', (amount) => {
    expect(errorsOf(set('order.amount', amount))).toEqual([`order.amount: ${POSITIVE}`]);
    expect(errorsOf(all(set('order.amount', amount), set('order.currency', 'JPY')))).toEqual([`order.amount: ${POSITIVE}`]);
  });

  it('a valid currency still judges the decimals: "1.2" in USD is not valid', () => {
    expect(errorsOf(set('order.amount', '1.2'))).toEqual([`order.amount: ${INVALID}`]);
  });
});

/** The loose forms existing client libraries send (protocol.md §3), read as their strict equivalents. */
describe('create session: loose client forms are accepted', () => {
  const accept = (change: Mutation): CreateSessionRequest => validateCreateSession(mutated(valid, change));
  const token = 'a'.repeat(64);

  it.each([
    ['recurring_init "true" is true', set('recurring_init', 'true'), (r: CreateSessionRequest) => expect(r.recurring_init).toBe(true)],
    ['recurring_init true is true', set('recurring_init', true), (r: CreateSessionRequest) => expect(r.recurring_init).toBe(true)],
    ['recurring_init "false" is false', set('recurring_init', 'false'), (r: CreateSessionRequest) => expect(r.recurring_init).toBe(false)],
    ['req_token "Y" is true', set('req_token', 'Y'), (r: CreateSessionRequest) => expect(r.req_token).toBe(true)],
    ['req_token "N" is false', set('req_token', 'N'), (r: CreateSessionRequest) => expect(r.req_token).toBe(false)],
    ['card_token as one string is a one-element list', set('card_token', token), (r: CreateSessionRequest) => expect(r.card_token).toEqual([token])],
    ['card_token as a one-element list', set('card_token', [token]), (r: CreateSessionRequest) => expect(r.card_token).toEqual([token])],
    ['card_token "" is absent', set('card_token', ''), (r: CreateSessionRequest) => expect(r.card_token).toBeUndefined()],
    ['billing_address null is absent', set('billing_address', null), (r: CreateSessionRequest) => expect(r.billing_address).toBeUndefined()],
    ['cancel_url "" is absent', set('cancel_url', ''), (r: CreateSessionRequest) => expect(r.cancel_url).toBeUndefined()],
    ['expiry_url null is absent', set('expiry_url', null), (r: CreateSessionRequest) => expect(r.expiry_url).toBeUndefined()],
    ['session_expiry "30" is 30 minutes', set('session_expiry', '30'), (r: CreateSessionRequest) => expect(r.session_expiry).toBe(30)],
    ['an amount sent as a JSON number', set('order.amount', 0.19), (r: CreateSessionRequest) => expect(r.order.amount).toBe(0.19)],
    [
      'unknown keys (server_callback_url, anything) are ignored',
      all(set('server_callback_url', 'https://shop.example/cb'), set('zzz', { nested: [1] })),
      (r: CreateSessionRequest) => expect(Object.keys(r).filter((k) => k === 'server_callback_url' || k === 'zzz')).toEqual([]),
    ],
    [
      'the protocol §4 extensions with valid values',
      all(set('session_expiry', 720), set('expiry_url', 'https://shop.example/expired'), set('error_url', 'https://shop.example/error'), set('custom_data', { basket: 'b-1' })),
      (r: CreateSessionRequest) => expect(r).toMatchObject({ session_expiry: 720, expiry_url: 'https://shop.example/expired', error_url: 'https://shop.example/error', custom_data: { basket: 'b-1' } }),
    ],
    [
      'schedule_id with recurring_init',
      all(set('recurring_init', 'true'), set('schedule_id', 'sched_1-a')),
      (r: CreateSessionRequest) => expect(r).toMatchObject({ recurring_init: true, schedule_id: 'sched_1-a' }),
    ],
    ['a custom frame name as url_target', set('url_target', 'checkout-frame'), (r: CreateSessionRequest) => expect(r.url_target).toBe('checkout-frame')],
    ['a state name outside the 2-letter countries', all(set('billing_address.country', 'DE'), set('billing_address.state', 'Bayern')), (r: CreateSessionRequest) => expect(r.billing_address?.state).toBe('Bayern')],
    ['an empty phone', set('billing_address.phone', ''), (r: CreateSessionRequest) => expect(r.billing_address?.phone).toBe('')],
  ] as const)('%s', (_rule, change, check) => {
    check(accept(change));
  });

  it('customer null is read as no customer', () => {
    expect(errorsOf(set('customer', null))).toEqual([]);
    expect(accept(set('customer', null)).customer).toBeUndefined();
  });
});
