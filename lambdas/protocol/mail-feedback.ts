import type { MailFeedback } from '../domain/receipt';

/** Most recipients read from one event: a receipt has one; SES lists at most 50 per message. */
const MAX_RECIPIENTS = 50;

interface SesEventDetail {
  readonly eventType?: unknown;
  readonly bounce?: { readonly bounceType?: unknown; readonly bouncedRecipients?: readonly { readonly emailAddress?: unknown }[] };
  readonly complaint?: { readonly complainedRecipients?: readonly { readonly emailAddress?: unknown }[] };
}

const addresses = (list: readonly { readonly emailAddress?: unknown }[] | undefined): string[] =>
  (Array.isArray(list) ? list : [])
    .map((r) => r?.emailAddress)
    .filter((a): a is string => typeof a === 'string' && a.includes('@') && a.length <= 254)
    .slice(0, MAX_RECIPIENTS);

/**
 * SES's event publishing as EventBridge delivers it (detail-type "Email Bounced" or "Email
 * Complained", the configuration set's event destination): the feedback, or undefined for any
 * other event (deliveries, sends), which the rule should not have passed.
 */
export function mailFeedbackOf(event: unknown): MailFeedback | undefined {
  const detail = ((event ?? {}) as { detail?: SesEventDetail }).detail;
  if (!detail || typeof detail !== 'object') return undefined;
  if (detail.eventType === 'Bounce' && detail.bounce) {
    return { kind: 'bounce', permanent: detail.bounce.bounceType === 'Permanent', recipients: addresses(detail.bounce.bouncedRecipients) };
  }
  if (detail.eventType === 'Complaint' && detail.complaint) return { kind: 'complaint', recipients: addresses(detail.complaint.complainedRecipients) };
  return undefined;
}
