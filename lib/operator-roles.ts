/**
 * What an operator of the admin portal may do. Each role includes the one before it:
 *
 * - `viewer`: reads payments, callbacks, the capture queue, merchants and the audit log;
 * - `operator`: also captures, releases, voids and refunds payments and resends callbacks;
 * - `admin`: also changes merchant settings, and manages operators (outside the portal: Cognito
 *   groups on AWS, `npm run operator` locally).
 *
 * Every `/admin/api` route of lib/routes.ts names the least role it needs; the stack makes one
 * Cognito group per role, and the local runner keeps the role with the operator. Shared by the
 * stack and the functions, like lib/table-schema.ts.
 */
export const OPERATOR_ROLES = ['viewer', 'operator', 'admin'] as const;

export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export const isOperatorRole = (value: unknown): value is OperatorRole => typeof value === 'string' && (OPERATOR_ROLES as readonly string[]).includes(value);

/** Whether an operator holding `held` may call a route that needs `needed`. */
export const roleAllows = (held: OperatorRole, needed: OperatorRole): boolean => OPERATOR_ROLES.indexOf(held) >= OPERATOR_ROLES.indexOf(needed);

/** The strongest of several roles (an operator in more than one Cognito group), or undefined for none. */
export function strongestRole(roles: readonly unknown[]): OperatorRole | undefined {
  const known = roles.filter(isOperatorRole);
  return known.length ? known.reduce((a, b) => (roleAllows(a, b) ? a : b)) : undefined;
}
