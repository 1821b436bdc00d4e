import { googlePayEnvironment, googlePayGateway, type Config } from '../config';
import { formatMinor } from '../domain/money';
import type { StageWallets } from '../domain/wallet-settings';
import type { Wallet } from '../domain/wallet';
import type { AccountReader } from '../ports/acquirer-accounts';
import type { LinkView } from '../use-cases/checkout';
import { linkWallets, type LinkWallets } from '../use-cases/link-wallets';
import { esc, jsonForScript } from './html';
import type { Texts } from './texts/en';

/**
 * Apple Pay and Google Pay on the hosted page (docs/wallets.md). The buttons are rendered hidden
 * above the card form; the page's script loads the wallets' own scripts after the card form is
 * ready, asynchronously, and shows a button only once its wallet says it can pay
 * (`ApplePaySession.canMakePayments()`, Google Pay's `isReadyToPay`). The wallet's token is posted
 * to the link (`POST /auth/{token}` with `wallet`), which then leads on as a card payment does.
 * Without JavaScript, or with a wallet's script blocked or slow, the card form is the page.
 */

/** What the stage can run, from its configuration: its Apple Pay identity and secrets, its own account's Google Pay gateway, Google Pay's environment. */
export interface PageWallets extends StageWallets {
  readonly googlePayEnvironment: 'TEST' | 'PRODUCTION';
  /** The acquirer's country (ISO 3166-1 alpha-2), which both wallets ask for. */
  readonly country: string;
}

export function pageWalletsOf(config: Pick<Config, 'APPLE_PAY_SECRET_PREFIX' | 'APPLE_PAY_MERCHANT_ID' | 'GOOGLE_PAY_GATEWAY' | 'ACQUIRER' | 'STAGE' | 'WALLET_COUNTRY'>): PageWallets {
  const gateway = googlePayGateway(config);
  return {
    applePay: Boolean(config.APPLE_PAY_SECRET_PREFIX),
    ...(config.APPLE_PAY_MERCHANT_ID ? { applePayMerchantId: config.APPLE_PAY_MERCHANT_ID } : {}),
    ...(gateway ? { googlePayGateway: gateway } : {}),
    googlePayEnvironment: googlePayEnvironment(config),
    country: config.WALLET_COUNTRY,
  };
}

/** The wallets' scripts, as their documentation gives them. */
export const WALLET_SCRIPTS: Readonly<Record<Wallet, string>> = {
  applepay: 'https://applepay.cdn-apple.com/jsapi/1.latest/apple-pay-sdk.js',
  googlepay: 'https://pay.google.com/gp/p/js/pay.js',
};

/** The origins each wallet's script loads from, calls, frames and shows images from (the page's CSP adds them when the wallet is on). */
export const WALLET_ORIGINS: Readonly<Record<Wallet, { readonly script: readonly string[]; readonly connect: readonly string[]; readonly frame: readonly string[]; readonly img: readonly string[] }>> = {
  applepay: { script: ['https://applepay.cdn-apple.com'], connect: ['https://applepay.cdn-apple.com'], frame: [], img: [] },
  googlepay: { script: ['https://pay.google.com'], connect: ['https://pay.google.com', 'https://google.com/pay'], frame: ['https://pay.google.com'], img: ['https://www.gstatic.com'] },
};

/** The networks offered to the wallets: the card brands the platform takes that both wallets name. */
const GOOGLE_NETWORKS = ['AMEX', 'DISCOVER', 'JCB', 'MASTERCARD', 'VISA'];
const APPLE_NETWORKS = ['amex', 'discover', 'jcb', 'masterCard', 'visa'];

type FormView = Extract<LinkView, { kind: 'form' }>;

/** What a page's wallets are worked out with: the stage's, and the merchants' own accounts (their Google Pay parameters). */
export interface PageWalletContext {
  readonly stage: PageWallets;
  readonly accounts: AccountReader;
}

/** The wallets this form's page offers (before the browser says which it can pay with), and Google Pay's tokenization parameters. */
export const walletsOfView = (view: FormView, wallets: PageWalletContext | undefined): Promise<LinkWallets> =>
  wallets ? linkWallets({ accountReader: wallets.accounts }, wallets.stage, view.payment, view.merchant) : Promise.resolve({ offered: [] });

/**
 * The page's wallet configuration, built on the server: Apple Pay's payment request and where its
 * merchant validation goes; Google Pay's environment and payment data request with the
 * tokenization parameters of the merchant's acquirer account (link-wallets.ts). It asks the wallet
 * for the e-mail and billing country when the form would.
 */
