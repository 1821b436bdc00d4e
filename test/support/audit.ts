import { randomUUID } from 'node:crypto';
import type { AuditEntry } from '../../lambdas/ports/operators';

/** An operator's capture as the audit log records it, at `at`; `i` sets its amount, so entries differ. */
export const captureEntry = (at: string, i: number): AuditEntry => ({
  id: randomUUID(),
  at,
  actor: 'operator:olivia',
  action: 'payment.capture',
  target: randomUUID(),
  targetKind: 'payment',
  before: { status: 'pending', amount: { minor: 1000 + i } },
  after: { status: 'settled' },
  outcome: 'done',
});
