import { merchantSecretPrefix, STAGES, type Stage } from '../../lib/naming';
import { ROUTES, type RouteDefinition, type TableAccess } from '../../lib/routes';
import { TABLE_SCHEMA } from '../../lib/table-schema';
import { ACCESS_MATRIX_ROUTES, flatten, logicalId, resource, resourcesOfType, synthesize, type Synthesized } from './synth';

/** What each stage promises operators: how long function logs stay, and at which level. */
const STAGE_EXPECTATIONS: Record<Stage, { retentionDays: number; logLevel: string; logsRetained: boolean }> = {
  dev: { retentionDays: 30, logLevel: 'DEBUG', logsRetained: false },
  staging: { retentionDays: 90, logLevel: 'INFO', logsRetained: false },
  prod: { retentionDays: 365, logLevel: 'INFO', logsRetained: true },
};

/** The specification of least privilege: which DynamoDB actions each declared access stands for. */
const TABLE_PERMISSIONS: Record<TableAccess, { table: string[]; indexes: string[] }> = {
  none: { table: [], indexes: [] },
  read: { table: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'], indexes: ['dynamodb:Query'] },
  readWrite: {
    table: [
      'dynamodb:GetItem',
      'dynamodb:Query',
      'dynamodb:BatchGetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
      'dynamodb:DeleteItem',
      'dynamodb:ConditionCheckItem',
    ],
    indexes: ['dynamodb:Query'],
  },
};

interface FunctionIds {
  readonly fn: string;
  readonly role: string;
  readonly logGroup: string;
  readonly table: string;
}

function idsOf({ stack }: Synthesized, route: RouteDefinition): FunctionIds {
  const routeFunction = stack.functions.get(route.id);
  if (!routeFunction) throw new Error(`No function for route ${route.id}`);
  return {
    fn: logicalId(routeFunction.function),
    role: logicalId(routeFunction.role),
    logGroup: logicalId(routeFunction.logGroup),
    table: logicalId(stack.table.table),
  };
}

/** `action resource` pairs the route's declaration entitles its function to, and nothing else. */
function expectedPermissions(stage: Stage, route: RouteDefinition, ids: FunctionIds): string[] {
  const tableArn = `\${${ids.table}.Arn}`;
  const table = TABLE_PERMISSIONS[route.access.table];
  return [
    // Writing its own log group, and X-Ray (which has no resource-level permissions).
    `logs:CreateLogStream \${${ids.logGroup}.Arn}`,
    `logs:PutLogEvents \${${ids.logGroup}.Arn}`,
    'xray:PutTraceSegments *',
    'xray:PutTelemetryRecords *',
    ...table.table.map((action) => `${action} ${tableArn}`),
    ...TABLE_SCHEMA.globalSecondaryIndexes.flatMap((index) =>
      table.indexes.map((action) => `${action} ${tableArn}/index/${index.indexName}`),
    ),
    ...(route.access.merchantSecrets
      ? [
          'secretsmanager:GetSecretValue ' +
            `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${merchantSecretPrefix(stage)}*`,
        ]
      : []),
  ].sort();
}

/** `action resource` pairs of every policy attached to the role, in whatever statements they were grouped. */
function grantedPermissions({ template }: Synthesized, roleId: string): string[] {
  const policies = Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).filter((p) =>
    (p.Properties.Roles as unknown[]).some((r) => flatten(r) === `\${${roleId}}`),
  );
  const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
  return policies
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Record<string, unknown>[])
    .flatMap((statement) => {
      expect(Object.keys(statement).sort()).toEqual(['Action', 'Effect', 'Resource']);
      expect(statement.Effect).toBe('Allow');
      return asArray(statement.Action as string).flatMap((action) =>
        asArray(statement.Resource).map((r) => `${action} ${flatten(r)}`),
      );
    })
    .sort();
}

