import { esc, jsonForScript } from './html';
import type { Texts } from './texts/en';

/** Minutes before a link expires at which the page (with scripts) says so in its live region. */
export const EXPIRY_WARNING_MINUTES = 5;

/**
 * When the link stops taking payments, as the language writes it: the time alone on the same UTC
 * day, else the date too; in UTC, named (the server does not know the customer's zone).
 */
export function validUntilText(expiresAt: Date, now: Date, locale: string): string {
  const sameDay = expiresAt.toISOString().slice(0, 10) === now.toISOString().slice(0, 10);
  const format = new Intl.DateTimeFormat(locale, { ...(sameDay ? {} : { dateStyle: 'medium' as const }), timeStyle: 'short', timeZone: 'UTC' });
  return `${format.format(expiresAt)} UTC`;
}

/**
 * The form's word on its link's expiry (the session's `session_expiry`, an hour by default): the
 * time it is valid until, in the page without scripts; with scripts that time in the customer's own
 * zone, and a polite live warning EXPIRY_WARNING_MINUTES before the end, again at the last minute
 * and at the end. The script counts from the time left as the server saw it when it rendered the
 * page, so a customer's clock that is wrong does not move the warning.
 */
export function linkExpiry(expiresAtIso: string | undefined, now: Date | undefined, t: Texts): { validUntil: string; warning: string; script: string } {
  const expiresAt = expiresAtIso ? new Date(expiresAtIso) : undefined;
  if (!expiresAt || Number.isNaN(expiresAt.getTime()) || !now) return { validUntil: '', warning: '', script: '' };
  const data = {
    at: expiresAt.getTime(),
    inMs: Math.max(0, expiresAt.getTime() - now.getTime()),
    warnMinutes: EXPIRY_WARNING_MINUTES,
    until: t.linkExpiry.validUntil('%s'),
    soon: Array.from({ length: EXPIRY_WARNING_MINUTES }, (_, i) => t.linkExpiry.endsSoon(i + 1)),
    over: `${t.expiredTitle}. ${t.expiredBody}`,
  };
  return {
    validUntil: `<p class="muted expiry" id="link-expiry">${esc(t.linkExpiry.validUntil(validUntilText(expiresAt, now, t.lang)))}</p>
<script type="application/json" id="expiry">${jsonForScript(data)}</script>`,
    warning: '<p class="expiry-warning" id="expiry-warning" role="status" aria-live="polite"></p>',
    script: expiryScript(),
  };
}

const expiryScript = () => `(function(){
"use strict";
var el=document.getElementById('expiry'),line=document.getElementById('expiry-warning'),until=document.getElementById('link-expiry');
if(!el||!line)return;
var e=JSON.parse(el.textContent),ends=Date.now()+e.inMs,warnMs=e.warnMinutes*60000;
try{var d=new Date(e.at),o=d.toDateString()===new Date().toDateString()?{hour:'numeric',minute:'2-digit'}:{dateStyle:'medium',timeStyle:'short'};until.textContent=e.until.replace('%s',new Intl.DateTimeFormat(document.documentElement.lang,o).format(d))}catch(x){}
function tick(){
 var left=ends-Date.now();
 if(left<=0){line.textContent=e.over;return}
 if(left<=warnMs)line.textContent=e.soon[Math.min(e.warnMinutes,Math.ceil(left/60000))-1];
 setTimeout(tick,(left>warnMs?left-warnMs:left>60000?left-60000:left)+50);
}
tick();
})();`;
