import { esc } from '../../checkout-page/html';
import { layout } from '../../checkout-page/render';
import { en } from '../../checkout-page/texts/en';
import { SANDBOX_OTP } from './rules';

/** The simulated issuer (3-D Secure) and bank (redirect) pages of the sandbox acquirer. */
export function renderChallenge(flow: '3ds' | 'redirect' | undefined, action: string, nonce: string, returnUrl: string): string {
  const t = en.challenge;
  if (!flow) {
    return layout({ nonce }, undefined, t.title3ds, `<h1 id="title">${esc(t.done)}</h1><a class="button" href="${esc(returnUrl)}">${esc(en.continueButton)}</a>`);
  }
  const is3ds = flow === '3ds';
  const code = is3ds
    ? `<label for="code">${esc(t.code)}</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required maxlength="6" data-autofocus>`
    : '';
  const body = `<h1 id="title">${esc(is3ds ? t.title3ds : t.titleRedirect)}</h1>
<p class="sandbox">${esc(en.sandboxNotice)}</p>
<p>${esc(is3ds ? t.body3ds(SANDBOX_OTP) : t.bodyRedirect)}</p>
<form method="post" action="${esc(action)}">
${code}
<button type="submit" name="decision" value="confirm" id="confirm">${esc(t.confirm)}</button>
<button type="submit" name="decision" value="refuse" id="refuse" class="secondary" formnovalidate>${esc(t.refuse)}</button>
</form>`;
  return layout({ nonce }, undefined, is3ds ? t.title3ds : t.titleRedirect, body);
}
