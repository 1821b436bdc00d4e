import { currencyExponent, formatMinor } from '../domain/money';
import { countryList } from '../domain/contact';
import type { LinkView, Navigation } from '../use-cases/checkout';
import { sessionCustomer, type LinkPayment } from '../domain/payment';
import type { Merchant } from '../ports/merchants';
import { clientScript, navigateScript, processingScript } from './script';
import { POLLING, type PollPlan } from './polling';
import { safePrimary, styles } from './styles';
import { esc, jsonForScript } from './html';
import { brandMarks } from './brand-marks';
import { declineKind } from './decline-kind';
import { en, type Texts } from './texts/en';
import type { PageProvider } from './provider';
import { linkExpiry } from './link-expiry';
import { walletConfig, walletMarkup, walletScript, walletStyles, type PageWallets } from './wallets';
import type { Wallet } from '../domain/wallet';
import type { LinkWallets } from '../use-cases/link-wallets';

export type { Texts };

export interface RenderContext {
  readonly nonce: string;
  /** Form action of the checkout form. */
  readonly action?: string;
  readonly texts?: Texts;
  readonly sandbox?: boolean;
  /** Where Close leads (cancel_url, with return parameters after a decline); on the form, Close posts `close=1` first. */
  readonly closeUrl?: string;
  /** The processing page: where its script asks for the outcome, where it (and "Check again") goes once it is in, and for how long. */
  readonly processing?: { readonly statusUrl: string; readonly checkUrl: string; readonly plan: PollPlan };
  /** Who runs the page, named in the footer with their terms and privacy links (the stage's PROVIDER_*). */
  readonly provider?: PageProvider;
  /** The service's clock at the request: the form tells how long its link stays open from it. */
  readonly now?: Date;
  /** The wallets this form offers with Google Pay's parameters (respond.ts walletsOfView), and what the stage runs them with; none when absent. */
  readonly wallets?: { readonly offered: LinkWallets; readonly stage: PageWallets };
}

/** Languages written right to left (of those Intl may be asked for). */
const RIGHT_TO_LEFT = new Set(['ar', 'he', 'fa', 'ur']);
/** Unicode's left-to-right isolate and its end (UAX #9): the text between reads left to right whatever surrounds it. */
const LRI = '\u2066';
const PDI = '\u2069';

/**
 * "USD 10.00" formatted for people: "$10.00", "¥1,500", "KWD 10.250". In a right-to-left language
 * the currency's Latin code and sign ("US$", "JP¥") are isolated left to right: without it, a
 * right-to-left line puts the sign before the letters ("$US 10.00"). Isolates hold in HTML text,
 * attributes, the title and the Pay button alike.
 */
export function displayAmount(amountMinor: number, currency: string, locale = 'en'): string {
  const exponent = currencyExponent(currency) ?? 2;
  try {
    const format = new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: exponent, maximumFractionDigits: exponent });
    const value = Number(formatMinor(amountMinor, currency));
    if (!RIGHT_TO_LEFT.has(locale.toLowerCase().split('-')[0] ?? '')) return format.format(value);
    return format
      .formatToParts(value)
      .map((part) => (part.type === 'currency' && /[A-Za-z$€£¥]/.test(part.value) ? `${LRI}${part.value}${PDI}` : part.value))
      .join('');
  } catch {
    return `${formatMinor(amountMinor, currency)} ${currency}`;
  }
}

/** A card's expiry month as the language writes it ("01/38", "01.38"), from Intl. */
export function monthOfYear(month: number, year: number, locale: string): string {
  return new Intl.DateTimeFormat(locale, { month: '2-digit', year: '2-digit', timeZone: 'UTC' }).format(Date.UTC(year, month - 1, 1));
}

export function layout(ctx: RenderContext, merchant: Merchant | undefined, title: string, body: string, script = '', head = ''): string {
  const t = ctx.texts ?? en;
  return `<!doctype html>
<html lang="${t.lang}" dir="${t.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>${esc(title)}</title>
<style nonce="${ctx.nonce}">${styles(safePrimary(merchant?.branding?.primaryColor))}</style>
${head}</head>
<body>
<main>
<div class="panel">
${body}
</div>
<footer><p>${esc(t.securedBy)}</p>${ctx.provider ? providerLine(ctx.provider, t) : ''}</footer>
</main>
${script ? `<script nonce="${ctx.nonce}">${script}</script>` : ''}
</body>
</html>`;
}

/**
 * "Payments by <provider> · Terms · Privacy": the name isolated (<bdi>), so a Latin name keeps its
 * order on a right-to-left page; the documents open beside the payment, which stays as it is.
 */
