import { spawnSync } from 'node:child_process';
import { PROJECT_ROOT } from '../../lib/bundling';

/**
 * `npm ci` on a fresh machine prints no warning about install scripts it did not run: each
 * dependency with one is reviewed in package.json's allowScripts (README, "Install scripts"), and a
 * new one fails here until it is.
 */
test('every dependency\'s install script is reviewed (npm install-scripts ls)', () => {
  const out = spawnSync('npm', ['install-scripts', 'ls'], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(`${out.stdout}${out.stderr}`).toContain('No packages with unreviewed install scripts.');
});
