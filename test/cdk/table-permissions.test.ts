import { OUTBOX_INDEX } from '../../lambdas/adapters/dynamodb/keys';
import { CALLBACK_RELAY_JOB_ID } from '../../lib/checkout-stack';
import { JOBS } from '../../lib/jobs';
import { STAGES } from '../../lib/naming';
import { FALLBACK_ROUTE, ROUTES, type RouteDefinition } from '../../lib/routes';
import type { PolicyStatementJson } from '../../lib/table-access';
import { ITEM_KINDS, TABLE_SCHEMA, type ItemKind } from '../../lib/table-schema';
import { evaluate, type Decision } from '../support/iam-policy';
import { flatten, logicalId, resourcesOfType, stageRoutes, synthesize, type Synthesized } from './synth';

/**
 * Least privilege on the table, read from the synthesized template's policies with an IAM
 * evaluator (test/support/iam-policy.ts), for every function of the stack:
 * - the audit log: only the operator routes that record an action may put an AUDIT# item,
 *   and no function may update or delete one;
 * - public routes (merchant API, checkout page, sandbox pages, the portal page) cannot write a
 *   merchant's settings or touch an operator, and read a merchant's settings by key only;
 * - no function may Scan or write in batches, and none may delete an item but the stream
 *   dispatcher, a payment's (the details of a link DynamoDB's TTL removed).
 */
const AUDIT_WRITERS = ['AdminAccountCreate', 'AdminAccountUpdate', 'AdminCallbackResend', 'AdminCaptureBulk', 'AdminDeadCallbacksResend', 'AdminMerchantCreate', 'AdminMerchantPassword', 'AdminMerchantUpdate', 'AdminMerchantWebhookSecret', 'AdminPaymentAction', 'AdminSignOut'];
/** Besides them, the job that records the operators' sign-ins on Cognito's pages (ADR 0019). */
const AUDIT_WRITER_JOBS = ['ImportSignIns'];
const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];
const READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan'];

