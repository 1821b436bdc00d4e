import type { PolicyStatementJson } from '../../lib/table-access';

/**
 * A small IAM evaluator for the statements this stack writes: an explicit Deny wins, then any
 * Allow; actions and resources match exactly (the stack names no wildcard for DynamoDB), and the
 * condition operators it uses are evaluated as IAM does for multi-valued keys:
 * `ForAllValues:StringLike` (every value matches a pattern; true when the key is absent or empty),
 * `ForAnyValue:StringLike` (some value matches), `Null` (`"false"`: the key must be present).
 * Any other operator fails the evaluation loudly rather than being guessed at.
 */
export interface IamRequest {
  readonly action: string;
  readonly resource: string;
  /** Condition keys of the request, e.g. `dynamodb:LeadingKeys` → the partition key values. */
  readonly context: Readonly<Record<string, readonly string[] | undefined>>;
}

export type Decision = 'allowed' | 'denied-explicitly' | 'not-allowed';

const asArray = <T>(v: T | readonly T[]): readonly T[] => (Array.isArray(v) ? v : [v as T]);

/** IAM's StringLike: `*` any run of characters, `?` one character, everything else literal. */
export function stringLike(pattern: string, value: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's').test(value);
}

function conditionHolds(condition: PolicyStatementJson['Condition'], context: IamRequest['context']): boolean {
  for (const [operator, keys] of Object.entries(condition ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      const patterns = asArray(expected).map(String);
      const values = context[key];
      switch (operator) {
        case 'ForAllValues:StringLike':
          if (!(values ?? []).every((v) => patterns.some((p) => stringLike(p, v)))) return false;
          break;
        case 'ForAnyValue:StringLike':
          if (!(values ?? []).some((v) => patterns.some((p) => stringLike(p, v)))) return false;
          break;
        case 'Null': {
          const mustBeAbsent = patterns[0] === 'true';
          const absent = values === undefined || values.length === 0;
          if (absent !== mustBeAbsent) return false;
          break;
        }
        default:
          throw new Error(`The IAM evaluator does not know the condition operator ${operator}`);
      }
    }
  }
  return true;
}

const matches = (statement: PolicyStatementJson, request: IamRequest): boolean =>
  asArray(statement.Action).includes(request.action) && asArray(statement.Resource).includes(request.resource) && conditionHolds(statement.Condition, request.context);

export function evaluate(statements: readonly PolicyStatementJson[], request: IamRequest): Decision {
  if (statements.some((s) => s.Effect === 'Deny' && matches(s, request))) return 'denied-explicitly';
  return statements.some((s) => s.Effect === 'Allow' && matches(s, request)) ? 'allowed' : 'not-allowed';
}
