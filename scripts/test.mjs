#!/usr/bin/env node
/**
 * `npm test`: the typecheck and Jest side by side, arguments passed to Jest. The typecheck takes a
 * few seconds of one core while Jest's first files start, instead of holding the whole run back.
 * A type error stops Jest (the run fails as it did when the typecheck ran first, with tsc's report);
 * otherwise the run ends with Jest's exit code. Ctrl-C reaches both.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));

const typecheck = spawn(bin('tsc'), ['--noEmit', '-p', 'tsconfig.json'], { stdio: ['ignore', 'pipe', 'pipe'] });
let report = '';
typecheck.stdout.on('data', (chunk) => (report += chunk));
typecheck.stderr.on('data', (chunk) => (report += chunk));

const jest = spawn(bin('jest'), process.argv.slice(2), { stdio: 'inherit' });

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    typecheck.kill(signal);
    jest.kill(signal);
  });
}

const ended = (child) => new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));

const [typed, tested] = await Promise.all([
  ended(typecheck).then((code) => {
    if (code !== 0) {
      process.stderr.write(`\nThe typecheck failed (tsc --noEmit -p tsconfig.json); Jest is stopped:\n${report}\n`);
      jest.kill('SIGTERM');
    }
    return code;
  }),
  ended(jest),
]);
process.exit(typed !== 0 ? typed : tested);
