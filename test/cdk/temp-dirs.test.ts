import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOBS } from '../../lib/jobs';
import { ROUTES } from '../../lib/routes';
import { cleanUpTestApps, SHARED_SYNTH_DIR_PREFIX, synthesize, testApp, testAppOutdirs } from './synth';

const cdkOutDirs = () => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('cdk.out'));

/**
 * Every App makes an output directory; made without one, it lands in the system temp dir as
 * `cdk.out*` and stays there (about 120 per run before). The tests' helper makes its own and
 * removes them after the file; the stages synthesize() shares among a worker's files write into
 * one directory of the worker's, removed when it exits. The temp dir is listed before and after.
 */
it('synthesizing through the test helper leaves no directory in the temp dir once cleaned up', () => {
  const before = cdkOutDirs();
  const { stack, template } = synthesize('dev', { routes: ROUTES.slice(0, 1), jobs: JOBS.slice(0, 1) });
  testApp({ context: { stage: 'dev' } });
  expect(Object.keys(template.toJSON().Resources).length).toBeGreaterThan(0);

  const synthesized = stack.node.root as unknown as { outdir: string };
  const shared = path.dirname(synthesized.outdir);
  expect(path.dirname(shared)).toBe(os.tmpdir());
  expect(path.basename(shared).startsWith(SHARED_SYNTH_DIR_PREFIX)).toBe(true);
  expect(fs.readdirSync(synthesized.outdir).some((f) => f.endsWith('.template.json'))).toBe(true);

  const made = testAppOutdirs();
  expect(made).toHaveLength(1);
  expect(path.dirname(made[0]!)).toBe(os.tmpdir());
  expect(fs.existsSync(made[0]!)).toBe(true);

  cleanUpTestApps();
  expect(fs.existsSync(made[0]!)).toBe(false);
  expect(cdkOutDirs()).toEqual(before);
});
