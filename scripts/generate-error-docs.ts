import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ERROR_DOCS_PATH, renderErrorDocs } from './error-docs';

/**
 * `npm run docs:errors` writes docs/errors.md from the error catalog;
 * `npm run docs:errors -- --check` fails when the checked-in file differs (for CI).
 */
const check = process.argv.includes('--check');
const rendered = renderErrorDocs();
const file = relative(process.cwd(), ERROR_DOCS_PATH);

if (check) {
  let current = '';
  try {
    current = readFileSync(ERROR_DOCS_PATH, 'utf8');
  } catch {
    // A missing file is simply out of date.
  }
  if (current !== rendered) {
    console.error(`${file} is out of date with lambdas/domain/errors.ts; run: npm run docs:errors`);
    process.exit(1);
  }
  console.log(`${file} is up to date.`);
} else {
  writeFileSync(ERROR_DOCS_PATH, rendered);
  console.log(`Wrote ${file}.`);
}
