import { key } from '../../lambdas/adapters/dynamodb/keys';
import { ledgerKey } from '../../lambdas/adapters/sandbox-acquirer/ledger';
import { settledDayKey } from '../../lambdas/adapters/dynamodb/settled-days';
import { JOBS } from '../../lib/jobs';
import { FALLBACK_ROUTE, ROUTES } from '../../lib/routes';
import { tableAccess, tablePolicy, writesTable } from '../../lib/table-access';
import { ITEM_KINDS } from '../../lib/table-schema';
import { evaluate, stringLike } from '../support/iam-policy';
import { decide, describe as describeCall, type TableCall } from '../support/table-access';

/**
 * The table access model (lib/table-access.ts): item kinds are partition key prefixes, a
 * declaration becomes IAM statements, and the statements refuse what the declaration does not name.
 */

describe('item kinds', () => {
  const prefixes = Object.values(ITEM_KINDS);

  test('no prefix begins another, so a LeadingKeys pattern names exactly one kind', () => {
    for (const a of prefixes) for (const b of prefixes) if (a !== b) expect(b.startsWith(a)).toBe(false);
  });

  test.each([
    ['payment', key.payment('p1').pk],
    ['callback record', key.callback('p1', 3).pk],
    ['merchant', key.merchant('m1').pk],
    ['card token', key.cardToken('t1').pk],
    ['recurring chain', key.recurringChain('r1').pk],
    ['operator', key.operator('alice').pk],
    ['audit entry', key.audit('2030-01-01', 'x').pk],
    ['request key', key.requestKey('d1').pk],
    ['endpoint health', key.endpoint('e1').pk],
    ['sandbox ledger', ledgerKey('P1').pk],
    ['settled day', settledDayKey('m1', '2030-01-31').pk],
  ])('every key the code builds has exactly one kind: %s', (_what, pk) => {
    expect(prefixes.filter((p) => pk.startsWith(p))).toHaveLength(1);
  });
});

describe('IAM StringLike', () => {
  test.each([
    ['PAYMENT#*', 'PAYMENT#abc', true],
    ['PAYMENT#*', 'PAYMENT#', true],
    ['PAYMENT#*', 'XPAYMENT#abc', false],
    ['SANDBOX#*', 'SANDBOX-CREDENTIAL#x', false],
    ['A?C', 'ABC', true],
    ['a.b', 'axb', false],
  ])('%s matches %s: %s', (pattern, value, expected) => {
    expect(stringLike(pattern, value)).toBe(expected);
  });
});