function providerLine(provider: PageProvider, t: Texts): string {
  const [before = '', after = ''] = t.footer.paymentsBy('\u0000').split('\u0000');
  const link = (url: string | undefined, text: string) => (url ? ` · <a href="${esc(url)}" target="_blank" rel="noopener noreferrer">${esc(text)}</a>` : '');
  return `<p class="provider">${esc(before)}<bdi>${esc(provider.name)}</bdi>${esc(after)}${link(provider.termsUrl, t.footer.terms)}${link(provider.privacyUrl, t.footer.privacy)}</p>`;
}

function merchantHeader(merchant: Merchant, headingId = 'title'): string {
  // The name is the heading right beside it: the logo adds nothing for a screen reader, and a logo
  // that fails to load shows nothing rather than its alt text above the same name.
  const logo = merchant.branding?.logoUrl ? `<img src="${esc(merchant.branding.logoUrl)}" alt="">` : '';
  return `${logo}<h1 id="${headingId}">${esc(merchant.name)}</h1>`;
}

function field(opts: {
  name: string;
  label: string;
  hint?: string;
  error?: string;
  attrs: string;
  value?: string;
  autofocus?: boolean;
}): string {
  const described = [opts.hint ? `${opts.name}-hint` : '', `${opts.name}-error`].filter(Boolean).join(' ');
  return `<div>
<label for="${opts.name}">${esc(opts.label)}</label>
${opts.hint ? `<span class="hint" id="${opts.name}-hint">${esc(opts.hint)}</span>` : ''}
<input id="${opts.name}" name="${opts.name}" ${opts.attrs}${opts.value ? ` value="${esc(opts.value)}"` : ''} aria-describedby="${described}" aria-invalid="${opts.error ? 'true' : 'false'}"${opts.autofocus ? ' data-autofocus' : ''}>
<p class="error" id="${opts.name}-error" aria-live="polite">${esc(opts.error ?? '')}</p>
</div>`;
}

/** Longer than this, the order's description shows its start and opens on request (the amount stays in view). */
const DESCRIPTION_SHOWN = 140;

/** The order's description under the amount: long ones folded in a <details> (no script needed), long words broken. */
function description(text: string, t: Texts): string {
  const label = `<span class="visually-hidden">${esc(t.orderLabel)}:</span> `;
  if (text.length <= DESCRIPTION_SHOWN) return `<p class="muted description">${label}${esc(text)}</p>`;
  return `<details class="muted description"><summary>${label}${esc(text.slice(0, DESCRIPTION_SHOWN - 20).trimEnd())}…</summary><p>${esc(text)}</p></details>`;
}

function targetAttr(target: string | undefined): string {
  return target && target !== '_self' ? ` target="${esc(target)}"` : '';
}

