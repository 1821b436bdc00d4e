import { ADMIN_PORTAL_ROUTE_ID, authorizationValidityDaysFromContext } from '../../lib/checkout-stack';
import type { CheckoutFunction, FunctionAccess } from '../../lib/constructs/checkout-function';
import { AUDIT_ANCHOR_JOB_ID, JOBS, RECEIPT_JOB_ID, SIGN_IN_IMPORT_JOB_ID } from '../../lib/jobs';
import { FALLBACK_ROUTE } from '../../lib/routes';
import { accountSecretPrefix, applePaySecretPrefix, merchantSecretPrefix, STAGES, type Stage } from '../../lib/naming';
import { accessForAcquirer, callsAcquirer, tablePolicy, writesTable, type PolicyStatementJson } from '../../lib/table-access';
import { ITEM_KINDS } from '../../lib/table-schema';
import { ACQUIRER_TIMEOUTS, ACQUIRER_WORK, acquirerRouteTimeoutSeconds } from '../../lib/time-budget';
import { evaluate } from '../support/iam-policy';
import { ACCESS_MATRIX_JOBS, ACCESS_MATRIX_ROUTES, flatten, logicalId, resource, resourcesOfType, synthesize, testApp, type Synthesized, stageRoutes } from './synth';

/** The acquirer each stage is synthesized with here (test/cdk/synth.ts). */
const acquirerOf = (stage: Stage) => (stage === 'dev' ? 'sandbox' : 's2s-card');
/** Whether a function calls the acquirer (or needs its credentials): on prod it reads the gateway secret and runs in the egress VPC. */
const usesGateway = (stage: Stage, access: FunctionAccess) => acquirerOf(stage) === 's2s-card' && (callsAcquirer(access.table) || access.acquirerCredentials === true);
const ENI_ACTIONS = ['ec2:CreateNetworkInterface', 'ec2:DescribeNetworkInterfaces', 'ec2:DescribeSubnets', 'ec2:DeleteNetworkInterface', 'ec2:AssignPrivateIpAddresses', 'ec2:UnassignPrivateIpAddresses'];

/** What each stage promises operators: how long function logs stay, at which level, and how long an authorization lives. */
const STAGE_EXPECTATIONS: Record<Stage, { retentionDays: number; logLevel: string; logsRetained: boolean; authorizationValidityDays: string }> = {
  dev: { retentionDays: 30, logLevel: 'DEBUG', logsRetained: false, authorizationValidityDays: '1' },
  staging: { retentionDays: 90, logLevel: 'INFO', logsRetained: false, authorizationValidityDays: '7' },
  prod: { retentionDays: 365, logLevel: 'INFO', logsRetained: true, authorizationValidityDays: '7' },
};

/** The audit log is append-only: whoever may write the table may not rewrite or delete an AUDIT# item. */
const auditDeny = (tableId: string) => ({
  Effect: 'Deny',
  Action: ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem', 'dynamodb:UpdateItem'],
  Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
  Condition: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': ['AUDIT#*', 'AUDITID#*'] } },
});

interface FunctionIds {
  readonly fn: string;
  readonly role: string;
  readonly logGroup: string;
  readonly table: string;
}

function idsOf({ stack }: Synthesized, fn: CheckoutFunction | undefined): FunctionIds {
  if (!fn) throw new Error('No such function');
  return { fn: logicalId(fn.function), role: logicalId(fn.role), logGroup: logicalId(fn.logGroup), table: logicalId(stack.table.table) };
}
const secretIdOf = ({ stack }: Synthesized) => (stack.acquirerSecret ? logicalId(stack.acquirerSecret) : '');
const cursorSecretIdOf = ({ stack }: Synthesized) => logicalId(stack.cursorSecret);
/** A function that seals the portal's cursors reads the stack's cursor key, and no other function does. */
const cursorSecretPermissions = (s: Synthesized, access: FunctionAccess): string[] =>
  access.cursorSecret ? ['DescribeSecret', 'GetSecretValue'].map((a) => `secretsmanager:${a} \${${cursorSecretIdOf(s)}}`) : [];
