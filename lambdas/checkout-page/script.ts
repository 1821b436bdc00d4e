import { HOLDER_PATTERN, cardBrandPatterns, luhnValid } from '../domain/card';
import { jsonForScript } from './html';
import { EMAIL_PATTERN } from '../domain/contact';

/**
 * The page's only script (inlined with the CSP nonce). It validates live with the same rules and
 * messages as the server, which stays authoritative, and collects the browser data 3-D Secure 2
 * needs. The page works without it. A field marked invalid is checked again as it is corrected, so
 * its message goes away while typing; a field left by a press on Pay is checked by the submit, not
 * its blur, and every message has its line reserved (styles.ts), so nothing moves under the pointer.
 */
export const clientScript = () => `(function(){
"use strict";
var luhn=(${luhnValid.toString()});
var holderRe=new RegExp(${jsonForScript(HOLDER_PATTERN.source)},'u'),emailRe=new RegExp(${jsonForScript(EMAIL_PATTERN.source)});
var brands=${jsonForScript(cardBrandPatterns())}.map(function(b){return [b[0],new RegExp(b[1])]});
var form=document.getElementById('pay-form');
if(!form)return;
var texts=JSON.parse(document.getElementById('texts').textContent);
function $(id){return document.getElementById(id)}
function set(id,v){var e=$(id);if(e)e.value=v}
set('browser_language',navigator.language||'');
set('browser_screen_width',String(screen.width));
set('browser_screen_height',String(screen.height));
set('browser_color_depth',String(screen.colorDepth));
set('browser_tz_offset',String(new Date().getTimezoneOffset()));
set('browser_java',String(typeof navigator.javaEnabled==='function'&&navigator.javaEnabled()));
function digits(s){return s.replace(/[\\s-]/g,'')}
function brandOf(pan){for(var i=0;i<brands.length;i++){if(brands[i][1].test(pan))return brands[i][0]}return ''}
var rules={
 card_number:function(v){var d=digits(v);return /^\\d{14,19}$/.test(d)&&luhn(d)&&brandOf(d)?'':texts.number},
 card_expiry:function(v){if(!v.trim())return texts.expiryMissing;var m=/^\\s*(\\d{1,2})\\s*\\/\\s*(\\d{2}|\\d{4})\\s*$/.exec(v);if(!m)return texts.expiry;var mo=+m[1],y=m[2].length===2?2000+ +m[2]:+m[2];var n=new Date();if(mo<1||mo>12||y<n.getFullYear()||(y===n.getFullYear()&&mo<n.getMonth()+1))return texts.expiry;return ''},
 card_cvv:function(v){return /^\\d{3,4}$/.test(v.trim())?'':texts.cvv},
 card_holder:function(v){var h=v.trim().replace(/\\s+/g,' ');return h.length<=32&&h.split(' ').length>=2&&holderRe.test(h)?'':texts.holder},
 email:function(v){return emailRe.test(v.trim())?'':texts.email},
 country:function(v){return v?'':texts.country}
};
function usingSavedCard(){var r=form.querySelector('input[name=saved_card]:checked');return r&&r.value!=='new'}
function check(name){var el=form.elements[name];if(!el||!rules[name])return '';if(name.indexOf('card_')===0&&usingSavedCard()){show(el,'');return ''}var msg=rules[name](el.value);show(el,msg);return msg}
function show(el,msg){var err=$(el.id+'-error');el.setAttribute('aria-invalid',msg?'true':'false');if(err)err.textContent=msg;if(el===number)brandLine()}
var number=form.elements.card_number;
// Amex 4-6-5 and Diners 4-6-4, as printed on the card; every other brand in fours.
function grouped(d,b){var g=b==='amex'?[4,6,5]:b==='diners'?[4,6,4]:0;if(!g)return d.replace(/(\\d{4})(?=\\d)/g,'$1 ');var out=[],i=0;for(var k=0;k<g.length&&i<d.length;k++){out.push(d.slice(i,i+g[k]));i+=g[k]}if(i<d.length)out.push(d.slice(i));return out.join(' ')}
// The brand's mark is lit as the number is typed; its name is not announced beside an error about the number.
function brandLine(){var d=digits(number.value),b=d.length>=2?brandOf(d):'',m=$('brand-marks');if(m){if(b)m.setAttribute('data-brand',b);else m.removeAttribute('data-brand');Array.prototype.forEach.call(m.children,function(li){if(li.getAttribute('data-mark')===b)li.setAttribute('data-on','');else li.removeAttribute('data-on')})}$('card-brand').textContent=b&&d.length>=4&&number.getAttribute('aria-invalid')!=='true'?texts.brand.replace('%s',b.toUpperCase()):''}
if(number){number.addEventListener('input',function(){var d=digits(number.value).slice(0,19);var out=grouped(d,brandOf(d));if(out!==number.value)number.value=out;brandLine()})}
var exp=form.elements.card_expiry;
// MM/YY and MM/YYYY, typed or pasted, with or without the slash: a slash the customer typed is kept
// where it is (1/38 stays 1/38), digits alone get one after the month (012038 -> 01/2038, 4 -> 04/).
if(exp){exp.addEventListener('input',function(e){if(e.inputType&&e.inputType.indexOf('delete')===0)return;var v=exp.value,s=v.indexOf('/'),out;if(s>=0){out=v.slice(0,s).replace(/\\D/g,'').slice(0,2)+'/'+v.slice(s+1).replace(/\\D/g,'').slice(0,4)}else{var d=v.replace(/\\D/g,'').slice(0,6);out=d.length===1&&d>'1'?'0'+d+'/':d.length>=2?d.slice(0,2)+'/'+d.slice(2):d}if(out!==v)exp.value=out})}
// A press on Pay blurs the field being left before the click lands: its check waits for the submit,
// so no message appears above the button while the pointer is on it.
var pressing=false,pay=$('pay-button');
if(pay){pay.addEventListener('pointerdown',function(){pressing=true;setTimeout(function(){pressing=false},1000)})}
Object.keys(rules).forEach(function(name){var el=form.elements[name];if(el){el.addEventListener('blur',function(e){if(el.value&&!pressing&&e.relatedTarget!==pay)check(name)});el.addEventListener('change',function(){if(!pressing)check(name)});el.addEventListener('input',function(){if(el.getAttribute('aria-invalid')==='true')check(name)})}});
form.addEventListener('submit',function(e){
 var first=null,bad=0;
 Object.keys(rules).forEach(function(name){if(form.elements[name]&&check(name)){bad++;if(!first)first=form.elements[name]}});
 var summary=$('error-summary');
 if(bad){e.preventDefault();summary.hidden=false;summary.textContent=texts.summary;first.focus();return}
 var b=$('pay-button');if(b.getAttribute('data-busy')){e.preventDefault();return}
 b.setAttribute('data-busy','1');b.setAttribute('aria-disabled','true');b.textContent=texts.processing;
});
var cardFields=$('card-fields');
function toggleCard(){if(cardFields&&cardFields.getAttribute('data-saved'))cardFields.hidden=usingSavedCard()}
Array.prototype.forEach.call(form.querySelectorAll('input[name=saved_card]'),function(r){r.addEventListener('change',toggleCard)});
toggleCard();
var focus=document.querySelector('[data-autofocus]');if(focus)focus.focus();
})();`;

