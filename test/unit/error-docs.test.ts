import { readFileSync } from 'node:fs';
import { ERRORS } from '../../lambdas/domain/errors';
import { ERROR_DOCS_PATH, renderErrorDocs } from '../../scripts/error-docs';

describe('docs/errors.md', () => {
  it('is the table rendered from the error catalog (regenerate with npm run docs:errors)', () => {
    expect(readFileSync(ERROR_DOCS_PATH, 'utf8')).toBe(renderErrorDocs());
  });

  it('has one row per catalog entry, with its code, HTTP status and message', () => {
    const rows = renderErrorDocs().split('\n').filter((line) => /^\| \d+ \|/.test(line));
    expect(rows).toHaveLength(Object.keys(ERRORS).length);
    for (const entry of Object.values(ERRORS)) {
      expect(rows).toContainEqual(expect.stringMatching(new RegExp(`^\\| ${entry.code} \\| ${entry.httpStatus} \\| \`${entry.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\` \\|`)));
    }
  });
});

describe('the error catalog', () => {
  it('gives every entry a distinct code', () => {
    const codes = Object.values(ERRORS).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it('answers every refusal with an HTTP error status', () => {
    for (const e of Object.values(ERRORS)) expect(e.httpStatus).toBeGreaterThanOrEqual(400);
  });
});