const cursorSecretEnvironment = (s: Synthesized, access: FunctionAccess): Record<string, unknown> => (access.cursorSecret ? { CURSOR_SECRET_ID: { Ref: cursorSecretIdOf(s) } } : {});
const routeIds = (s: Synthesized, id: string) => idsOf(s, s.stack.functions.get(id));
const jobIds = (s: Synthesized, id: string) => idsOf(s, s.stack.jobFunctions.get(id));
const fallbackIds = (s: Synthesized) => idsOf(s, s.stack.fallbackFunction);
const deadLetterQueueArn = ({ stack }: Synthesized) => `\${${logicalId(stack.jobs.deadLetterQueue)}.Arn}`;

/** One line per effect, action and resource of a statement, with its condition: however CDK grouped statements, the same lines. */
function permissionLines(statement: { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown }): string[] {
  const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
  const condition = statement.Condition ? ` if ${JSON.stringify(statement.Condition)}` : '';
  return asArray(statement.Action).flatMap((action) => asArray(statement.Resource).map((r) => `${statement.Effect} ${action} ${flatten(r)}${condition}`));
}

/** What a function may do to the acquirer accounts' secrets. */
const accountSecretActions = (stage: Stage, access: FunctionAccess): string[] =>
  (access as { accountSecrets?: 'write' }).accountSecrets === 'write'
    ? ['CreateSecret', 'GetSecretValue', 'PutSecretValue']
    : acquirerOf(stage) === 's2s-card' && callsAcquirer(access.table)
      ? ['GetSecretValue']
      : [];

/**
 * What a declaration entitles its function to (plus `extra`), and nothing else: its own log group,
 * X-Ray, the table statements of lib/table-access.ts (items by partition key prefix, the declared
 * indexes, the audit Deny for writers) and the merchant secrets if declared.
 */
function expectedPermissions(stage: Stage, access: FunctionAccess, ids: FunctionIds, extra: string[] = [], secretId = ''): string[] {
  const gateway = usesGateway(stage, access);
  return [
    ...(gateway ? [`Allow secretsmanager:DescribeSecret \${${secretId}}`, `Allow secretsmanager:GetSecretValue \${${secretId}}`, ...ENI_ACTIONS.map((a) => `Allow ${a} *`)] : []),
    // Writing its own log group, and X-Ray (which has no resource-level permissions).
    `Allow logs:CreateLogStream \${${ids.logGroup}.Arn}`,
    `Allow logs:PutLogEvents \${${ids.logGroup}.Arn}`,
    'Allow xray:PutTraceSegments *',
    'Allow xray:PutTelemetryRecords *',
    ...tablePolicy(accessForAcquirer(access.table, acquirerOf(stage)), `\${${ids.table}.Arn}`).flatMap(permissionLines),
    ...(access.merchantSecrets
      ? (access.merchantSecrets === 'write' ? ['CreateSecret', 'GetSecretValue', 'PutSecretValue'] : ['GetSecretValue']).map(
          (action) => `Allow secretsmanager:${action} arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${merchantSecretPrefix(stage)}*`,
        )
      : []),
    // The acquirer accounts' passwords: written by the account administration, read by whatever calls the S2S CARD gateway.
    ...accountSecretActions(stage, access).map((action) => `Allow secretsmanager:${action} arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${accountSecretPrefix(stage)}*`),
    // Apple Pay's merchant identity certificates: read by the route that asks Apple for merchant sessions.
    ...(access.applePaySecrets ? [`Allow secretsmanager:GetSecretValue arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${applePaySecretPrefix(stage)}*`] : []),
    ...extra.map((p) => `Allow ${p}`),
  ].sort();
}

