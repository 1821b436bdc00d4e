import * as z from 'zod/mini';
import type { AuditSearch } from '../../use-cases/admin/audit';
import type { DisputeSearch } from '../../use-cases/admin/disputes';
import type { PaymentSearch } from '../../use-cases/admin/search-plan';

/** The query strings of the portal's reads (snake_case); the use cases check the values themselves. */
type Query = Readonly<Record<string, string | undefined>> | undefined;

const field = z.optional(z.string());

export const paymentSearchQuery = z.object({
  payment_id: field,
  order: field,
  status: field,
  merchant: field,
  email: field,
  last4: field,
  amount: field,
  from: field,
  to: field,
  cursor: field,
});

/** A payment search (GET /admin/api/payments, …/count, …/export) from its query string. */
export function paymentSearchOf(query: Query): PaymentSearch {
  const { payment_id: paymentId, ...rest } = paymentSearchQuery.parse(query ?? {});
  return { paymentId, ...rest };
}

export const auditSearchQuery = z.object({ cursor: field, actor: field, action: field, target: field, from: field, to: field });

/** An audit search (GET /admin/api/audit, …/export) from its query string. */
export const auditSearchOf = (query: Query): AuditSearch => auditSearchQuery.parse(query ?? {});

export const disputeSearchQuery = z.object({ month: field, merchant: field, reason: field, outcome: field });

/** A disputes view or export (GET /admin/api/disputes, …/export) from its query string. */
export const disputeSearchOf = (query: Query): DisputeSearch => disputeSearchQuery.parse(query ?? {});