export function renderForm(view: Extract<LinkView, { kind: 'form' }>, ctx: RenderContext): string {
  const t = ctx.texts ?? en;
  const { payment, merchant } = view;
  const amount = displayAmount(payment.order.amountMinor, payment.order.currency, t.lang);
  const problems = view.problems ?? {};
  // Card digits read left to right in every language (a right-to-left page keeps them so).
  const ltr = t.dir === 'rtl' ? ' dir="ltr"' : '';
  const msg = (key: string) => {
    if (!problems[key as keyof typeof problems]) return undefined;
    // An expiry left empty is asked for, not called expired.
    if (key === 'expiry' && !view.values?.expiry?.trim()) return t.errors.expiryMissing;
    return t.errors[key];
  };
  // The name the shop gave for the customer (the session's) on a fresh form; after a refused one,
  // only what the customer typed and may be shown again (never a card number: form.ts's echo).
  const holder = view.values ? view.values.holder : sessionCustomer(payment).name?.slice(0, 32);
  const hasProblems = Object.keys(problems).length > 0;
  const firstProblem = ['number', 'expiry', 'cvv', 'holder', 'email', 'country'].find((k) => k in problems);
  const alert = view.declineReason
    ? `<div class="alert" id="error-summary" role="alert" tabindex="-1" data-autofocus><p>${esc(t.declines[declineKind(view.declineReason)])}</p><p>${esc(t.attemptsLeft(view.attemptsLeft))}</p></div>`
    : `<div class="alert" id="error-summary" role="alert" tabindex="-1"${hasProblems ? '' : ' hidden'}>${hasProblems ? esc(problems.wallet ? t.errors.wallet : t.errors.summary) : ''}</div>`;
  const methods = view.methods.length > 1
    ? `<fieldset><legend>${esc(t.methodLegend)}</legend>${view.methods
        .map((m, i) => `<label class="choice"><input type="radio" name="method" value="${esc(m)}"${i === 0 ? ' checked' : ''}> ${esc(t.methods[m] ?? m)}</label>`)
        .join('')}</fieldset>`
    : `<input type="hidden" name="method" value="${esc(view.methods[0] ?? '')}">`;
  const saved = payment.checkout.savedCards ?? [];
  const savedCards = saved.length
    ? `<fieldset><legend>${esc(t.savedCardsLegend)}</legend>
${saved
  .map((c, i) => `<label class="choice"><input type="radio" name="saved_card" value="${esc(c.token)}"${i === 0 ? ' checked' : ''}> ${esc(t.savedCardOption(c.brand.toUpperCase(), c.last4, monthOfYear(c.expMonth, c.expYear, t.lang)))}</label>`)
  .join('\n')}
<label class="choice"><input type="radio" name="saved_card" value="new"> ${esc(t.newCardOption)}</label>
<p class="error" id="saved_card-error" aria-live="polite">${esc(msg('savedCard') ?? '')}</p>
</fieldset>`
    : '';
  const countries = view.ask.includes('country')
    ? `<div>
<label for="country">${esc(t.country)}</label>
<select id="country" name="country" autocomplete="country" required aria-describedby="country-error" aria-invalid="${msg('country') ? 'true' : 'false'}"${firstProblem === 'country' ? ' data-autofocus' : ''}>
<option value="">${esc(t.countryPlaceholder)}</option>
${countryList(t.lang).map(([code, name]) => `<option value="${code}"${view.values?.country === code ? ' selected' : ''}>${esc(name)}</option>`).join('')}
</select>
<p class="error" id="country-error" aria-live="polite">${esc(msg('country') ?? '')}</p>
</div>`
    : '';
  const contact = view.ask.length
    ? `<fieldset><legend>${esc(t.contactLegend)}</legend>
${view.ask.includes('email') ? field({ name: 'email', label: t.email, error: msg('email'), value: view.values?.email, attrs: 'type="email" autocomplete="email" required maxlength="255"', autofocus: firstProblem === 'email' }) : ''}
${countries}
</fieldset>`
    : '';
  // Close goes through this service: after a decline it makes that decline final (it is reported then).
  const close = ctx.closeUrl
    ? `<form id="close-form" method="post" action="${esc(ctx.action ?? '')}"${targetAttr(payment.checkout.urlTarget)}><input type="hidden" name="close" value="1"><button type="submit" class="secondary">${esc(t.closeButton)}</button></form>`
    : '';
  const expiry = linkExpiry(payment.checkout.expiresAt, ctx.now, t);
  const wallets = ctx.wallets?.offered.offered ?? [];
  // A session offering wallets only (its methods name no card) has no card form: the wallets are the page.
  const cardOffered = view.methods.length > 0 || wallets.length === 0;
  const body = `<header aria-labelledby="title">
${merchantHeader(merchant)}
<p class="amount" aria-label="${esc(t.amountLabel)}: ${esc(amount)}">${esc(amount)}</p>
${description(payment.order.description, t)}
</header>
${ctx.sandbox ? `<p class="sandbox">${esc(t.sandboxNotice)}</p>` : ''}
${alert}
${wallets.length ? walletMarkup(wallets, t, ctx.action ?? '', walletConfig(view, ctx.wallets!.offered, ctx.wallets!.stage, ctx.action ?? ''), cardOffered) : ''}
${cardOffered ? `<form id="pay-form" method="post" action="${esc(ctx.action ?? '')}" novalidate>
${methods}
${savedCards}
<fieldset id="card-fields"${payment.checkout.savedCards?.length ? ' data-saved="1"' : ''}><legend>${esc(t.cardLegend)}</legend>
${brandMarks(esc(t.acceptedCards))}
${field({ name: 'card_number', label: t.cardNumber, hint: t.cardNumberHint, error: msg('number'), attrs: `type="text" inputmode="numeric" autocomplete="cc-number" required maxlength="23" spellcheck="false"${ltr}`, autofocus: firstProblem === 'number' })}
<p class="brand" id="card-brand" aria-live="polite"></p>
<div class="row">
${field({ name: 'card_expiry', label: t.expiry, hint: t.expiryHint, error: msg('expiry'), value: view.values?.expiry, attrs: `type="text" inputmode="numeric" autocomplete="cc-exp" required maxlength="7"${ltr}`, autofocus: firstProblem === 'expiry' })}
${field({ name: 'card_cvv', label: t.cvv, hint: t.cvvHint, error: msg('cvv'), attrs: `type="text" inputmode="numeric" autocomplete="cc-csc" required maxlength="4" spellcheck="false"${ltr}`, autofocus: firstProblem === 'cvv' })}
</div>
${field({ name: 'card_holder', label: t.holder, hint: t.holderHint, error: msg('holder'), value: holder, attrs: 'type="text" autocomplete="cc-name" required maxlength="32"', autofocus: firstProblem === 'holder' })}
</fieldset>
${contact}
${['language', 'screen_width', 'screen_height', 'color_depth', 'tz_offset', 'java'].map((n) => `<input type="hidden" id="browser_${n}" name="browser_${n}" value="">`).join('\n')}
${expiry.warning}
<button type="submit" id="pay-button">${esc(t.payButton(amount))}</button>
</form>` : ''}
${expiry.validUntil}
${close}
<script type="application/json" id="texts">${jsonForScript({ ...t.errors, brand: t.brandDetected('%s'), processing: t.processingButton })}</script>`;
  // The wallets' script runs after the card form's: the form is ready whatever the wallets do.
  return layout(ctx, merchant, `${t.title(merchant.name)}: ${amount}`, body, clientScript() + expiry.script + (wallets.length ? walletScript() : ''), wallets.length ? `<style nonce="${ctx.nonce}">${walletStyles}</style>\n` : '');
}

