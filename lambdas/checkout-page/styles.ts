import { MIN_BUTTON_CONTRAST, contrastWithWhite } from '../domain/branding';

/** The page's only stylesheet, inlined with the CSP nonce. Colours meet WCAG AA contrast. */
export const styles = (primary: string) => `
:root{color-scheme:light dark;--primary:${primary};--text:#1a1a1a;--muted:#4a4a4a;--error:#b00020;--border:#767676;--bg:#f4f5f7;--panel:#fff;--field:#fff;--alert-bg:#fff5f5;--line:#d0d4da;--done:#0a6b2d;--accent:${primary}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:30rem;margin:0 auto;padding:1rem}
.panel{background:var(--panel);border-radius:.5rem;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
header{display:flex;flex-direction:column;gap:.25rem;margin-bottom:1rem}
header img{max-height:3rem;max-width:12rem;object-fit:contain;align-self:flex-start}
h1{font-size:1.25rem;margin:0}
.amount{font-size:1.75rem;font-weight:700;margin:0}
.muted{color:var(--muted);margin:0}
h1,.muted{overflow-wrap:anywhere}
.description summary{cursor:pointer}
.description p{margin:.25rem 0 0}
fieldset{border:0;padding:0;margin:0 0 1rem}
legend{font-weight:600;margin-bottom:.5rem;padding:0}
label{display:block;font-weight:500;margin:.75rem 0 .25rem}
.hint{display:block;font-size:.875rem;color:var(--muted)}
input,select{width:100%;font:inherit;padding:.625rem .75rem;border:1px solid var(--border);border-radius:.375rem;background:var(--field);color:var(--text)}
input:focus,select:focus,button:focus,a:focus,summary:focus{outline:3px solid var(--accent);outline-offset:2px}
input[aria-invalid=true],select[aria-invalid=true]{border-color:var(--error);box-shadow:inset 0 0 0 1px var(--error)}
.row{display:grid;grid-template-columns:1fr 1fr;grid-template-rows:repeat(4,auto);column-gap:.75rem}
.row>div{display:grid;grid-row:span 4;grid-template-rows:subgrid;min-width:0}
.row label{align-self:end}
.error{color:var(--error);font-size:.875rem;line-height:1.25rem;margin:.125rem 0 0;min-height:1.25rem}
.alert{border:2px solid var(--error);border-radius:.375rem;padding:.75rem;margin-bottom:1rem;color:var(--error);background:var(--alert-bg)}
.alert:focus{outline:3px solid var(--error)}
.alert p{margin:0}.alert p+p{margin-top:.25rem}
.brand{font-size:.875rem;line-height:1.25rem;color:var(--muted);min-height:1.25rem;margin:.25rem 0 0}
.marks{display:flex;flex-wrap:wrap;gap:.375rem;list-style:none;margin:0 0 .25rem;padding:0}
.marks svg{display:block;width:2.25rem;height:1.5rem}
.marks[data-brand] li{opacity:.3}.marks li[data-on]{opacity:1}
.choice{display:flex;align-items:center;gap:.5rem;margin:.5rem 0;font-weight:400}
.choice input{width:auto}
button,.button{display:block;width:100%;font:inherit;font-weight:600;padding:.75rem 1rem;border:0;border-radius:.375rem;background:var(--primary);color:#fff;cursor:pointer;text-align:center;text-decoration:none;margin-top:1rem}
button[disabled]{opacity:.7;cursor:progress}
.secondary{background:transparent;color:var(--accent);border:1px solid var(--primary)}
.visually-hidden{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
footer{margin-top:1rem;font-size:.875rem;color:var(--muted);text-align:center}
footer p{margin:0}footer a{color:inherit}
.expiry{font-size:.875rem;margin-top:.75rem}.expiry-warning{margin:0}.expiry-warning:not(:empty){margin-top:1rem}
.done{font-size:1.25rem;font-weight:600;color:var(--done)}
.receipt{border:1px solid var(--line);border-radius:.375rem;padding:.75rem;margin:1rem 0}
.receipt h2{font-size:1rem;margin:0 0 .5rem}
.receipt dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem;margin:0}
.receipt dt{color:var(--muted)}.receipt dd{margin:0;overflow-wrap:anywhere}
.sandbox{margin-bottom:1rem}
.sandbox,.expiry-warning:not(:empty){background:#fff8e1;border:1px solid #8a6d00;color:#5c4800;border-radius:.375rem;padding:.5rem .75rem;font-size:.875rem}
@media (prefers-color-scheme:dark){:root{--text:#e8eaed;--muted:#b6bbc3;--error:#ff9c94;--border:#8d939c;--bg:#121417;--panel:#1d2024;--field:#15171a;--alert-bg:#2a1517;--line:#3b4048;--done:#7fd99a;--accent:#e8eaed}
.sandbox,.expiry-warning:not(:empty){background:#2b2410;border-color:#b08f1a;color:#f3d98b}}
@media (max-width:360px){main{padding:.5rem}.panel{padding:.875rem}.row{grid-template-columns:1fr;grid-template-rows:none}.row>div{grid-row:auto;grid-template-rows:none}.amount{font-size:1.5rem}}
`;

/**
 * A merchant colour is used only when it keeps white button text readable. Settings refuse a
 * lighter one when it is set; one stored before that rule still falls back here.
 */
export function safePrimary(color: string | undefined): string {
  const fallback = '#0b5cad';
  if (!color || !/^#[0-9a-fA-F]{6}$/.test(color)) return fallback;
  return contrastWithWhite(color) >= MIN_BUTTON_CONTRAST ? color : fallback;
}