describe('a declaration as IAM statements', () => {
  const access = tableAccess({ items: { PAYMENT: ['GetItem', 'UpdateItem'], MERCHANT: ['GetItem'], CARDTOKEN: ['BatchGetItem', 'GetItem'] }, indexes: ['lookup'] });
  const statements = tablePolicy(access, 'T');
  const ask = (action: string, keys: string[] | undefined, resource = 'T') => evaluate(statements, { action: `dynamodb:${action}`, resource, context: { 'dynamodb:LeadingKeys': keys } });

  test('groups kinds with the same actions, binds them to their prefixes, and denies audit rewrites to a writer', () => {
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:BatchGetItem', 'dynamodb:GetItem'],
        Resource: ['T'],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CARDTOKEN#*'] }, Null: { 'dynamodb:LeadingKeys': 'false' } },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem'],
        Resource: ['T'],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['MERCHANT#*'] }, Null: { 'dynamodb:LeadingKeys': 'false' } },
      },
      {
        Effect: 'Allow',
        Action: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
        Resource: ['T'],
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PAYMENT#*'] }, Null: { 'dynamodb:LeadingKeys': 'false' } },
      },
      { Effect: 'Allow', Action: ['dynamodb:Query'], Resource: ['T/index/lookup'] },
      {
        Effect: 'Deny',
        Action: ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'],
        Resource: ['T'],
        Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#*', 'AUDITID#*'] } },
      },
    ]);
  });

  test.each([
    ['GetItem', ['PAYMENT#1'], 'allowed'],
    ['UpdateItem', ['PAYMENT#1'], 'allowed'],
    ['PutItem', ['PAYMENT#1'], 'not-allowed'],
    ['UpdateItem', ['MERCHANT#m'], 'not-allowed'],
    ['GetItem', ['OPERATOR#alice'], 'not-allowed'],
    ['BatchGetItem', ['CARDTOKEN#a', 'CARDTOKEN#b'], 'allowed'],
    // A batch is allowed only when every key in it is.
    ['BatchGetItem', ['CARDTOKEN#a', 'PAYMENT#1'], 'not-allowed'],
    ['UpdateItem', ['AUDIT#2030-01-01'], 'denied-explicitly'],
    ['UpdateItem', ['AUDITID#e1'], 'denied-explicitly'],
    // A request without a partition key (Scan) never passes ForAllValues vacuously.
    ['GetItem', undefined, 'not-allowed'],
    ['GetItem', [], 'not-allowed'],
    ['Scan', undefined, 'not-allowed'],
  ] as const)('%s %j is %s', (action, keys, expected) => {
    expect(ask(action, keys ? [...keys] : undefined)).toBe(expected);
  });

  test('Query on the indexes declared only', () => {
    expect(ask('Query', undefined, 'T/index/lookup')).toBe('allowed');
    expect(ask('Query', undefined, 'T/index/search')).toBe('not-allowed');
    expect(ask('Scan', undefined, 'T/index/lookup')).toBe('not-allowed');
  });

  test('a function that only reads holds no Deny; no access at all is no statement', () => {
    expect(writesTable(tableAccess({ items: { PAYMENT: ['GetItem', 'Query'] } }))).toBe(false);
    expect(tablePolicy(tableAccess({ items: { PAYMENT: ['GetItem'] } }), 'T').filter((s) => s.Effect === 'Deny')).toEqual([]);
    expect(tablePolicy(tableAccess(), 'T')).toEqual([]);
  });

  test('an index the table does not have is refused at synth', () => {
    expect(() => tablePolicy({ items: {}, indexes: ['nope' as never] }, 'T')).toThrow(/Unknown index/);
  });
});

describe('the declarations of lib/routes.ts and lib/jobs.ts', () => {
  const call = (fn: string, action: string, leadingKeys?: string[], index?: string): TableCall => ({ fn, action, ...(leadingKeys ? { leadingKeys } : {}), ...(index ? { index } : {}) });

  test.each([
    [call('CheckoutPage', 'PutItem', ['PAYMENT#p']), 'not-allowed'],
    [call('CheckoutPage', 'GetItem', ['MERCHANT#m']), 'allowed'],
    [call('CheckoutPay', 'PutItem', ['MERCHANT#m']), 'not-allowed'],
    [call('CreateSession', 'Query', undefined, 'lookup'), 'not-allowed'],
    [call('PaymentStatus', 'Query', undefined, 'lookup'), 'allowed'],
    [call('PaymentStatus', 'PutItem', ['REQUESTKEY#d']), 'allowed'],
    [call('AdminPaymentAction', 'PutItem', ['AUDIT#2030-01-01']), 'allowed'],
    [call('AdminPaymentAction', 'UpdateItem', ['AUDIT#2030-01-01']), 'denied-explicitly'],
    [call('AdminAudit', 'PutItem', ['AUDIT#2030-01-01']), 'not-allowed'],
    [call('AdminMerchantUpdate', 'PutItem', ['OPERATOR#alice']), 'not-allowed'],
    [call('DeliverCallbacks', 'Query', undefined, 'sending'), 'allowed'],
    [call('ReconcileAttempts', 'PutItem', ['AUDIT#2030-01-01']), 'not-allowed'],
  ])('%s → %s', (c, expected) => {
    expect(`${describeCall(c)}: ${decide(c)}`).toBe(`${describeCall(c)}: ${expected}`);
  });

  test('name only kinds the table has; no deployed function deletes or condition-checks (no code of theirs does)', () => {
    for (const { access } of [...ROUTES.filter((r) => !r.localOnly), FALLBACK_ROUTE, ...JOBS]) {
      for (const [kind, actions] of Object.entries(access.table.items)) {
        expect(Object.keys(ITEM_KINDS)).toContain(kind);
        expect(actions).not.toContain('DeleteItem');
        expect(actions).not.toContain('ConditionCheckItem');
      }
    }
  });
});
