import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOBS } from '../../lib/jobs';
import { ROUTES } from '../../lib/routes';
import { cleanUpTestApps, synthesize, testApp, testAppOutdirs } from './synth';

const cdkOutDirs = () => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('cdk.out'));

/**
 * Every App makes an output directory; made without one, it lands in the system temp dir as
 * `cdk.out*` and stays there (about 120 per run before). The tests' helper makes its own and
 * removes them after the file: the temp dir is listed before and after a synth.
 */
it('synthesizing through the test helper leaves no directory in the temp dir once cleaned up', () => {
  const before = cdkOutDirs();
  const { template } = synthesize('dev', { routes: ROUTES.slice(0, 1), jobs: JOBS.slice(0, 1) });
  testApp({ context: { stage: 'dev' } });
  expect(Object.keys(template.toJSON().Resources).length).toBeGreaterThan(0);

  const made = testAppOutdirs();
  expect(made).toHaveLength(2);
  for (const dir of made) {
    expect(path.dirname(dir)).toBe(os.tmpdir());
    expect(fs.existsSync(dir)).toBe(true);
  }
  expect(fs.readdirSync(made[0]!).some((f) => f.endsWith('.template.json'))).toBe(true);

  cleanUpTestApps();
  for (const dir of made) expect(fs.existsSync(dir)).toBe(false);
  expect(cdkOutDirs()).toEqual(before);
});