/** A failed job run goes to the dead-letter queue (Lambda's on-failure destination). */
const sendToDeadLetterQueue = (s: Synthesized) =>
  ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'].map((action) => `${action} ${deadLetterQueueArn(s)}`);

type Statement = Record<string, unknown>;

function statementsOf({ template }: Synthesized, roleId: string): Statement[] {
  return Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((p) => (p.Properties.Roles as unknown[]).some((r) => flatten(r) === `\${${roleId}}`))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}

/** Every permission line of the role's policies (Allow and Deny), in whatever statements they were grouped. */
function grantedPermissions(synthesized: Synthesized, roleId: string): string[] {
  return statementsOf(synthesized, roleId)
    .flatMap((statement) => permissionLines(statement as Parameters<typeof permissionLines>[0]))
    .sort();
}

/** The role's statements with their resources flattened, for the IAM evaluator. */
const evaluable = (synthesized: Synthesized, roleId: string): PolicyStatementJson[] =>
  statementsOf(synthesized, roleId).map((s) => ({ ...(s as unknown as PolicyStatementJson), Action: [s.Action].flat() as string[], Resource: [s.Resource].flat().map(flatten) }));

/** What IAM answers the role for an item action on an item of `kind`. */
const itemDecision = (synthesized: Synthesized, ids: FunctionIds, action: string, kind: keyof typeof ITEM_KINDS) =>
  evaluate(evaluable(synthesized, ids.role), { action, resource: `\${${ids.table}.Arn}`, context: { 'dynamodb:LeadingKeys': [`${ITEM_KINDS[kind]}x`] } });

/** A function that queues or sends receipts is told the stage's sender (ADR 0037). */
const receiptEnvironment = (s: Synthesized, access: FunctionAccess): Record<string, unknown> => ((access.table.items.RECEIPT ?? []).length ? { RECEIPT_SENDER: s.stack.settings.receipts!.sender } : {});

/** ses:SendEmail on the stage's identity and configuration set, from its sender. */
const sesSendPermissions = (s: Synthesized): string[] => {
  const arn = (what: string) => `arn:\${AWS::Partition}:ses:\${AWS::Region}:\${AWS::AccountId}:${what}`;
  const condition = ` if ${JSON.stringify({ StringEquals: { 'ses:FromAddress': s.stack.settings.receipts!.sender } })}`;
  return [arn(`configuration-set/\${${logicalId(s.stack.receiptMail!.configurationSet)}}`), arn(`identity/\${${logicalId(s.stack.receiptMail!.identity)}}`)].map((r) => `ses:SendEmail ${r}${condition}`);
};

/** What every function of a stage reads (lambdas/config.ts); a few get more. */
function baseEnvironment(stage: Stage, ids: FunctionIds, secretId = ''): Record<string, unknown> {
  return {
    ACQUIRER: acquirerOf(stage),
    ...(stage !== 'dev' ? { S2S_CARD_URL: 'https://gateway.example.com/post', S2S_CARD_SECRET_ID: { Ref: secretId } } : {}),
    TABLE_NAME: { Ref: ids.table },
    MERCHANT_SECRET_PREFIX: merchantSecretPrefix(stage),
    STAGE: stage,
    AUTHORIZATION_VALIDITY_DAYS: STAGE_EXPECTATIONS[stage].authorizationValidityDays,
    // Source maps cost cold start time: loaded only outside prod.
    ...(stage === 'prod' ? {} : { NODE_OPTIONS: '--enable-source-maps' }),
    POWERTOOLS_SERVICE_NAME: 'checkout',
    // Powertools Metrics (EMF) in the service's namespace.
    POWERTOOLS_METRICS_NAMESPACE: 'Checkout',
    LOG_LEVEL: STAGE_EXPECTATIONS[stage].logLevel,
    // Where the acquirer accounts' passwords are (docs/acquirer-accounts.md).
    ACQUIRER_ACCOUNT_SECRET_PREFIX: accountSecretPrefix(stage),
    // When a merchant's chargeback rate alarms and is flagged in the portal (context chargebackRateAlarm; defaults).
    CHARGEBACK_RATE_ALARM_PERCENT: '0.9',
    CHARGEBACK_RATE_MIN_SETTLED: '100',
    // Links are built on the API's own URL (or a configured custom domain), never on request headers.
    PUBLIC_BASE_URL: { 'Fn::GetAtt': [expect.stringMatching(/^ApiHttpApi/), 'ApiEndpoint'] },
    // The stream dispatcher delivers new callbacks: writes that make one due leave it its lease.
    CALLBACK_STREAM: '1',
    // The acquirer timeouts the routes' timeouts are derived from (lib/time-budget.ts).
    S2S_CARD_TIMEOUT_MS: '8000',
    S2S_CARD_FOLLOW_UP_WAIT_MS: '4000',
  };
}