/** The wallets' own names (not translated). */
const WALLET_NAMES: Readonly<Record<Wallet, string>> = { applepay: 'Apple Pay', googlepay: 'Google Pay' };

/** When a payment was made, in the page's language; UTC, named (the server does not know the customer's zone). */
function paidOn(iso: string, locale: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso)) + ' UTC';
}

/** The receipt of a paid payment: shop, amount, when, the order, our reference and the card's last four. */
function receipt(payment: LinkPayment, merchant: Merchant, t: Texts): string {
  const r = t.receipt;
  const rows: [string, string, string?][] = [
    [r.shop, merchant.name],
    [r.amount, displayAmount(payment.order.amountMinor, payment.order.currency, t.lang)],
    [r.date, paidOn(payment.paidAt ?? payment.updatedAt, t.lang)],
    [r.order, payment.order.number, 'ltr'],
    [r.reference, payment.paymentId, 'ltr'],
    ...(payment.card ? [[r.card, `${payment.card.brand === 'unknown' ? '' : `${payment.card.brand.toUpperCase()} `}${r.cardEnding(payment.card.mask.slice(-4))}`] as [string, string]] : []),
    ...(!payment.card && payment.wallet ? [[r.card, `${WALLET_NAMES[payment.wallet.wallet]} · ${payment.wallet.brand === 'unknown' ? '' : `${payment.wallet.brand.toUpperCase()} `}${r.cardEnding(payment.wallet.last4)}`] as [string, string]] : []),
  ];
  return `<section class="receipt" aria-labelledby="receipt-title"><h2 id="receipt-title">${esc(r.title)}</h2><dl>${rows
    .map(([term, value, dir]) => `<dt>${esc(term)}</dt><dd${dir ? ` dir="${dir}"` : ''}>${esc(value)}</dd>`)
    .join('')}</dl></section>`;
}

/** The pages of a link that cannot take a payment now. */
export function renderState(view: Exclude<LinkView, { kind: 'form' }>, ctx: RenderContext): string {
  const t = ctx.texts ?? en;
  const merchant = 'merchant' in view ? view.merchant : undefined;
  const [title, text]: readonly [string, string] = ({
    'not-found': [t.notFoundTitle, t.notFoundBody],
    expired: [t.expiredTitle, t.expiredBody],
    paid: [t.paidTitle, t.paidBody],
    closed: [t.closedTitle, t.closedBody],
    processing: [t.processingTitle, t.processingBody],
    action: [t.actionTitle, t.actionBody],
  } as const)[view.kind];
  if (view.kind === 'processing' && ctx.processing) return renderProcessing(view, ctx, ctx.processing);
  const link = view.kind === 'action'
    ? `<a class="button" href="${esc(view.url)}">${esc(t.actionButton)}</a>`
    : ctx.closeUrl
      ? `<a class="button secondary" href="${esc(ctx.closeUrl)}"${targetAttr('payment' in view ? view.payment.checkout.urlTarget : undefined)}>${esc(t.backToShop)}</a>`
      : '';
  const amount = 'payment' in view ? `<p class="muted">${esc(view.payment.order.description)}: ${esc(displayAmount(view.payment.order.amountMinor, view.payment.order.currency, t.lang))}</p>` : '';
  const body = `<header>${merchant ? merchantHeader(merchant, 'merchant') : ''}</header>
<h1 id="title" tabindex="-1" data-state="${view.kind}">${esc(title)}</h1>
${amount}
<p>${esc(text)}</p>
${view.kind === 'paid' ? receipt(view.payment, view.merchant, t) : ''}
${link}`;
  return layout(ctx, merchant, title, body);
}