export function walletConfig(view: FormView, offered: LinkWallets, stage: PageWallets, action: string): Record<string, unknown> {
  const { payment, merchant } = view;
  const wallets = offered.offered;
  const amount = formatMinor(payment.order.amountMinor, payment.order.currency);
  const askEmail = view.ask.includes('email');
  const askCountry = view.ask.includes('country');
  const out: Record<string, unknown> = {};
  if (wallets.includes('applepay')) {
    out.applepay = {
      script: WALLET_SCRIPTS.applepay,
      // The merchant validation is asked of the link itself (POST with `applepay_validation_url`).
      validateUrl: action,
      request: {
        countryCode: stage.country,
        currencyCode: payment.order.currency,
        supportedNetworks: APPLE_NETWORKS,
        merchantCapabilities: ['supports3DS'],
        total: { label: merchant.name.slice(0, 64), amount, type: 'final' },
        ...(askCountry ? { requiredBillingContactFields: ['postalAddress'] } : {}),
        ...(askEmail ? { requiredShippingContactFields: ['email'] } : {}),
      },
    };
  }
  if (wallets.includes('googlepay') && offered.googlePay) {
    const card = {
      type: 'CARD',
      parameters: {
        allowedAuthMethods: ['PAN_ONLY', 'CRYPTOGRAM_3DS'],
        allowedCardNetworks: GOOGLE_NETWORKS,
        // Tells which auth method the card was paid with (cardHolderAuthenticated: a device token's cryptogram).
        assuranceDetailsRequired: true,
        ...(askCountry ? { billingAddressRequired: true, billingAddressParameters: { format: 'MIN' } } : {}),
      },
    };
    out.googlepay = {
      script: WALLET_SCRIPTS.googlepay,
      environment: stage.googlePayEnvironment,
      readyRequest: { apiVersion: 2, apiVersionMinor: 0, allowedPaymentMethods: [{ type: card.type, parameters: { allowedAuthMethods: card.parameters.allowedAuthMethods, allowedCardNetworks: GOOGLE_NETWORKS } }] },
      request: {
        apiVersion: 2,
        apiVersionMinor: 0,
        allowedPaymentMethods: [
          { ...card, tokenizationSpecification: { type: 'PAYMENT_GATEWAY', parameters: { gateway: offered.googlePay.gateway, gatewayMerchantId: offered.googlePay.gatewayMerchantId } } },
        ],
        merchantInfo: { merchantName: merchant.name, ...(merchant.googlePayMerchantId ? { merchantId: merchant.googlePayMerchantId } : {}) },
        transactionInfo: { totalPriceStatus: 'FINAL', totalPrice: amount, currencyCode: payment.order.currency, countryCode: stage.country },
        ...(askEmail ? { emailRequired: true } : {}),
      },
    };
  }
  return out;
}

/** The buttons (hidden until their wallet says it can pay) and the form their tokens are posted with. */
export function walletMarkup(wallets: readonly Wallet[], t: Texts, action: string, config: Record<string, unknown>, cardOffered = true): string {
  const buttons = wallets.map((w) => `<button type="button" id="${w}-button" class="wallet ${w}" hidden>${esc(t.wallets[w])}</button>`).join('');
  const fields = ['wallet', 'payment_token', 'network', 'last4', 'auth_method', 'email', 'country', 'browser_language', 'browser_screen_width', 'browser_screen_height', 'browser_color_depth', 'browser_tz_offset', 'browser_java'];
  // A session that offers wallets only: the section is the page, and says so until a wallet can pay.
  return `<section id="wallets" aria-label="${esc(t.wallets.legend)}"${cardOffered ? ' hidden' : ''}>
${buttons}
${cardOffered ? `<p class="or" aria-hidden="true">${esc(t.wallets.orCard)}</p>` : `<p id="wallets-none" role="status">${esc(t.wallets.none)}</p>`}
<form id="wallet-form" method="post" action="${esc(action)}">${fields.map((f) => `<input type="hidden" name="${f}">`).join('')}</form>
<script type="application/json" id="wallet-config">${jsonForScript(config)}</script>
</section>`;
}

/** The buttons' look: Apple's and Google's black buttons (their guidelines), full width like Pay. */
export const walletStyles = `
.wallet[hidden]{display:none}
.wallet{background:#000;color:#fff;margin:0 0 .75rem;min-height:2.75rem;border:1px solid #000}
.wallet:focus{outline:3px solid var(--accent)}
.or{text-align:center;color:var(--muted);margin:.25rem 0 1rem}
@media (prefers-color-scheme:dark){.wallet{background:#fff;color:#000;border-color:#fff}}
`;