describe.each(STAGES)('functions (%s)', (stage) => {
  const ROUTES = stageRoutes(stage);
  const expected = STAGE_EXPECTATIONS[stage];
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synthesize(stage);
  });

  test('there is one function and one role per route and per job, plus the $default route\'s, the callback dispatcher (test/cdk/callbacks.test.ts) and the receipts\' feedback function (test/cdk/receipts.test.ts), and no other', () => {
    synthesized.template.resourceCountIs('AWS::Lambda::Function', ROUTES.length + JOBS.length + 3);
    // On prod (S2S CARD) also the egress VPC's flow log delivery role.
    synthesized.template.resourceCountIs('AWS::IAM::Role', ROUTES.length + JOBS.length + 3 + (acquirerOf(stage) === 's2s-card' ? 1 : 0));
    expect(synthesized.stack.callbackDelivery?.dispatcher).toBeDefined();
    expect([...synthesized.stack.functions.keys()].sort()).toEqual(ROUTES.map((r) => r.id).sort());
    expect([...synthesized.stack.jobFunctions.keys()].sort()).toEqual(JOBS.map((j) => j.id).sort());
    const functionIds = new Set([...ROUTES.map((r) => routeIds(synthesized, r.id).fn), ...JOBS.map((j) => jobIds(synthesized, j.id).fn), fallbackIds(synthesized).fn]);
    expect(functionIds.size).toBe(ROUTES.length + JOBS.length + 1);
  });

  const functions = [
    ...ROUTES.map((route) => ({
      name: `route ${route.id}`,
      declared: route,
      ids: (s: Synthesized) => routeIds(s, route.id),
      memoryMb: route.memoryMb ?? 256,
      // An acquirer route's timeout is derived from the acquirer timeouts (test/cdk/production-shape.test.ts proves it outlives them).
      timeoutSeconds: route.acquirerWork ? acquirerRouteTimeoutSeconds(route.id, ACQUIRER_WORK[route.acquirerWork], ACQUIRER_TIMEOUTS) : (route.timeoutSeconds ?? 10),
      extraPermissions: (s: Synthesized): string[] => cursorSecretPermissions(s, route.access),
      extraEnvironment: (s: Synthesized): Record<string, unknown> =>
        route.id === ADMIN_PORTAL_ROUTE_ID
          ? {
              OPERATOR_SIGN_IN_URL: { 'Fn::Join': ['', ['https://', { Ref: logicalId(s.stack.operators.domain) }, '.auth.', { Ref: 'AWS::Region' }, '.amazoncognito.com']] },
              OPERATOR_CLIENT_ID: { Ref: logicalId(s.stack.operators.client) },
            }
          : { ...cursorSecretEnvironment(s, route.access), ...receiptEnvironment(s, route.access) },
    })),
    {
      name: `the $default route's ${FALLBACK_ROUTE.id}`,
      declared: FALLBACK_ROUTE,
      ids: fallbackIds,
      memoryMb: FALLBACK_ROUTE.memoryMb ?? 256,
      timeoutSeconds: FALLBACK_ROUTE.timeoutSeconds ?? 10,
      extraPermissions: (): string[] => [],
      extraEnvironment: (): Record<string, unknown> => ({}),
    },
    ...JOBS.map((job) => ({
      name: `job ${job.id}`,
      declared: job,
      ids: (s: Synthesized) => jobIds(s, job.id),
      memoryMb: 256,
      timeoutSeconds: job.timeoutSeconds,
      // The anchor export alone puts to the anchor bucket, under its prefix (test/cdk/audit-anchor.test.ts).
      extraPermissions: (s: Synthesized) => [
        ...sendToDeadLetterQueue(s),
        ...(job.id === AUDIT_ANCHOR_JOB_ID ? [`s3:PutObject \${${logicalId(s.stack.auditAnchor!.bucket)}.Arn}/audit-anchors/*`] : []),
        // The receipt job alone sends mail, from the sender, on its identity and configuration set (test/cdk/receipts.test.ts).
        ...(job.id === RECEIPT_JOB_ID ? sesSendPermissions(s) : []),
        // The sign-in import alone reads the operators' pool: its users and their sign-in events (test/cdk/sign-in-import.test.ts).
        ...(job.id === SIGN_IN_IMPORT_JOB_ID ? ['AdminListUserAuthEvents', 'ListUsers'].map((action) => `cognito-idp:${action} \${${logicalId(s.stack.operators.userPool)}.Arn}`) : []),
      ],
      extraEnvironment: (s: Synthesized): Record<string, unknown> => ({
        ...(job.id === AUDIT_ANCHOR_JOB_ID ? { AUDIT_ANCHOR_BUCKET: { Ref: logicalId(s.stack.auditAnchor!.bucket) } } : {}),
        ...receiptEnvironment(s, job.access),
        ...(job.id === RECEIPT_JOB_ID ? { RECEIPT_CONFIGURATION_SET: { Ref: logicalId(s.stack.receiptMail!.configurationSet) } } : {}),
        ...(job.id === SIGN_IN_IMPORT_JOB_ID ? { OPERATOR_POOL_ID: { Ref: logicalId(s.stack.operators.userPool) } } : {}),
      }),
    })),
  ];

  describe.each(functions.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    test('runs Node.js 24 on arm64 with its declared memory and timeout, in the egress VPC exactly when it calls the gateway', () => {
      const fn = resource(synthesized.template, f.ids(synthesized).fn).Properties;
      expect(fn.Runtime).toBe('nodejs24.x');
      expect(fn.VpcConfig !== undefined).toBe(usesGateway(stage, f.declared.access));
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.Handler).toBe('index.handler');
      expect(fn.MemorySize).toBe(f.memoryMb);
      expect(fn.Timeout).toBe(f.timeoutSeconds);
      expect(fn.TracingConfig).toEqual({ Mode: 'Active' });
    });

    test('gets exactly the configuration lambdas/config.ts reads', () => {
      const ids = f.ids(synthesized);
      expect(resource(synthesized.template, ids.fn).Properties.Environment).toEqual({
        Variables: { ...baseEnvironment(stage, ids, secretIdOf(synthesized)), ...f.extraEnvironment(synthesized) },
      });
    });

    test(`logs JSON to its own log group at level ${expected.logLevel}, kept ${expected.retentionDays} days; traced by X-Ray`, () => {
      const ids = f.ids(synthesized);
      expect(resource(synthesized.template, ids.fn).Properties.LoggingConfig).toEqual({
        LogGroup: { Ref: ids.logGroup },
        LogFormat: 'JSON',
        ApplicationLogLevel: expected.logLevel,
        SystemLogLevel: 'INFO',
      });
      expect(resource(synthesized.template, ids.fn).Properties.TracingConfig).toEqual({ Mode: 'Active' });
      const logGroup = resource(synthesized.template, ids.logGroup);
      expect(logGroup.Properties.RetentionInDays).toBe(expected.retentionDays);
      expect(logGroup.DeletionPolicy).toBe(expected.logsRetained ? 'Retain' : 'Delete');
    });

    test(`holds exactly the access it declares (secrets: ${f.declared.access.merchantSecrets})`, () => {
      const ids = f.ids(synthesized);
      expect(grantedPermissions(synthesized, ids.role)).toEqual(
        expectedPermissions(stage, f.declared.access, ids, f.extraPermissions(synthesized), secretIdOf(synthesized)),
      );
    });

    test('may write exactly the item kinds it declares writing, read secrets only if it declares them', () => {
      const ids = f.ids(synthesized);
      for (const kind of Object.keys(ITEM_KINDS) as (keyof typeof ITEM_KINDS)[]) {
        for (const action of ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem'] as const) {
          const declared = (accessForAcquirer(f.declared.access.table, acquirerOf(stage)).items[kind] ?? []).includes(action as never);
          expect(`${action} ${kind}: ${itemDecision(synthesized, ids, `dynamodb:${action}`, kind) === 'allowed'}`).toBe(`${action} ${kind}: ${declared}`);
        }
      }
      expect(grantedPermissions(synthesized, ids.role).some((p) => p.startsWith('Allow secretsmanager:') && p.includes(merchantSecretPrefix(stage)))).toBe(Boolean(f.declared.access.merchantSecrets));
      // Only the merchant administration may create or change a merchant's secret, only the account administration an account's.
      expect(grantedPermissions(synthesized, ids.role).some((p) => /^Allow secretsmanager:(CreateSecret|PutSecretValue) /.test(p) && p.includes(merchantSecretPrefix(stage)))).toBe(f.declared.access.merchantSecrets === 'write');
      expect(grantedPermissions(synthesized, ids.role).filter((p) => p.includes(accountSecretPrefix(stage))).map((p) => p.split(' ')[1]!.replace('secretsmanager:', ''))).toEqual(accountSecretActions(stage, f.declared.access));
      expect(grantedPermissions(synthesized, ids.role).filter((p) => p.includes(applePaySecretPrefix(stage)))).toEqual(
        (f.declared.access as FunctionAccess).applePaySecrets ? [`Allow secretsmanager:GetSecretValue arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${applePaySecretPrefix(stage)}*`] : [],
      );
      const other = (p: string) => p.startsWith('Allow secretsmanager:') && !p.includes(merchantSecretPrefix(stage)) && !p.includes(accountSecretPrefix(stage)) && !p.includes(applePaySecretPrefix(stage));
      expect(grantedPermissions(synthesized, ids.role).some((p) => other(p) && !p.includes(cursorSecretIdOf(synthesized)))).toBe(usesGateway(stage, f.declared.access));
      expect(grantedPermissions(synthesized, ids.role).some((p) => other(p) && p.includes(cursorSecretIdOf(synthesized)))).toBe((f.declared.access as FunctionAccess).cursorSecret === true);
    });

    test(
      writesTable(accessForAcquirer(f.declared.access.table, acquirerOf(stage)))
        ? 'may not update or delete an audit entry (explicit Deny on AUDIT# keys)'
        : 'needs no Deny: it cannot write the table at all',
      () => {
        const ids = f.ids(synthesized);
        const denies = statementsOf(synthesized, ids.role).filter((s) => s.Effect !== 'Allow');
        expect(denies).toEqual(writesTable(accessForAcquirer(f.declared.access.table, acquirerOf(stage))) ? [auditDeny(ids.table)] : []);
      },
    );

    test('has no managed or inline policies on its role', () => {
      const ids = f.ids(synthesized);
      const role = resource(synthesized.template, ids.role).Properties;
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.Policies).toBeUndefined();
      expect(role.AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      });
      expect(resource(synthesized.template, ids.fn).Properties.Role).toEqual({ 'Fn::GetAtt': [ids.role, 'Arn'] });
    });
  });

  test("only the portal page's function knows the operators' sign-in pages and app client", () => {
    const withCognito = [...synthesized.stack.functions.entries(), ...synthesized.stack.jobFunctions.entries()]
      .filter(([, fn]) => 'OPERATOR_CLIENT_ID' in resource(synthesized.template, logicalId(fn.function)).Properties.Environment.Variables)
      .map(([id]) => id);
    expect(withCognito).toEqual([ADMIN_PORTAL_ROUTE_ID]);
  });

  test("no function may call Cognito: operators sign in on Cognito's own pages", () => {
    const all = [...ROUTES.map((r) => routeIds(synthesized, r.id)), ...JOBS.map((j) => jobIds(synthesized, j.id)), fallbackIds(synthesized)];
    for (const ids of all) expect(grantedPermissions(synthesized, ids.role).filter((p) => p.startsWith('cognito'))).toEqual([]);
  });
});

