import type { Page } from 'playwright-core';
import { WALLET_SCRIPTS } from '../../lambdas/checkout-page/wallets';

/** What the doubles do: whether each wallet says it can pay, and the token and card it hands over. */
export interface WalletDoubleOptions {
  readonly applePay?: { readonly canMakePayments: boolean; readonly token?: string; readonly network?: string; readonly last4?: string; readonly email?: string; readonly country?: string };
  readonly googlePay?: { readonly ready: boolean; readonly token?: string; readonly network?: string; readonly last4?: string; readonly cardHolderAuthenticated?: boolean; readonly email?: string; readonly country?: string };
}

/** What the page asked of the doubles (installWalletDoubles's answer; also window.__walletCalls on the page). */
export interface WalletCalls {
  readonly applePay: { version?: number; request?: Record<string, unknown>; merchantSession?: Record<string, unknown>; completed?: number; aborted?: boolean };
  readonly googlePay: { environment?: string; readyRequest?: Record<string, unknown>; request?: Record<string, unknown> };
}

/**
 * Test doubles of the wallets' documented JavaScript interfaces, injected before the page's own
 * scripts run (page.addInitScript), and the wallets' script URLs answered by the test (page.route)
 * so nothing reaches the network:
 * - `ApplePaySession` (Apple Pay JS): `canMakePayments()`, `new ApplePaySession(version, request)`,
 *   `begin()` → `onvalidatemerchant({validationURL})` → `completeMerchantValidation(session)` →
 *   `onpaymentauthorized({payment:{token:{paymentData,paymentMethod},billingContact,shippingContact}})`
 *   → `completePayment(status)`; `abort()`; `STATUS_SUCCESS`.
 * - `google.payments.api.PaymentsClient` (Google Pay API for web): `new PaymentsClient({environment})`,
 *   `isReadyToPay(request)` → `{result}`, `loadPaymentData(request)` → PaymentData
 *   (`paymentMethodData.info.{cardNetwork,cardDetails,assuranceDetails,billingAddress}`,
 *   `tokenizationData.token`, `email`). Google's pay.js defines it: the route serves this double as pay.js.
 * Apple's SDK script is answered empty (Safari has ApplePaySession itself).
 */
export async function installWalletDoubles(page: Page, options: WalletDoubleOptions, validationURL = 'https://apple-pay-gateway-cert.apple.com/paymentservices/startSession'): Promise<WalletCalls> {
  // What the page asks the doubles is reported here as it happens (it outlives the page's navigation).
  const recorded: WalletCalls = { applePay: {}, googlePay: {} };
  await page.exposeBinding('__recordWalletCall', (_source, wallet: 'applePay' | 'googlePay', key: string, value: unknown) => {
    (recorded[wallet] as Record<string, unknown>)[key] = value;
  });
  await page.addInitScript(
    ({ o, validationURL }) => {
      const record = (window as unknown as { __recordWalletCall: (w: string, k: string, v: unknown) => void }).__recordWalletCall;
      const log = (w: 'applePay' | 'googlePay') => new Proxy({} as Record<string, unknown>, { set: (t, k, v) => ((t[k as string] = v), void record(w, k as string, v), true) });
      const calls = { applePay: log('applePay'), googlePay: log('googlePay') };
      (window as unknown as { __walletCalls: unknown }).__walletCalls = calls;
      const a = o.applePay;
      if (a) {
        class ApplePaySession {
          static STATUS_SUCCESS = 0;
          static STATUS_FAILURE = 1;
          static canMakePayments(): boolean {
            return a!.canMakePayments;
          }
          static supportsVersion(v: number): boolean {
            return v <= 14;
          }
          onvalidatemerchant: ((e: { validationURL: string }) => void) | null = null;
          onpaymentauthorized: ((e: unknown) => void) | null = null;
          oncancel: (() => void) | null = null;
          constructor(version: number, request: Record<string, unknown>) {
            calls.applePay.version = version;
            calls.applePay.request = request;
          }
          begin(): void {
            setTimeout(() => this.onvalidatemerchant?.({ validationURL }), 0);
          }
          completeMerchantValidation(session: Record<string, unknown>): void {
            calls.applePay.merchantSession = session;
            setTimeout(
              () =>
                this.onpaymentauthorized?.({
                  payment: {
                    token: { paymentData: JSON.parse(a!.token ?? '{}'), paymentMethod: { network: a!.network ?? 'Visa', displayName: `${a!.network ?? 'Visa'} ${a!.last4 ?? '1111'}`, type: 'debit' }, transactionIdentifier: 'DOUBLE' },
                    ...(a!.email ? { shippingContact: { emailAddress: a!.email } } : {}),
                    ...(a!.country ? { billingContact: { countryCode: a!.country } } : {}),
                  },
                }),
              0,
            );
          }
          completePayment(status: number): void {
            calls.applePay.completed = status;
          }
          abort(): void {
            calls.applePay.aborted = true;
          }
        }
        (window as unknown as { ApplePaySession: unknown }).ApplePaySession = ApplePaySession;
      }
      const g = o.googlePay;
      if (g) {
        (window as unknown as { __googlePayDouble: unknown }).__googlePayDouble = {
          PaymentsClient: class {
            constructor(opts: { environment: string }) {
              calls.googlePay.environment = opts.environment;
            }
            isReadyToPay(request: Record<string, unknown>) {
              calls.googlePay.readyRequest = request;
              return Promise.resolve({ result: g.ready });
            }
            loadPaymentData(request: Record<string, unknown>) {
              calls.googlePay.request = request;
              return Promise.resolve({
                apiVersion: 2,
                apiVersionMinor: 0,
                ...(g.email ? { email: g.email } : {}),
                paymentMethodData: {
                  type: 'CARD',
                  description: `${g.network ?? 'VISA'} •••• ${g.last4 ?? '1111'}`,
                  info: {
                    cardNetwork: g.network ?? 'VISA',
                    cardDetails: g.last4 ?? '1111',
                    assuranceDetails: { accountVerified: true, cardHolderAuthenticated: g.cardHolderAuthenticated ?? false },
                    ...(g.country ? { billingAddress: { countryCode: g.country } } : {}),
                  },
                  tokenizationData: { type: 'PAYMENT_GATEWAY', token: g.token ?? '' },
                },
              });
            }
          },
        };
      }
    },
    { o: options, validationURL },
  );
  // pay.js defines google.payments.api from the double; Apple's SDK adds nothing Safari lacks.
  await page.route(WALLET_SCRIPTS.googlepay, (route) => route.fulfill({ contentType: 'text/javascript', body: 'window.google={payments:{api:window.__googlePayDouble}};' }));
  await page.route(WALLET_SCRIPTS.applepay, (route) => route.fulfill({ contentType: 'text/javascript', body: '' }));
  return recorded;
}

/** The wallets' scripts never reach the page (the bench's, test/bench/wallet-page.ts). */
export { blockWalletScripts } from '../bench/wallet-page';
