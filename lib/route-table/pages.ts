/** What a browser opens: the customer's checkout pages and the acquirers' own pages and callbacks. */
import { ACCESS, tableAccess } from '../table-access';
import { ACQUIRER_CALLBACK_THROTTLE, acquirerRoute, pageRoute, type RouteDefinition } from './route';

export const CHECKOUT_PAGE_ROUTES: readonly RouteDefinition[] = [
  // The account of a merchant linked to one, for its Google Pay parameters (use-cases/link-wallets.ts).
  pageRoute('CheckoutPage', 'GET /auth/{token}', 'checkout-page', { table: tableAccess(ACCESS.paymentRead, ACCESS.merchantSettingsRead, ACCESS.accountRead), merchantSecrets: true }),
  pageRoute(
    'CheckoutPay',
    'POST /auth/{token}',
    'checkout-pay',
    // Apple Pay's certificates: the page's Apple Pay sheet asks this route for its merchant session
    // (a form field of its own; docs/wallets.md). No function of its own: the stack's resource budget.
    { table: tableAccess(ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerAuthorizations, ACCESS.tokenIssue, ACCESS.savedCardRead), merchantSecrets: true, applePaySecrets: true },
    { acquirerWork: 'authorization' },
  ),
  pageRoute(
    'CheckoutComplete',
    'GET /auth/{token}/complete',
    'checkout-complete',
    { table: tableAccess(ACCESS.paymentChange, ACCESS.merchantSettingsRead, ACCESS.acquirerLookups, ACCESS.tokenIssue), merchantSecrets: true },
    { acquirerWork: 'status' },
  ),
  // What the processing page polls while an attempt's outcome is open: the payment's record only.
  pageRoute('CheckoutStatus', 'GET /auth/{token}/status', 'checkout-status', { table: tableAccess(ACCESS.paymentRead) }),
];

export const ACQUIRER_ROUTES: readonly RouteDefinition[] = [
  acquirerRoute('sandbox', 'SandboxChallengePage', 'GET /sandbox/challenge/{key}', 'sandbox-challenge-page', {
    table: tableAccess(ACCESS.paymentRead, ACCESS.merchantSettingsRead, ACCESS.acquirerLookups),
  }),
  acquirerRoute('sandbox', 'SandboxChallengeAnswer', 'POST /sandbox/challenge/{key}', 'sandbox-challenge-answer', {
    table: tableAccess(ACCESS.paymentRead, ACCESS.merchantSettingsRead, ACCESS.acquirerChallengeAnswers),
  }),
  // The customer's way to the gateway's 3-D Secure or bank page (an auto-submitting form). It reads
  // the attempt's record: a link whose attempt is over sends nobody to the gateway again.
  acquirerRoute('s2s-card', 'S2SCardRedirect', 'GET /acquirer/s2s-card/redirect', 's2s-card-redirect', {
    table: tableAccess({ items: { S2SCARD: ['GetItem'] } }),
    acquirerCredentials: true,
  }),
  // The gateway's callbacks (the account's Notification URL): verified, recorded, answered OK at once.
  acquirerRoute('s2s-card', 'S2SCardNotify', 'POST /acquirer/s2s-card/notify', 's2s-card-notify', { table: tableAccess(ACCESS.acquirerNotifications) }, ACQUIRER_CALLBACK_THROTTLE),
];