describe.each(STAGES)('table permissions (%s)', (stage) => {
  // The stage's routes: the sandbox's pages on dev and staging, the S2S CARD connector's on prod.
  const deployed = (_routes: readonly RouteDefinition[]) => stageRoutes(stage);
  const publicRoutes = deployed(ROUTES).filter((r) => r.auth === undefined);
  let s: Synthesized;
  beforeAll(() => {
    s = synthesize(stage);
  });
  const tableArn = () => `\${${logicalId(s.stack.table.table)}.Arn}`;

  /** Every function of the stack (routes, the $default route's, jobs, the stream dispatcher) by name, with its role's statements. */
  function functions(): [string, PolicyStatementJson[]][] {
    const all: [string, { role: unknown }][] = [
      ...[...s.stack.functions.entries()],
      [FALLBACK_ROUTE.id, s.stack.fallbackFunction],
      ...[...s.stack.jobFunctions.entries()],
      ['CallbacksDispatcher', s.stack.callbackDelivery!.dispatcher],
    ];
    return all.map(([name, fn]) => {
      const roleId = logicalId(fn.role as never);
      const statements = Object.values(resourcesOfType(s.template, 'AWS::IAM::Policy'))
        .filter((p) => (p.Properties.Roles as unknown[]).some((r) => flatten(r) === `\${${roleId}}`))
        .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, any>[])
        .map((st) => ({ ...st, Action: [st.Action].flat(), Resource: [st.Resource].flat().map(flatten) }) as PolicyStatementJson);
      return [name, statements];
    });
  }
  const statementsOf = (name: string) => functions().find(([n]) => n === name)![1];
  const onItem = (statements: PolicyStatementJson[], action: string, kind: ItemKind): Decision =>
    evaluate(statements, { action, resource: tableArn(), context: { 'dynamodb:LeadingKeys': [`${ITEM_KINDS[kind]}2030-01-01`] } });

  test('only the operator routes that record an action, and the sign-in import, may add an audit entry (or mark its id)', () => {
    for (const kind of ['AUDIT', 'AUDITID'] as const) {
      const writers = functions()
        .filter(([, st]) => onItem(st, 'dynamodb:PutItem', kind) === 'allowed')
        .map(([name]) => name)
        .sort();
      expect(writers).toEqual([...AUDIT_WRITERS, ...AUDIT_WRITER_JOBS].sort());
    }
    for (const name of AUDIT_WRITERS) expect(ROUTES.find((r) => r.id === name)?.auth).toBe('operator');
  });

  test('no function may update or delete an audit entry or its id marker, and every writer holds the explicit Deny', () => {
    for (const [name, st] of functions()) {
      const writes = WRITE_ACTIONS.some((a) => (Object.keys(ITEM_KINDS) as ItemKind[]).some((k) => onItem(st, a, k) === 'allowed'));
      for (const kind of ['AUDIT', 'AUDITID'] as const) {
        for (const action of ['dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
          const decision = onItem(st, action, kind);
          expect(`${name} ${action} ${kind} ${decision}`).toBe(`${name} ${action} ${kind} ${writes ? 'denied-explicitly' : 'not-allowed'}`);
        }
      }
    }
  });

  test.each(publicRoutes.map((r) => [r.id, r] as const))('public route %s cannot write a merchant or touch an operator', (id) => {
    const st = statementsOf(id);
    for (const action of [...WRITE_ACTIONS, ...READ_ACTIONS]) {
      expect(`${action} OPERATOR#: ${onItem(st, action, 'OPERATOR')}`).toBe(`${action} OPERATOR#: not-allowed`);
      if (action !== 'dynamodb:GetItem') expect(`${action} MERCHANT#: ${onItem(st, action, 'MERCHANT')}`).toBe(`${action} MERCHANT#: not-allowed`);
    }
    for (const action of WRITE_ACTIONS) expect(`${action} AUDIT#: ${onItem(st, action, 'AUDIT')}`).toMatch(/: (not-allowed|denied-explicitly)$/);
  });

  test('the $default route\'s function, open to anyone, may do nothing at all on the table', () => {
    const st = statementsOf(FALLBACK_ROUTE.id);
    const resources = [tableArn(), ...TABLE_SCHEMA.globalSecondaryIndexes.map((i) => `${tableArn()}/index/${i.indexName}`)];
    for (const action of [...WRITE_ACTIONS, ...READ_ACTIONS, 'dynamodb:ConditionCheckItem']) {
      for (const kind of Object.keys(ITEM_KINDS) as ItemKind[]) expect(`${action} ${kind}: ${onItem(st, action, kind)}`).toBe(`${action} ${kind}: not-allowed`);
      for (const resource of resources) expect(`${action} ${resource}: ${evaluate(st, { action, resource, context: {} })}`).toBe(`${action} ${resource}: not-allowed`);
    }
    expect(st.filter((statement) => statement.Action.some((a) => !/^(logs|xray):/.test(a)))).toEqual([]);
  });

  test('public routes read a merchant only where the page or charge needs its settings, or the merchant API checks that a key is a merchant\'s (ADR 0025)', () => {
    const readers = publicRoutes.filter((r) => onItem(statementsOf(r.id), 'dynamodb:GetItem', 'MERCHANT') === 'allowed').map((r) => r.id).sort();
    const pages = stage !== 'dev' ? [] : ['SandboxChallengeAnswer', 'SandboxChallengePage'];
    const merchantApi = ['CreateSession', 'PaymentStatus', 'VoidPayment', 'RefundPayment', 'CapturePayment'];
    expect(readers).toEqual(['CheckoutComplete', 'CheckoutPage', 'CheckoutPay', 'RecurringPayment', 'RecurringPaymentCyrillic', 'RetryPayment', ...merchantApi, ...pages].sort());
  });

  test('only the merchant API counts requests (RATE#), and nothing else may touch the counts', () => {
    const counters = [...functions()].filter(([, st]) => onItem(st, 'dynamodb:UpdateItem', 'RATE') === 'allowed').map(([name]) => name).sort();
    expect(ROUTES.filter((r) => r.access.table.items.RATE !== undefined).map((r) => r.id).sort()).toEqual(
      ['CapturePayment', 'CreateSession', 'PaymentStatus', 'RecurringPayment', 'RecurringPaymentCyrillic', 'RefundPayment', 'RetryPayment', 'VoidPayment'],
    );
    expect(counters).toEqual(deployed(ROUTES).filter((r) => r.access.table.items.RATE !== undefined).map((r) => r.id).sort());
  });

  test('no function may scan, delete or write in batches, on the table or an index; the dispatcher deletes only in PAYMENT#', () => {
    const resources = [tableArn(), ...TABLE_SCHEMA.globalSecondaryIndexes.map((i) => `${tableArn()}/index/${i.indexName}`)];
    const deletesPayments = (name: string, action: string, resource: string, keys?: string[]) =>
      name === 'CallbacksDispatcher' && action === 'dynamodb:DeleteItem' && resource === tableArn() && keys?.[0] === 'PAYMENT#1';
    for (const [name, st] of functions()) {
      for (const resource of resources) {
        for (const action of ['dynamodb:Scan', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem']) {
          for (const keys of [undefined, ['PAYMENT#1'], ['AUDIT#2030-01-01'], ['MERCHANT#m'], ['PAYMENT#1', 'MERCHANT#m']]) {
            const decision = evaluate(st, { action, resource, context: { 'dynamodb:LeadingKeys': keys } });
            expect(`${name} ${action} ${resource} ${keys}: ${decision}`).toMatch(deletesPayments(name, action, resource, keys) && keys!.length === 1 ? /: allowed$/ : /: (not-allowed|denied-explicitly)$/);
          }
        }
      }
    }
  });

  test('each function queries only the indexes it declares; only the relay reads the outbox', () => {
    const declared = new Map<string, readonly string[]>([
      ...deployed(ROUTES).map((r) => [r.id, r.access.table.indexes] as const),
      [FALLBACK_ROUTE.id, FALLBACK_ROUTE.access.table.indexes],
      ...JOBS.map((j) => [j.id, j.access.table.indexes] as const),
      ['CallbacksDispatcher', []],
    ]);
    for (const [name, st] of functions()) {
      const queried = TABLE_SCHEMA.globalSecondaryIndexes
        .map((i) => i.indexName)
        .filter((index) => evaluate(st, { action: 'dynamodb:Query', resource: `${tableArn()}/index/${index}`, context: {} }) === 'allowed');
      expect(`${name}: ${queried.join(',')}`).toBe(`${name}: ${[...(declared.get(name) ?? [])].join(',')}`);
    }
    const outboxReaders = functions().filter(([, st]) => evaluate(st, { action: 'dynamodb:Query', resource: `${tableArn()}/index/${OUTBOX_INDEX}`, context: {} }) === 'allowed');
    expect(outboxReaders.map(([n]) => n)).toEqual([CALLBACK_RELAY_JOB_ID]);
  });
});
