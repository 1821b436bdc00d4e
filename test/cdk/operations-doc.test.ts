import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { synthesize } from './synth';

/**
 * docs/operations.md tells a first deployer how many functions share the account's concurrency;
 * the number is the synthesized prod template's, so a new route or job that changes it fails here
 * until the sentence says so.
 */
test('the number of functions in docs/operations.md is the synthesized prod template\'s', () => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
  const stated = /the stack has (\d+) functions/.exec(doc);
  expect(stated).not.toBeNull();
  const { template, monitoring } = synthesize('prod');
  const count = Object.keys(template.findResources('AWS::Lambda::Function')).length + Object.keys(monitoring.findResources('AWS::Lambda::Function')).length;
  expect(Number(stated![1])).toBe(count);
});
