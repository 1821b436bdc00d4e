import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** `npm ci` on a clean clone refuses a lock file that lacks any optional dependency's entry. */
describe('package-lock.json', () => {
  it('has an entry for every optional dependency (run npm run lockfile:complete when this fails)', () => {
    const lock = JSON.parse(readFileSync(resolve(__dirname, '../../package-lock.json'), 'utf8')) as {
      packages: Record<string, { optionalDependencies?: Record<string, string> }>;
    };
    const missing = Object.values(lock.packages).flatMap((entry) =>
      Object.keys(entry.optionalDependencies ?? {}).filter((name) => !lock.packages[`node_modules/${name}`]),
    );
    expect(missing).toEqual([]);
  });
});
