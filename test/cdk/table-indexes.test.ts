import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { CheckoutStack } from '../../lib/checkout-stack';
import { CheckoutTable } from '../../lib/constructs/checkout-table';
import { stackName } from '../../lib/naming';
import { LEGACY_INDEXES, TABLE_INDEXES_CONTEXT, TABLE_SCHEMA, tableIndexesFromContext } from '../../lib/table-schema';
import { testApp } from './synth';

/**
 * The context value that steps an existing table through an index migration (docs/operations.md,
 * "Migrating an existing table to the sharded indexes", "Migrating the search index to keys only"):
 * CloudFormation adds or drops one index per update, so each step names the indexes the table has.
 */
const synths = new Map<string | undefined, { stack: CheckoutStack; template: Template }>();
function synthWith(tableIndexes?: string) {
  const made = synths.get(tableIndexes);
  if (made) return made;
  const app = testApp({ context: { stage: 'dev', 'aws:cdk:bundling-stacks': [], ...(tableIndexes !== undefined ? { [TABLE_INDEXES_CONTEXT]: tableIndexes } : {}) } });
  const stack = new CheckoutStack(app, stackName('dev'), { stage: 'dev' });
  const synthesized = { stack, template: Template.fromStack(stack) };
  synths.set(tableIndexes, synthesized);
  return synthesized;
}
/**
 * The table a step makes, built alone (the stack passes the context's reading to it, as the two
 * whole-stack tests here show): a whole stack per step would synthesize every function for nothing.
 */
function tableOfStep(tableIndexes?: string): Template {
  const stack = new Stack(testApp(), 'Step');
  new CheckoutTable(stack, 'Data', { retainData: true, indexes: tableIndexesFromContext(tableIndexes) });
  return Template.fromStack(stack);
}
const indexNames = (template: Template) =>
  (Object.values(template.findResources('AWS::DynamoDB::Table'))[0]!.Properties.GlobalSecondaryIndexes as { IndexName: string }[]).map((i) => i.IndexName);

test('without it: the four current indexes, no warning', () => {
  const { stack, template } = synthWith();
  expect(indexNames(template).sort()).toEqual(TABLE_SCHEMA.globalSecondaryIndexes.map((g) => g.indexName).sort());
  Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('migration step'));
});

/** The first `adds` steps each add one index to the table of the step before, the others each drop one. */
function expectOneIndexPerStep(steps: readonly (string | undefined)[], adds: number): Set<string>[] {
  const tables = steps.map((step) => new Set(indexNames(tableOfStep(step))));
  expect([...tables[steps.length - 1]!]).toEqual(indexNames(synthWith().template));
  for (let i = 1; i < tables.length; i++) {
    const added = [...tables[i]!].filter((n) => !tables[i - 1]!.has(n));
    const dropped = [...tables[i - 1]!].filter((n) => !tables[i]!.has(n));
    expect(`${steps[i]}: +${added.length} -${dropped.length}`).toBe(`${steps[i]}: +${i <= adds ? 1 : 0} -${i <= adds ? 0 : 1}`);
  }
  return tables;
}

test('each step of the migration to the sharded indexes differs from the one before by exactly one index', () => {
  const steps = [
    'legacy',
    'legacy,lookup',
    'legacy,lookup,sending',
    'legacy,lookup,sending,work',
    'legacy,lookup,sending,work,searchKeys',
    'lookup,sending,work,searchKeys,gsi1,queue,gsi2',
    'lookup,sending,work,searchKeys,gsi1,queue',
    'lookup,sending,work,searchKeys,gsi1',
    undefined,
  ];
  const tables = expectOneIndexPerStep(steps, 4);
  // `legacy` is the four of the unsharded layout, not the status-projecting `search` that came after them.
  expect([...tables[0]!].sort()).toEqual(['gsi1', 'gsi2', 'outbox', 'queue']);
});

test('the search index moves to keys only in two steps: searchKeys built beside search, then search dropped', () => {
  // The table as the release before this one deployed it, with no tableIndexes: its four indexes.
  const deployed = 'lookup,work,search,sending';
  expectOneIndexPerStep([deployed, `${deployed},searchKeys`, undefined], 1);
  // The old index kept exactly as it was deployed: a projection cannot change in place.
  const kept = (Object.values(tableOfStep(`${deployed},searchKeys`).findResources('AWS::DynamoDB::Table'))[0]!.Properties.GlobalSecondaryIndexes as { IndexName: string }[]).find(
    (i) => i.IndexName === 'search',
  );
  expect(kept).toEqual({
    IndexName: 'search',
    KeySchema: [
      { AttributeName: 'searchPk', KeyType: 'HASH' },
      { AttributeName: 'searchSk', KeyType: 'RANGE' },
    ],
    Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status'] },
  });
  expect(LEGACY_INDEXES.find((g) => g.indexName === 'search')).toMatchObject({ partitionKey: 'searchPk', sortKey: 'searchSk' });
  // The new one has the same keys (no item changes) and projects nothing else.
  expect(TABLE_SCHEMA.globalSecondaryIndexes.find((g) => g.indexName === 'searchKeys')).toEqual({ indexName: 'searchKeys', partitionKey: 'searchPk', sortKey: 'searchSk', projection: [] });
});

test('the first step of the search index migration deploys functions that read and are granted only the new index', () => {
  const { stack, template } = synthWith('lookup,work,search,sending,searchKeys');
  Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('migration step'));
  const granted = Object.values(template.findResources('AWS::IAM::Policy'))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as { Resource: unknown }[])
    .flatMap((st) => [st.Resource].flat())
    .map((r) => JSON.stringify(r))
    .filter((r) => r.includes('/index/search'));
  expect(granted.length).toBeGreaterThan(0);
  expect(granted.every((r) => r.includes('/index/searchKeys'))).toBe(true);
});

test('a step without every current index warns that the functions need them; the old indexes keep whole items', () => {
  const { stack, template } = synthWith('legacy,lookup');
  Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('without the indexes work, searchKeys, sending'));
  const table = Object.values(template.findResources('AWS::DynamoDB::Table'))[0]!;
  const old = (table.Properties.GlobalSecondaryIndexes as { IndexName: string; Projection: unknown }[]).filter((i) => ['gsi1', 'queue', 'gsi2', 'outbox'].includes(i.IndexName));
  expect(old).toHaveLength(4);
  for (const index of old) expect(index.Projection).toEqual({ ProjectionType: 'ALL' });
});

test('an unknown index name is refused with the names there are', () => {
  expect(() => tableIndexesFromContext('lookup,gsi3')).toThrow(/unknown index "gsi3"; indexes are lookup, work, searchKeys, sending, gsi1, queue, gsi2, outbox, search, legacy/);
});