describe.each(STAGES)('route functions (%s)', (stage) => {
  const expected = STAGE_EXPECTATIONS[stage];
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synthesize(stage);
  });

  test('there is one function and one role per route, and no other', () => {
    synthesized.template.resourceCountIs('AWS::Lambda::Function', ROUTES.length);
    synthesized.template.resourceCountIs('AWS::IAM::Role', ROUTES.length);
    expect([...synthesized.stack.functions.keys()].sort()).toEqual(ROUTES.map((r) => r.id).sort());
    const functionIds = new Set(ROUTES.map((r) => idsOf(synthesized, r).fn));
    expect(functionIds.size).toBe(ROUTES.length);
  });

  describe.each(ROUTES.map((r) => [r.id, r] as const))('%s', (_id, route) => {
    test('runs Node.js 22 on arm64 with the route memory and timeout', () => {
      const fn = resource(synthesized.template, idsOf(synthesized, route).fn).Properties;
      expect(fn.Runtime).toBe('nodejs22.x');
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.Handler).toBe('index.handler');
      expect(fn.MemorySize).toBe(route.memoryMb ?? 256);
      expect(fn.Timeout).toBe(route.timeoutSeconds ?? 10);
      expect(fn.TracingConfig).toEqual({ Mode: 'Active' });
    });

    test('gets exactly the configuration lambdas/config.ts reads', () => {
      const ids = idsOf(synthesized, route);
      const fn = resource(synthesized.template, ids.fn).Properties;
      expect(fn.Environment).toEqual({
        Variables: {
          TABLE_NAME: { Ref: ids.table },
          MERCHANT_SECRET_PREFIX: merchantSecretPrefix(stage),
          STAGE: stage,
          NODE_OPTIONS: '--enable-source-maps',
          POWERTOOLS_SERVICE_NAME: 'checkout',
          LOG_LEVEL: expected.logLevel,
        },
      });
    });

    test(`logs to its own log group, kept ${expected.retentionDays} days`, () => {
      const ids = idsOf(synthesized, route);
      expect(resource(synthesized.template, ids.fn).Properties.LoggingConfig).toEqual({ LogGroup: { Ref: ids.logGroup } });
      const logGroup = resource(synthesized.template, ids.logGroup);
      expect(logGroup.Properties.RetentionInDays).toBe(expected.retentionDays);
      expect(logGroup.DeletionPolicy).toBe(expected.logsRetained ? 'Retain' : 'Delete');
    });

    test(`holds exactly the access it declares (table: ${route.access.table}, secrets: ${route.access.merchantSecrets})`, () => {
      const ids = idsOf(synthesized, route);
      expect(grantedPermissions(synthesized, ids.role)).toEqual(expectedPermissions(stage, route, ids));
    });

    test(`can write to the table only if it declares readWrite, read secrets only if it declares them`, () => {
      const granted = grantedPermissions(synthesized, idsOf(synthesized, route).role);
      const canWrite = granted.some((p) => /^dynamodb:(PutItem|UpdateItem|DeleteItem|BatchWriteItem) /.test(p));
      const canReadSecrets = granted.some((p) => p.startsWith('secretsmanager:'));
      expect(canWrite).toBe(route.access.table === 'readWrite');
      expect(canReadSecrets).toBe(route.access.merchantSecrets);
    });

    test('has no managed or inline policies on its role', () => {
      const role = resource(synthesized.template, idsOf(synthesized, route).role).Properties;
      expect(role.ManagedPolicyArns).toBeUndefined();
      expect(role.Policies).toBeUndefined();
      expect(role.AssumeRolePolicyDocument).toEqual({
        Version: '2012-10-17',
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } }],
      });
      expect(resource(synthesized.template, idsOf(synthesized, route).fn).Properties.Role).toEqual({
        'Fn::GetAtt': [idsOf(synthesized, route).role, 'Arn'],
      });
    });
  });
});

describe('least privilege for every kind of declared access', () => {
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synthesize('dev', { routes: ACCESS_MATRIX_ROUTES });
  });

  test.each(ACCESS_MATRIX_ROUTES.map((r) => [r.access.table, r.access.merchantSecrets, r] as const))(
    'table: %s, merchant secrets: %s',
    (_table, _secrets, route) => {
      const ids = idsOf(synthesized, route);
      expect(grantedPermissions(synthesized, ids.role)).toEqual(expectedPermissions('dev', route, ids));
      const fn = resource(synthesized.template, ids.fn).Properties;
      expect(fn.MemorySize).toBe(route.memoryMb ?? 256);
      expect(fn.Timeout).toBe(route.timeoutSeconds ?? 10);
    },
  );

  test('a function without table access has no DynamoDB permission at all', () => {
    const route = ACCESS_MATRIX_ROUTES.find((r) => r.access.table === 'none' && !r.access.merchantSecrets)!;
    const granted = grantedPermissions(synthesized, idsOf(synthesized, route).role);
    expect(granted.filter((p) => !p.startsWith('logs:') && !p.startsWith('xray:'))).toEqual([]);
  });
});
