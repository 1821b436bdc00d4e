import { addressDigest, maskAddress, receiptAddress, suppresses, type MailFeedback } from '../domain/receipt';
import { inParallel } from '../domain/parallel';
import { logger } from '../observability/logger';
import { telemetry } from '../observability/telemetry';
import type { Clock } from '../ports/clock';
import type { MailSuppressions } from '../ports/receipts';

/**
 * SES's feedback on a message (a bounce or a complaint, through the configuration set's event
 * destination): permanent bounces and complaints suppress each recipient by the digest of the
 * address, so later receipts to it are skipped; a transient bounce is only counted.
 */
export async function recordMailFeedback(deps: { readonly suppressions: MailSuppressions; readonly clock: Clock }, feedback: MailFeedback): Promise<{ suppressed: number }> {
  telemetry.mailFeedback(feedback.kind, feedback.recipients.length);
  if (!suppresses(feedback)) return { suppressed: 0 };
  const at = deps.clock.now();
  const recipients = [...new Set(feedback.recipients.map((r) => receiptAddress(r) ?? r.trim()))];
  await inParallel(recipients, 4, (address) => deps.suppressions.suppress(addressDigest(address), feedback.kind, at));
  logger.info('mail feedback: addresses suppressed', { kind: feedback.kind, to: recipients.map(maskAddress) });
  return { suppressed: recipients.length };
}
