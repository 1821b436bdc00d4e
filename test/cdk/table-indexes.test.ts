import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { CheckoutStack } from '../../lib/checkout-stack';
import { CheckoutTable } from '../../lib/constructs/checkout-table';
import { stackName } from '../../lib/naming';
import { LEGACY_INDEXES, TABLE_INDEXES_CONTEXT, TABLE_SCHEMA, tableIndexesFromContext } from '../../lib/table-schema';
import { testApp } from './synth';

/**
 * The context value that steps an existing table through the index migration (docs/operations.md,
 * "Migrating an existing table"): CloudFormation adds or drops one index per update, so each step
 * names the indexes the table has.
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

test('each migration step differs from the one before by exactly one index', () => {
  const steps = [
    'legacy',
    'legacy,lookup',
    'legacy,lookup,sending',
    'legacy,lookup,sending,work',
    'legacy,lookup,sending,work,search',
    'lookup,sending,work,search,gsi1,queue,gsi2',
    'lookup,sending,work,search,gsi1,queue',
    'lookup,sending,work,search,gsi1',
    undefined,
  ];
  const tables = steps.map((step) => new Set(indexNames(tableOfStep(step))));
  expect([...tables[steps.length - 1]!]).toEqual(indexNames(synthWith().template));
  expect([...tables[0]!].sort()).toEqual(LEGACY_INDEXES.map((g) => g.indexName).sort());
  for (let i = 1; i < tables.length; i++) {
    const added = [...tables[i]!].filter((n) => !tables[i - 1]!.has(n));
    const dropped = [...tables[i - 1]!].filter((n) => !tables[i]!.has(n));
    expect(`${steps[i]}: +${added.length} -${dropped.length}`).toBe(`${steps[i]}: +${i <= 4 ? 1 : 0} -${i <= 4 ? 0 : 1}`);
  }
});

test('a step without every current index warns that the functions need them; the old indexes keep whole items', () => {
  const { stack, template } = synthWith('legacy,lookup');
  Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('without the indexes work, search, sending'));
  const table = Object.values(template.findResources('AWS::DynamoDB::Table'))[0]!;
  const old = (table.Properties.GlobalSecondaryIndexes as { IndexName: string; Projection: unknown }[]).filter((i) => ['gsi1', 'queue', 'gsi2', 'outbox'].includes(i.IndexName));
  expect(old).toHaveLength(4);
  for (const index of old) expect(index.Projection).toEqual({ ProjectionType: 'ALL' });
});

test('an unknown index name is refused with the names there are', () => {
  expect(() => tableIndexesFromContext('lookup,gsi3')).toThrow(/unknown index "gsi3"; indexes are lookup, work, search, sending, gsi1, queue, gsi2, outbox, legacy/);
});
