import type { Acquirer } from '../../ports/acquirer';
import type { Clock } from '../../ports/clock';
import type { Ids } from '../../ports/ids';
import type { MerchantDirectory, MerchantSecrets } from '../../ports/merchants';
import type { AuditLog } from '../../ports/operators';
import type { PaymentStore } from '../../ports/payments';

/** What the operators' use cases read and write through. */
export interface AdminDeps {
  readonly store: PaymentStore;
  readonly merchants: MerchantDirectory;
  readonly secrets: MerchantSecrets;
  readonly acquirer: Acquirer;
  readonly audit: AuditLog;
  readonly clock: Clock;
  readonly ids: Ids;
}

/** What the operators' reads use: neither the merchants' secrets nor the acquirer (their functions bundle neither). */
export type AdminReadDeps = Omit<AdminDeps, 'secrets' | 'acquirer'>;

/**
 * Limits of the portal's reads: pages, days searched, queries per search. maxQueriesPerSearch
 * bounds the day-and-merchant pages one search request reads (each a query of every shard of the
 * search index); merchantsPerSearch the merchants a search without one visits.
 */
export const ADMIN_LIMITS = { pageSize: 25, maxDays: 31, maxQueriesPerSearch: 20, merchantsPerSearch: 200, queueSize: 500, bulkSize: 50 } as const;