/**
 * The wallets' script, after the card form's (it runs last, so the form is ready whatever the
 * wallets do). Once the page has loaded it loads each wallet's script with the page's nonce; a script that fails or never
 * answers leaves its button hidden. Apple Pay: the session is begun by the click; its merchant
 * validation goes through our route; the authorized payment's token is posted. Google Pay: the
 * PaymentsClient of the stage's environment, the server-built request, the token posted with the
 * auth method read from `assuranceDetails` (cardHolderAuthenticated: a device token's cryptogram,
 * CRYPTOGRAM_3DS; otherwise PAN_ONLY, for which the acquirer runs 3-D Secure).
 */
export const walletScript = () => `(function(){
"use strict";
var el=document.getElementById('wallet-config');if(!el)return;
var c=JSON.parse(el.textContent),box=document.getElementById('wallets'),form=document.getElementById('wallet-form');
var nonce=(document.currentScript&&document.currentScript.nonce)||'';
function load(src,done){var s=document.createElement('script');s.src=src;s.async=true;s.nonce=nonce;s.onload=done;s.onerror=done;document.head.appendChild(s)}
function show(w,pay){var b=document.getElementById(w+'-button'),none=document.getElementById('wallets-none');if(!b)return;b.addEventListener('click',pay);b.hidden=false;box.hidden=false;if(none)none.hidden=true}
function post(v){var pf=document.getElementById('pay-form');Object.keys(v).forEach(function(k){form.elements[k].value=v[k]||''});
 var b={language:navigator.language||'',screen_width:String(screen.width),screen_height:String(screen.height),color_depth:String(screen.colorDepth),tz_offset:String(new Date().getTimezoneOffset()),java:String(typeof navigator.javaEnabled==='function'&&navigator.javaEnabled())};Object.keys(b).forEach(function(n){form.elements['browser_'+n].value=b[n]});
 ['email','country'].forEach(function(n){if(!v[n]&&pf&&pf.elements[n])form.elements[n].value=pf.elements[n].value});form.submit()}
function last4(s){var m=/(\\d{4})\\s*$/.exec(s||'');return m?m[1]:''}
function start(){
if(c.applepay){load(c.applepay.script,function(){
 var A=window.ApplePaySession;
 try{if(!A||!A.canMakePayments())return}catch(e){return}
 show('applepay',function(){
  var s=new A(3,c.applepay.request);
  s.onvalidatemerchant=function(e){fetch(c.applepay.validateUrl,{method:'POST',credentials:'same-origin',headers:{'content-type':'application/x-www-form-urlencoded',accept:'application/json'},body:'applepay_validation_url='+encodeURIComponent(e.validationURL)})
   .then(function(r){if(!r.ok)throw new Error('validation');return r.json()}).then(function(m){s.completeMerchantValidation(m)},function(){s.abort()})};
  s.onpaymentauthorized=function(e){var p=e.payment,t=p.token,m=t.paymentMethod||{};
   s.completePayment(A.STATUS_SUCCESS);
   post({wallet:'applepay',payment_token:JSON.stringify(t.paymentData),network:m.network,last4:last4(m.displayName),email:p.shippingContact&&p.shippingContact.emailAddress,country:p.billingContact&&p.billingContact.countryCode})};
  s.begin();
 });
})}
if(c.googlepay){load(c.googlepay.script,function(){
 var g=window.google&&google.payments&&google.payments.api;if(!g)return;
 var client=new g.PaymentsClient({environment:c.googlepay.environment});
 client.isReadyToPay(c.googlepay.readyRequest).then(function(r){if(!r||!r.result)return;
  show('googlepay',function(){client.loadPaymentData(c.googlepay.request).then(function(d){var m=d.paymentMethodData,i=m.info||{},a=i.assuranceDetails;
   post({wallet:'googlepay',payment_token:m.tokenizationData.token,network:i.cardNetwork,last4:i.cardDetails,auth_method:a&&a.cardHolderAuthenticated?'CRYPTOGRAM_3DS':'PAN_ONLY',email:d.email,country:i.billingAddress&&i.billingAddress.countryCode})},function(){})});
 },function(){});
})}
}
// After the page's load event: a wallet script that is slow or never answers delays neither the form nor load.
if(document.readyState==='complete')start();else window.addEventListener('load',start);
})();`;

/** The CSP additions of the wallets on a page: each wallet's origins, and our own validation route for Apple Pay. */
export function walletSources(wallets: readonly Wallet[]): { script: string[]; connect: string[]; frame: string[]; img: string[] } {
  const out = { script: [] as string[], connect: [] as string[], frame: [] as string[], img: [] as string[] };
  for (const w of wallets) {
    const o = WALLET_ORIGINS[w];
    out.script.push(...o.script);
    out.connect.push(...o.connect);
    out.frame.push(...o.frame);
    out.img.push(...o.img);
  }
  if (wallets.includes('applepay')) out.connect.push("'self'");
  return out;
}
