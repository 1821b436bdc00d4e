#!/usr/bin/env node
/**
 * `npm test`: the typecheck, the CDK files and every other Jest file, side by side.
 * - The typecheck takes a few seconds of one core while Jest's first files start, instead of holding
 *   the whole run back. A type error stops Jest (the run fails as it did when the typecheck ran
 *   first, with tsc's report).
 * - The CDK files run in a Jest run of their own, in one process (--runInBand): a stage shape is
 *   then synthesized once for all of them (test/cdk/synth.ts keeps what it made on the process),
 *   where spread over the main run's five workers each worker synthesized it again (about a
 *   quarter of their CPU). Their output is held and printed after the main run's.
 * - Arguments (`npm test -- <paths or options>`) go to one Jest run of everything they select, as
 *   `npx jest` would.
 * The run ends with the first failure's exit code, else 0. Ctrl-C reaches every child.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));
const args = process.argv.slice(2);

const children = [];
const run = (command, argv, options) => {
  const child = spawn(command, argv, options);
  children.push(child);
  return child;
};
const ended = (child) => new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));

const typecheck = run(bin('tsc'), ['--noEmit', '-p', 'tsconfig.json'], { stdio: ['ignore', 'pipe', 'pipe'] });
let report = '';
typecheck.stdout.on('data', (chunk) => (report += chunk));
typecheck.stderr.on('data', (chunk) => (report += chunk));

const split = args.length === 0;
// A command-line --testPathIgnorePatterns replaces the config's (the SOAK=1-only files): both are given.
const { testPathIgnorePatterns = [] } = createRequire(import.meta.url)('../jest.config.js');
const jest = run(bin('jest'), split ? ['--testPathIgnorePatterns', ...testPathIgnorePatterns, '/test/cdk/'] : args, { stdio: 'inherit' });
let cdkOutput = '';
const cdk = split ? run(bin('jest'), ['--runInBand', 'test/cdk'], { stdio: ['ignore', 'pipe', 'pipe'] }) : undefined;
cdk?.stdout.on('data', (chunk) => (cdkOutput += chunk));
cdk?.stderr.on('data', (chunk) => (cdkOutput += chunk));

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
  });
}

const [typed, tested, synthesized] = await Promise.all([
  ended(typecheck).then((code) => {
    if (code !== 0) {
      process.stderr.write(`\nThe typecheck failed (tsc --noEmit -p tsconfig.json); Jest is stopped:\n${report}\n`);
      jest.kill('SIGTERM');
      cdk?.kill('SIGTERM');
    }
    return code;
  }),
  ended(jest),
  cdk ? ended(cdk) : Promise.resolve(0),
]);
if (cdk) process.stderr.write(`\nThe CDK files (jest --runInBand test/cdk):\n${cdkOutput}`);
process.exit([typed, tested, synthesized].find((code) => code !== 0) ?? 0);
