import { Match } from 'aws-cdk-lib/assertions';
import { STAGES } from '../../lib/naming';
import { TABLE_SCHEMA, createTableInput } from '../../lib/table-schema';
import { logicalId, resource, synthesize, type Synthesized } from './synth';

describe.each(STAGES)('the table (%s)', (stage) => {
  let template: Synthesized['template'];
  let tableId: string;
  beforeAll(() => {
    const synthesized = synthesize(stage);
    template = synthesized.template;
    tableId = logicalId(synthesized.stack.table.table);
  });
  const table = () => resource(template, tableId);

  test('is the only table', () => {
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.resourceCountIs('AWS::DynamoDB::GlobalTable', 0);
  });

  test('has exactly the keys and indexes the local runner creates (TABLE_SCHEMA)', () => {
    const local = createTableInput(`checkout-${stage}`);
    const props = table().Properties;
    // No fixed name: a retained table of a failed first deploy never blocks the next (tools read the TableName output).
    expect(props.TableName).toBeUndefined();
    expect(props.KeySchema).toEqual(local.KeySchema);
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(sortBy(props.AttributeDefinitions, 'AttributeName')).toEqual(sortBy(local.AttributeDefinitions, 'AttributeName'));
    expect(sortBy(props.GlobalSecondaryIndexes, 'IndexName')).toEqual(sortBy(local.GlobalSecondaryIndexes, 'IndexName'));
  });

  test('has one index per TABLE_SCHEMA entry, each projecting its keys and at most one small attribute', () => {
    const indexes = table().Properties.GlobalSecondaryIndexes as { IndexName: string; Projection: unknown }[];
    expect(indexes.map((i) => i.IndexName).sort()).toEqual(TABLE_SCHEMA.globalSecondaryIndexes.map((g) => g.indexName).sort());
    expect(Object.fromEntries(indexes.map((i) => [i.IndexName, i.Projection]))).toEqual({
      lookup: { ProjectionType: 'KEYS_ONLY' },
      work: { ProjectionType: 'KEYS_ONLY' },
      searchKeys: { ProjectionType: 'KEYS_ONLY' },
      sending: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['merchantKey'] },
    });
  });

  test('expires items by TTL, keeps point-in-time recovery and is encrypted with the AWS-managed key', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: TABLE_SCHEMA.timeToLiveAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: Match.objectEquals({ SSEEnabled: true }),
    });
  });

  const retained = stage === 'prod';
  test(retained ? 'is retained and protected from deletion' : 'is destroyed with the stack', () => {
    const t = table();
    expect(t.DeletionPolicy).toBe(retained ? 'Retain' : 'Delete');
    expect(t.UpdateReplacePolicy).toBe(retained ? 'Retain' : 'Delete');
    expect(t.Properties.DeletionProtectionEnabled).toBe(retained);
  });
});

function sortBy<T>(items: readonly T[], key: keyof T): T[] {
  return [...items].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
}
