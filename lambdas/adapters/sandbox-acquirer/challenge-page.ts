import { esc } from '../../checkout-page/html';
import { decodeLinkToken } from '../../domain/checkout-link';
import { displayAmount, layout } from '../../checkout-page/render';
import { en, type Texts } from '../../checkout-page/texts/en';
import type { Payment } from '../../domain/payment';
import type { Merchant } from '../../ports/merchants';
import { SANDBOX_OTP } from './rules';
import type { ChallengeView } from './challenge';

/**
 * The simulated issuer (3-D Secure) and bank (redirect) pages of the sandbox acquirer: the form while
 * the challenge is open, else a note (answered before, or closed) with a link back to the checkout.
 */
export interface ChallengePageContext {
  readonly texts?: Texts;
  /** The payment being confirmed and whose it is: the page names the shop, the amount and the card's last four. */
  readonly payment?: Payment;
  readonly merchant?: Merchant;
  /** After a wrong one-time code: how many tries are left (the page asks again). */
  readonly codeTriesLeft?: number;
}

export function renderChallenge(view: Pick<ChallengeView, 'flow' | 'state'>, action: string, nonce: string, returnPath: string | undefined, page: ChallengePageContext = {}): string {
  const texts = page.texts ?? en;
  const t = texts.challenge;
  const { payment, merchant } = page;
  const summary = payment && merchant
    ? `<p class="amount-line">${esc(t.payment(merchant.name, displayAmount(payment.order.amountMinor, payment.order.currency, texts.lang), payment.card?.mask.slice(-4) ?? payment.wallet?.last4 ?? '····'))}</p>`
    : '';
  const is3ds = view.flow === '3ds';
  const title = is3ds ? t.title3ds : t.titleRedirect;
  if (view.state !== 'open') {
    const note = view.state === 'closed' ? t.closed : t.done;
    const back = returnPath ? `<a class="button" href="${esc(returnPath)}">${esc(texts.continueButton)}</a>` : '';
    return layout({ nonce, texts }, undefined, title, `<h1 id="title">${esc(note)}</h1>${summary}${back}`);
  }
  const wrong = page.codeTriesLeft !== undefined;
  const code = is3ds
    ? `<label for="code">${esc(t.code)}</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="6" aria-describedby="code-error" aria-invalid="${wrong}" data-autofocus>
<p class="error" id="code-error" role="${wrong ? 'alert' : 'status'}">${wrong ? esc(t.wrongCode(page.codeTriesLeft!)) : ''}</p>`
    : '';
  const body = `<h1 id="title">${esc(title)}</h1>
${summary}
<p class="sandbox">${esc(texts.sandboxNotice)}</p>
<p>${esc(is3ds ? t.body3ds(SANDBOX_OTP) : t.bodyRedirect)}</p>
<form method="post" action="${esc(action)}">
${returnPath ? `<input type="hidden" name="return" value="${esc(returnPath)}">` : ''}
${code}
<button type="submit" name="decision" value="confirm" id="confirm">${esc(t.confirm)}</button>
<button type="submit" name="decision" value="refuse" id="refuse" class="secondary" formnovalidate>${esc(t.refuse)}</button>
</form>`;
  return layout({ nonce, texts }, undefined, title, body);
}

/**
 * Where the customer goes back after the page: the checkout's completion path of the same payment
 * (`/auth/<link token>/complete`), handed over by the customer's browser and never stored.
 * Anything else (another payment's link, another site) is dropped.
 */
export function returnPathFor(candidate: string | null | undefined, paymentId: string): string | undefined {
  const m = /^\/auth\/([A-Za-z0-9_-]{1,200})\/complete$/.exec(candidate ?? '');
  if (!m) return undefined;
  return decodeLinkToken(m[1]!)?.paymentId === paymentId ? candidate! : undefined;
}