/**
 * An attempt whose outcome is not known yet: the customer stays here, told not to pay again, while
 * the page looks for the outcome (script.ts; without scripts a refresh, polling.ts) and then goes
 * on through /complete. "Check again" does the same by hand, with or without scripts. The way back
 * to the shop is the customer's own choice (error_url, the shop's page for an open outcome, else
 * cancel_url); nothing sends them there by itself.
 */
function renderProcessing(view: Extract<LinkView, { kind: 'processing' }>, ctx: RenderContext, processing: NonNullable<RenderContext['processing']>): string {
  const t = ctx.texts ?? en;
  const { payment, merchant } = view;
  const { plan } = processing;
  const amount = displayAmount(payment.order.amountMinor, payment.order.currency, t.lang);
  const back = ctx.closeUrl ? `<a class="button secondary" href="${esc(ctx.closeUrl)}"${targetAttr(payment.checkout.urlTarget)}>${esc(t.backToShop)}</a>` : '';
  const body = `<header>${merchantHeader(merchant, 'merchant')}</header>
<h1 id="title" tabindex="-1" data-state="processing">${esc(t.processingTitle)}</h1>
<p class="muted">${esc(payment.order.description)}: ${esc(amount)}</p>
<p>${esc(t.processingBody)}</p>
<p id="processing-status" role="status" aria-live="polite">${esc(plan.stopAfterMs > 0 ? t.processingWaiting : t.processingStalled)}</p>
<a class="button" id="check-again" href="${esc(processing.checkUrl)}">${esc(t.checkAgainButton)}</a>
${back}
<script type="application/json" id="poll">${jsonForScript({ status: processing.statusUrl, check: processing.checkUrl, stopAfterMs: plan.stopAfterMs, firstDelayMs: POLLING.firstDelayMs, factor: POLLING.factor, maxDelayMs: POLLING.maxDelayMs, stalled: t.processingStalled })}</script>`;
  // A browser without scripts parses this and reloads the check; with scripts it is inert text.
  const refresh = plan.refreshAfterSeconds !== undefined ? `<noscript><meta http-equiv="refresh" content="${plan.refreshAfterSeconds};url=${esc(processing.checkUrl)}"></noscript>\n` : '';
  return layout(ctx, merchant, t.processingTitle, body, plan.stopAfterMs > 0 ? processingScript() : '', refresh);
}

/**
 * Sends the customer on in another browsing context (url_target); a button if scripts are off.
 * After a payment the page says so first: with `_blank` the shop opens in a new window and this
 * page stays behind, so it must not read as if nothing had happened.
 */
export function renderNavigation(nav: Navigation, ctx: RenderContext): string {
  const t = ctx.texts ?? en;
  const target = nav.target ?? '_self';
  const paid = nav.why === 'success' && nav.payment && nav.merchant;
  const continueLink = `<a class="button" id="continue" href="${esc(nav.url)}"${targetAttr(target)}>${esc(t.continueButton)}</a>`;
  if (paid) {
    const amount = displayAmount(nav.payment!.order.amountMinor, nav.payment!.order.currency, t.lang);
    const body = `<header>${merchantHeader(nav.merchant!, 'merchant')}</header>
<h1 id="title" class="done" data-state="success">${esc(t.successTitle)}</h1>
<p>${esc(t.successBody(nav.merchant!.name, amount))}</p>
${nav.payment!.checkout ? receipt(nav.payment as LinkPayment, nav.merchant!, t) : ''}
<p>${esc(target === '_blank' ? t.successNewWindow : t.leavingBody)}</p>
${continueLink}`;
    return layout(ctx, nav.merchant, t.successTitle, body, navigateScript(nav.url, target));
  }
  const body = `<h1 id="title">${esc(t.leavingTitle)}</h1>
<p>${esc(t.leavingBody)}</p>
${continueLink}`;
  return layout(ctx, undefined, t.leavingTitle, body, navigateScript(nav.url, target));
}

export function renderError(ctx: RenderContext): string {
  const t = ctx.texts ?? en;
  return layout(ctx, undefined, t.errorTitle, `<h1 id="title">${esc(t.errorTitle)}</h1><p>${esc(t.errorBody)}</p>`);
}
