import type { ReceiptFacts } from '../domain/receipt';
import { esc } from './html';
import { displayAmount } from './render';
import { en, type Texts } from './texts/en';
import { PAGE_LANGUAGES } from './texts';

/**
 * The e-mail receipt, in the page's words: the same rows as the page's receipt (render.ts
 * `receipt`: shop, amount, paid on, order, reference, card's last four), from the same texts file
 * of the payment's language, so a language the page speaks the mail speaks too. Every value is
 * text: escaped in the HTML part, and the subject is one line.
 */
export interface ReceiptMail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** The language it is written in (ISO 639-1). */
  readonly language: string;
}

/** The texts of a payment's language: the session's, when the page has it; English otherwise. */
export function receiptTexts(language: string | undefined): Texts {
  const code = language?.toLowerCase();
  return (code && Object.hasOwn(PAGE_LANGUAGES, code) ? PAGE_LANGUAGES[code] : undefined) ?? en;
}

/** When it was paid, as the page writes it: the language's medium date and short time, in UTC and named so. */
const paidOn = (iso: string, locale: string): string =>
  new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso)) + ' UTC';

/** The receipt's rows as the page shows them: term, value, and `ltr` for values that read left to right whatever the language. */
export function receiptRows(facts: ReceiptFacts, t: Texts): readonly (readonly [string, string, 'ltr'?])[] {
  const r = t.receipt;
  return [
    [r.shop, facts.shop],
    [r.amount, displayAmount(facts.amountMinor, facts.currency, t.lang)],
    [r.date, paidOn(facts.paidAt, t.lang)],
    [r.order, facts.orderNumber, 'ltr'],
    [r.reference, facts.paymentId, 'ltr'],
    ...(facts.card ? [[r.card, `${facts.card.brand === 'unknown' ? '' : `${facts.card.brand.toUpperCase()} `}${r.cardEnding(facts.card.last4)}`] as const] : []),
  ];
}

/** Characters a subject line may not carry (a header ends at a line break). */
const LINE_BREAKS = /[\r\n\u2028\u2029]+/g;

export function receiptMail(facts: ReceiptFacts, language: string | undefined): ReceiptMail {
  const t = receiptTexts(language);
  const rows = receiptRows(facts, t);
  const amount = displayAmount(facts.amountMinor, facts.currency, t.lang);
  const subject = `${t.receipt.title}: ${facts.shop}`.replace(LINE_BREAKS, ' ').slice(0, 200);
  const intro = t.successBody(facts.shop, amount);
  const text = [t.receipt.title, '', intro, '', ...rows.map(([term, value]) => `${term}: ${value}`), ''].join('\n');
  const dir = t.lang === 'ar' ? 'rtl' : 'ltr';
  const html = `<!doctype html>
<html lang="${esc(t.lang)}" dir="${dir}"><head><meta charset="utf-8"><title>${esc(subject)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#1a1a1a;margin:0;padding:1rem">
<h1 style="font-size:1.25rem;margin:0 0 .75rem">${esc(t.receipt.title)}</h1>
<p>${esc(intro)}</p>
<table role="presentation" style="border-collapse:collapse">
${rows.map(([term, value, ltr]) => `<tr><th scope="row" style="text-align:start;font-weight:normal;color:#555;padding:.25rem 1rem .25rem 0">${esc(term)}</th><td${ltr ? ' dir="ltr"' : ''} style="padding:.25rem 0">${esc(value)}</td></tr>`).join('\n')}
</table>
</body></html>
`;
  return { subject, text, html, language: t.lang };
}