describe('least privilege for every kind of declared access', () => {
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synthesize('dev', { routes: ACCESS_MATRIX_ROUTES, jobs: ACCESS_MATRIX_JOBS });
  });

  test.each(ACCESS_MATRIX_ROUTES.map((r) => [r.id, r] as const))(
    'route %s',
    (_id, route) => {
      const ids = routeIds(synthesized, route.id);
      expect(grantedPermissions(synthesized, ids.role)).toEqual(expectedPermissions('dev', route.access, ids));
      const fn = resource(synthesized.template, ids.fn).Properties;
      expect(fn.MemorySize).toBe(route.memoryMb ?? 256);
      expect(fn.Timeout).toBe(route.timeoutSeconds ?? 10);
    },
  );

  test.each(ACCESS_MATRIX_JOBS.map((j) => [j.id, j] as const))(
    'job %s',
    (_id, job) => {
      const ids = jobIds(synthesized, job.id);
      expect(grantedPermissions(synthesized, ids.role)).toEqual(expectedPermissions('dev', job.access, ids, sendToDeadLetterQueue(synthesized)));
      expect(resource(synthesized.template, ids.fn).Properties.Timeout).toBe(job.timeoutSeconds);
    },
  );

  test('a function without table access has no DynamoDB permission at all', () => {
    const route = ACCESS_MATRIX_ROUTES.find((r) => !writesTable(r.access.table) && !Object.keys(r.access.table.items).length && !r.access.table.indexes.length && !r.access.merchantSecrets)!;
    const granted = grantedPermissions(synthesized, routeIds(synthesized, route.id).role);
    expect(granted.filter((p) => !p.startsWith('Allow logs:') && !p.startsWith('Allow xray:'))).toEqual([]);
  });
});

describe('authorization validity from context', () => {
  const days = (context: Record<string, unknown>, stage: Stage = 'dev') => authorizationValidityDaysFromContext(testApp({ context }).node, stage);

  test('is 7 days when context does not say', () => {
    expect(days({})).toBe(7);
    expect(days({ authorizationValidityDays: { prod: 5 } }, 'staging')).toBe(7);
  });

  test('is read per stage from cdk.json, or for every stage from one value (`-c` gives a string)', () => {
    expect(days({ authorizationValidityDays: { dev: 2, prod: 5 } }, 'prod')).toBe(5);
    expect(days({ authorizationValidityDays: 3 }, 'staging')).toBe(3);
    expect(days({ authorizationValidityDays: '30' })).toBe(30);
  });

  test.each([0, 31, 1.5, 'seven', '', null, true])('refuses %p, which lambdas/config.ts would refuse at cold start', (value) => {
    expect(() => days({ authorizationValidityDays: value })).toThrow(/authorizationValidityDays for dev must be a whole number of days from 1 to 30/);
  });
});
