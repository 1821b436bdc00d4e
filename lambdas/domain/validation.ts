import * as z from 'zod/mini';
import type { FieldError } from './errors';

/** The platform's rule messages, word for word (protocol.md §2). */
export const RULE = {
  blank: 'This value should not be blank.',
  invalid: 'This value is not valid.',
  url: 'This value is not a valid URL.',
  choice: 'The value you selected is not a valid choice.',
  positive: 'This value should be greater than 0.',
  tooLong: (n: number) => `This value is too long. It should have ${n} characters or less.`,
  tooShort: (n: number) => `This value is too short. It should have ${n} characters or more.`,
  exactly: (n: number) => `This value should have exactly ${n} characters.`,
  type: (t: string) => `This value should be of type ${t}.`,
  tooMany: (n: number) => `This collection should contain ${n} elements or less.`,
  between: (min: number, max: number) => `This value should be between ${min} and ${max}.`,
} as const;

const TYPE_NAMES: Record<string, string> = { object: 'array', record: 'array', int: 'integer', number: 'numeric', boolean: 'bool' };

/** Messages for issues a field's own checks did not word themselves. */
const platformErrorMap: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined || issue.input === null || issue.input === '') return RULE.blank;
      return RULE.type(TYPE_NAMES[issue.expected] ?? issue.expected);
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) <= 1 ? RULE.blank : RULE.tooShort(Number(issue.minimum));
      if (issue.origin === 'number') return RULE.positive;
      return RULE.blank;
    case 'too_big':
      if (issue.origin === 'string') return RULE.tooLong(Number(issue.maximum));
      if (issue.origin === 'array') return RULE.tooMany(Number(issue.maximum));
      return RULE.invalid;
    case 'invalid_value':
      return RULE.choice;
    default:
      return RULE.invalid;
  }
};
z.config({ customError: platformErrorMap });

/** A required string: blank first, then length, then the allowed characters. */
export const text = (opts: { min?: number; max: number; pattern?: RegExp; message?: string }) =>
  z.string().check(
    z.minLength(1, RULE.blank),
    ...(opts.min && opts.min > 1 ? [z.minLength(opts.min, RULE.tooShort(opts.min))] : []),
    z.maxLength(opts.max, RULE.tooLong(opts.max)),
    ...(opts.pattern ? [z.regex(opts.pattern, opts.message ?? RULE.invalid)] : []),
  );

export function isHttpUrl(value: string): boolean {
  if (/\s/.test(value)) return false;
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname.length > 0 && !u.username && !u.password;
  } catch {
    return false;
  }
}

export const httpUrl = (max = 1024) =>
  z.string().check(
    z.minLength(1, RULE.blank),
    z.maxLength(max, RULE.tooLong(max)),
    z.refine(isHttpUrl, RULE.url),
  );

/** One item per invalid field, first problem wins, dotted paths. */
export function fieldErrorsFrom(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const seen = new Map<string, FieldError>();
  for (const issue of issues) {
    const path = issue.path.map(String).join('.') || 'body';
    if (!seen.has(path)) seen.set(path, { path, message: issue.message });
  }
  return [...seen.values()];
}

/** Adds errors that a later pass found, without a second item for a field that already failed. */
export function mergeFieldErrors(first: readonly FieldError[], later: readonly FieldError[]): FieldError[] {
  const paths = new Set(first.map((e) => e.path));
  return [...first, ...later.filter((e) => !paths.has(e.path))];
}

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };
