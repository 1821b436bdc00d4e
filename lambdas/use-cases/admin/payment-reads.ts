import { ApiError } from '../../domain/errors';
import type { Payment } from '../../domain/payment';
import type { AuditEntry } from '../../ports/operators';
import { QUEUES } from '../record-outcome';
import { ADMIN_LIMITS, type AdminReadDeps } from './deps';
import { foundIn, type FoundPayment } from './search-plan';

/** A payment with its audit entries, as read at `now`. */
export async function paymentDetail(deps: AdminReadDeps, paymentId: string): Promise<{ payment: Payment; audit: AuditEntry[]; now: Date; merchantName?: string }> {
  const payment = await deps.store.findPayment(paymentId);
  if (!payment) throw new ApiError('PAYMENT_NOT_FOUND');
  const [audit, merchant] = await Promise.all([deps.audit.forTarget(paymentId, 100), deps.merchants.find(payment.merchantKey)]);
  return { payment, audit, now: deps.clock.now(), ...(merchant ? { merchantName: merchant.name } : {}) };
}

/** Pending authorizations, the soonest to expire first. */
export async function captureQueue(deps: AdminReadDeps): Promise<{ found: FoundPayment[]; now: Date }> {
  const now = deps.clock.now();
  const queued = await deps.store.due(QUEUES.capture, new Date('9999-12-31T00:00:00.000Z'), ADMIN_LIMITS.queueSize);
  // Operators know merchants by name: the directory (by the lookup index) names them.
  const names = new Map((await deps.merchants.list(ADMIN_LIMITS.merchantsPerSearch)).map((m) => [m.merchantKey, m.name]));
  const payments: Payment[] = [];
  for (let i = 0; i < queued.length; i += 100) payments.push(...(await deps.store.findPayments(queued.slice(i, i + 100).map((q) => q.paymentId))));
  const found = payments
    .filter((p) => p.status === 'pending')
    .sort((a, b) => (a.authorizationExpiresAt ?? '').localeCompare(b.authorizationExpiresAt ?? ''))
    .map(foundIn(names));
  return { found, now };
}
