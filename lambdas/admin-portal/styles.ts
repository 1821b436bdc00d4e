/** The portal's stylesheet: plain, dense, readable; colours meet WCAG AA contrast. */
export const portalStyles = `
:root{color-scheme:light dark;--fg:#1a1a1a;--muted:#4a4a4a;--line:#c8c8c8;--bg:#f6f7f9;--accent:#0b5cad;--danger:#a4001d;--ok:#0a6b2d;--on-accent:#fff;--surface:#fff;--field:#fff;--field-line:#767676;--alert:#b00020;--alert-bg:#fff5f5;--row-alt:#fafbfc;--head:#eef0f3;--chip:#e6e9ee;--chip-ok:#dcefe3;--chip-dead:#f7dde2;--broken:#8a0018;--broken-bg:#fff0f0}
@media (prefers-color-scheme:dark){:root{--fg:#e8eaed;--muted:#b6bbc3;--line:#3b4048;--bg:#121417;--accent:#8ab4f8;--danger:#ff8a80;--ok:#7fd99a;--on-accent:#0b1a2e;--surface:#1d2024;--field:#15171a;--field-line:#8d939c;--alert:#ff9c94;--alert-bg:#2a1517;--row-alt:#181b1f;--head:#262a30;--chip:#2f343b;--chip-ok:#16321f;--chip-dead:#3a1a1f;--broken:#ffb4ab;--broken-bg:#2a1517}}
*{box-sizing:border-box}
[hidden]{display:none!important}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--surface);padding:.5rem;z-index:2}
.top{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;padding:.75rem 1rem;background:var(--surface);border-bottom:1px solid var(--line)}
.brand{font-weight:700;margin:0}
nav{display:flex;gap:1rem;flex-wrap:wrap}
nav a{color:var(--accent);text-decoration:none;padding:.25rem 0}
nav a[aria-current=page]{font-weight:700;border-bottom:2px solid var(--accent)}
.who{margin:0 0 0 auto;color:var(--muted)}
main{padding:1rem;max-width:80rem;margin:0 auto}
h1{font-size:1.35rem;margin:.25rem 0 1rem}
h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
.status{min-height:1.5rem;margin-bottom:.5rem}
.status.error{color:var(--danger);font-weight:600}
.status.ok{color:var(--ok);font-weight:600}
form.filters,form.settings,form.signin{display:grid;gap:.75rem;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));align-items:end;background:var(--surface);padding:1rem;border:1px solid var(--line);border-radius:.375rem}
form.signin{max-width:24rem;grid-template-columns:1fr}
label{display:block;font-weight:600;font-size:.9rem;margin-bottom:.2rem}
.hint{display:block;font-weight:400;color:var(--muted);font-size:.8rem}
input,select,textarea{width:100%;font:inherit;padding:.4rem .5rem;border:1px solid var(--field-line);border-radius:.25rem;background:var(--field);color:var(--fg)}
input[type=checkbox]{width:auto}
textarea{min-height:6rem;font-family:ui-monospace,monospace;font-size:.85rem}
button{font:inherit;padding:.45rem .8rem;border-radius:.25rem;border:1px solid var(--accent);background:var(--accent);color:var(--on-accent);cursor:pointer}
button.secondary{background:var(--surface);color:var(--accent)}
button.danger{background:var(--danger);border-color:var(--danger)}
button.link{background:none;border:0;color:var(--accent);padding:0;text-decoration:underline}
button:disabled{opacity:.6;cursor:not-allowed}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
table{width:100%;border-collapse:collapse;background:var(--surface);border:1px solid var(--line);margin:.5rem 0}
caption{text-align:left;font-weight:600;padding:.5rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--head);font-size:.85rem}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.mono{font-family:ui-monospace,monospace;font-size:.85rem;word-break:break-all}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin:.5rem 0}
.actions input{width:8rem}
.actions label{display:flex;align-items:center;gap:.4rem;margin:0}
.actions label input{width:auto}
.actions .danger-zone{display:flex;gap:.5rem;margin-left:auto;padding-left:1.5rem;border-left:1px solid var(--line)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;background:var(--surface);border:1px solid var(--line);padding:1rem;margin:0}
dl.facts dt{font-weight:600}dl.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}
.pager{display:flex;gap:.5rem;margin:.5rem 0}
.badge{display:inline-block;padding:0 .4rem;border-radius:.25rem;background:var(--chip);font-size:.85rem}
.badge.state-delivered{background:var(--chip-ok);color:var(--ok)}
.badge.state-dead{background:var(--chip-dead);color:var(--danger)}
.scroll{overflow-x:auto;max-width:100%;margin:.5rem 0}
.scroll>table{margin:0}
td.time{white-space:nowrap}
details summary{cursor:pointer;color:var(--accent)}
details table{font-size:.85rem}
tr.history>td{padding-top:0;background:var(--row-alt)}
details td{white-space:nowrap}details td.mono{word-break:normal}
section>.hint{margin:0 0 .5rem}
.alert{border:2px solid var(--alert);border-radius:.375rem;padding:.75rem;color:var(--alert);background:var(--alert-bg)}
tr.over td{background:var(--alert-bg)}
tr.broken>td{background:var(--broken-bg);color:var(--broken)}
dialog.confirm{max-width:min(36rem,calc(100vw - 2rem));border:1px solid var(--line);border-radius:.375rem;padding:1rem 1.25rem;color:var(--fg);background:var(--surface)}
dialog.confirm::backdrop{background:rgba(0,0,0,.45)}
dialog.confirm h2{margin-top:0}dialog.confirm ul{padding-left:1.2rem}
.status ul{margin:.25rem 0 0;padding-left:1.2rem;font-weight:400}
td.diff ul{margin:0;padding-left:1rem}td.diff del{color:var(--danger)}td.diff ins{color:var(--ok);text-decoration:none;font-weight:600}td.diff .field{font-family:ui-monospace,monospace;font-size:.85rem}
p.count{margin:.5rem 0 0;color:var(--muted)}
section.credentials{background:var(--surface);border:1px solid var(--line);border-left:4px solid var(--ok);border-radius:.375rem;padding:.75rem 1rem;margin:1rem 0}
section.credentials input{font-family:ui-monospace,Menlo,Consolas,monospace}
time[title]{text-decoration:underline dotted;text-underline-offset:2px}
@media (max-width:40rem){table.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0,0,0,0)}
table.cards,table.cards caption,table.cards tbody,table.cards tr,table.cards td{display:block;width:100%}
table.cards tr{border-bottom:2px solid var(--line);padding:.25rem 0}
table.cards td{display:flex;gap:.75rem;justify-content:space-between;border:0;text-align:right;padding:.2rem .5rem}
table.cards td::before{content:attr(data-label);font-weight:600;text-align:left;flex:none}
table.cards td.mono,table.cards td a.mono{word-break:break-all}}
@media (max-width:40rem){th,td{padding:.3rem}.who{margin-left:0}dl.facts{grid-template-columns:minmax(0,1fr)}dl.facts dd{margin-bottom:.35rem}}
.menu{display:none}
details.filter-fold{margin:0 0 .5rem}
details.filter-fold>summary{font-weight:600;padding:.5rem 0}
@media (min-width:40.01rem){details.filter-fold>summary{display:none}}
@media (max-width:40rem){.top{gap:.5rem;padding:.5rem .75rem}
.top .menu{display:inline-block;order:1;margin-left:auto}
.top nav{order:2;flex-basis:100%;display:none;grid-template-columns:1fr 1fr;gap:0 1rem}
.top.menu-open nav{display:grid}
.top nav a{padding:.5rem 0}
.who{order:3;flex-basis:100%}
table.cards td{overflow-wrap:anywhere;white-space:normal;min-width:0}
table.cards td:not([data-label]){display:block;text-align:left}
table.cards td:not([data-label])::before{content:none}
table.cards td>*{min-width:0}}
`;
