import type { CardBrand } from '../domain/card';

/**
 * Small marks of the card brands the page shows as accepted, drawn here as plain shapes and the
 * brand's name (no third-party files: the page loads nothing but itself). 36×24 each; every mark
 * is labelled with the brand's name for screen readers. Every brand the card rules accept
 * (lambdas/domain/card.ts) has one, so typing any accepted number lights its mark.
 */
const text = (fill: string, label: string, colour = '#fff', size = 9) =>
  `<rect width="36" height="24" rx="3" fill="${fill}"/><text x="18" y="15.5" font-family="Arial,sans-serif" font-size="${size}" font-weight="700" fill="${colour}" text-anchor="middle">${label}</text>`;
const circles = (left: string, right: string) =>
  `<rect width="36" height="24" rx="3" fill="#fff" stroke="#c8c8c8"/><circle cx="14" cy="12" r="7" fill="${left}"/><circle cx="22" cy="12" r="7" fill="${right}" fill-opacity=".85"/>`;

const MARKS: readonly [CardBrand, string, string][] = [
  ['visa', 'Visa', text('#1a1f71', 'VISA', '#fff', 10)],
  ['mastercard', 'Mastercard', circles('#eb001b', '#f79e1b')],
  ['maestro', 'Maestro', circles('#0099df', '#eb001b')],
  ['amex', 'American Express', text('#1f72cd', 'AMEX')],
  ['mir', 'Mir', text('#0f754e', 'МИР')],
  ['unionpay', 'UnionPay', text('#d10429', 'UnionPay', '#fff', 6.5)],
  ['discover', 'Discover', text('#fff', 'DISCOVER', '#231f20', 5.6).replace('<rect ', '<rect stroke="#c8c8c8" ') + '<circle cx="29.5" cy="19.5" r="2.5" fill="#f58220"/>'],
  ['jcb', 'JCB', text('#0b4ea2', 'JCB', '#fff', 10)],
  ['diners', 'Diners Club', text('#0079be', 'DINERS', '#fff', 7)],
];

/** The brands with a mark: every brand the card rules know. */
export const MARKED_BRANDS: readonly CardBrand[] = MARKS.map(([brand]) => brand);

/** The list of accepted brands; the page script marks the brand of the number being typed. */
export function brandMarks(label: string): string {
  return `<ul class="marks" id="brand-marks" aria-label="${label}">${MARKS.map(([brand, name, shape]) => `<li data-mark="${brand}"><svg viewBox="0 0 36 24" role="img" aria-label="${name}">${shape}</svg></li>`).join('')}</ul>`;
}
