/** The merchant API (docs/protocol.md): signed POSTs of JSON, one function each. */
import { ACCESS, tableAccess } from '../table-access';
import { merchantRoute, type RouteDefinition } from './route';

/** Void, refund and capture by the merchant: one payment of its own, changed around one acquirer follow-up. */
const MERCHANT_FOLLOW_UP = tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, ACCESS.paymentChange, ACCESS.acquirerFollowUps);
/**
 * A recurring charge: the chain, a new payment (its details and state put, then changed; the first
 * payment's read for its IP, a replay's read by query), the merchant's settings, the stored card.
 */
const RECURRING_CHARGE = tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, ACCESS.merchantSettingsRead, ACCESS.acquirerMerchantInitiated, {
  items: { PAYMENT: ['GetItem', 'PutItem', 'Query', 'UpdateItem'], RECURRING: ['GetItem'] },
});
// GetItem: a put whose answer was lost is checked against what it wrote (lambdas/adapters/dynamodb/client.ts putNew).
const NEW_SESSION = tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, { items: { PAYMENT: ['GetItem', 'PutItem', 'Query'], CARDTOKEN: ['BatchGetItem', 'GetItem'] } });
const STATUS_READ = tableAccess(ACCESS.merchantGate, ACCESS.requestKeyCheck, ACCESS.paymentRead, { indexes: ['lookup'] });
const RETRY_CHARGE = tableAccess(ACCESS.merchantGate, ACCESS.requestKeyClaim, ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerMerchantInitiated, {
  items: { RECURRING: ['GetItem'] },
});

export const MERCHANT_API_ROUTES: readonly RouteDefinition[] = [
  merchantRoute('CreateSession', 'POST /api/v1/session', 'create-session', NEW_SESSION),
  merchantRoute('PaymentStatus', 'POST /api/v1/payment/status', 'payment-status', STATUS_READ),
  merchantRoute('RecurringPayment', 'POST /api/v1/payment/recurring', 'recurring-payment', RECURRING_CHARGE, { acquirerWork: 'authorization' }),
  merchantRoute('VoidPayment', 'POST /api/v1/payment/void', 'void-payment', MERCHANT_FOLLOW_UP, { acquirerWork: 'followUp' }),
  merchantRoute('RefundPayment', 'POST /api/v1/payment/refund', 'refund-payment', MERCHANT_FOLLOW_UP, { acquirerWork: 'followUp' }),
  merchantRoute('RetryPayment', 'POST /api/v1/payment/retry', 'retry-payment', RETRY_CHARGE, { acquirerWork: 'authorization' }),
  merchantRoute('CapturePayment', 'POST /api/v1/payment/capture', 'capture-payment', MERCHANT_FOLLOW_UP, { acquirerWork: 'followUp' }),
  // The platform also publishes the recurring path with a Cyrillic "с" (U+0441) as the third
  // letter of "recurring". A route key with a non-ASCII (or percent-encoded) path cannot be relied
  // on at API Gateway, so a path parameter catches it; explicit routes above win over it, and
  // the handler answers 404 for any other spelling (see recurring-payment.ts).
  merchantRoute('RecurringPaymentCyrillic', 'POST /api/v1/payment/{alias}', 'recurring-payment', RECURRING_CHARGE, {
    servedValues: { alias: ['re\u0441urring'] },
    acquirerWork: 'authorization',
  }),
];