/** Sends the customer on in the browsing context the merchant asked for (url_target). */
export const navigateScript = (url: string, target: string) => `(function(){
var url=${jsonForScript(url)},target=${jsonForScript(target)};
try{
 if(target==='_top'){window.top.location.href=url}
 else if(target==='_parent'){window.parent.location.href=url}
 else if(target==='_self'){window.location.href=url}
 else{var w=window.open(url,target);if(!w)return}
}catch(e){}
})();`;

/**
 * The processing page's script: it asks our record of the payment (the JSON at `status`) whether
 * the outcome is in, backing off as the plan in the page says, and once it is goes to `check`
 * (/complete), which leads on as a payment does: success_url, the decline, or a final decline's
 * cancel_url. It stops at the plan's end and says so in the page's live region; "Check again"
 * stays. A failed look (network, 5xx) is just tried again later.
 */
export const processingScript = () => `(function(){
"use strict";
var el=document.getElementById('poll');if(!el)return;
var p=JSON.parse(el.textContent),line=document.getElementById('processing-status');
var started=Date.now(),delay=p.firstDelayMs;
function stall(){if(line)line.textContent=p.stalled}
function later(){if(Date.now()-started+delay>p.stopAfterMs){stall();return}setTimeout(look,delay);delay=Math.min(p.maxDelayMs,delay*p.factor)}
function look(){
 fetch(p.status,{cache:'no-store',credentials:'same-origin',headers:{accept:'application/json'}})
 .then(function(r){if(r.status===404)return {state:'done'};return r.ok?r.json():null})
 .then(function(s){if(s&&s.state==='done')window.location.replace(p.check);else later()},later);
}
later();
})();`;
