// @ts-nocheck -- browser code, serialized into the page with Function.prototype.toString; it must not use imports or module-level names.
/**
 * The portal's browser script. Runs in the operator's browser only. `hosted` is hosted-sign-in.ts's
 * PKCE flow, for the deployments that sign in on Cognito's pages.
 */
export function portalClient(hosted) {
  'use strict';
  var STATUSES = JSON.parse(document.getElementById('statuses').textContent);
  var SIGN_IN = JSON.parse(document.getElementById('sign-in').textContent);
  var view = document.getElementById('view');
  var statusBox = document.getElementById('status');
  var store = window.sessionStorage;
  // The admin routes behind each kind of button (lib/routes.ts): the portal shows a button only if
  // GET /admin/api/session lists its route for the operator's role; the API refuses it anyway.
  var ROUTE = {
    act: 'POST /admin/api/payments/{paymentId}/{action}',
    bulk: 'POST /admin/api/capture-queue/bulk',
    resend: 'POST /admin/api/payments/{paymentId}/callbacks/{index}/resend',
    resendDead: 'POST /admin/api/merchants/{merchantKey}/callbacks/resend-dead',
    settings: 'PUT /admin/api/merchants/{merchantKey}',
    createMerchant: 'POST /admin/api/merchants',
    rotatePassword: 'POST /admin/api/merchants/{merchantKey}/password',
    rotateWebhookSecret: 'POST /admin/api/merchants/{merchantKey}/webhook-secret',
    exportPayments: 'GET /admin/api/payments/export'
  };

  function el(tag, attrs) {
    var node = document.createElement(tag);
    var kids = Array.prototype.slice.call(arguments, 2);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) return;
      if (k === 'text') node.textContent = String(v);
      else if (k.indexOf('on') === 0) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? '' : String(v));
    });
    (function add(list) {
      list.forEach(function (c) {
        if (c === undefined || c === null || c === false) return;
        // Children may come as lists (rows, options, cells), nested as deep as the caller built them.
        if (Array.isArray(c)) return add(c);
        node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
      });
    })(kids);
    return node;
  }
  /** The status line; `details` lists one line each below it (what a bulk action did to each payment). */
  function say(text, kind, details) {
    statusBox.textContent = text || '';
    statusBox.className = 'status' + (kind ? ' ' + kind : '');
    if (details && details.length) statusBox.appendChild(el('ul', null, details.map(function (d) { return el('li', { text: d }); })));
  }
  /**
   * Asks before money moves: a modal dialog naming every payment and amount the action touches.
   * Resolves true on the confirm button only; Cancel, Escape and closing answer false.
   */
  function confirmMoney(title, lines, confirmLabel, danger) {
    return new Promise(function (resolve) {
      var answered = false;
      var id = 'confirm-' + Math.random().toString(36).slice(2);
      var dialog = el('dialog', { class: 'confirm', 'aria-labelledby': id },
        el('h2', { id: id, text: title }),
        el('ul', null, lines.map(function (l) { return el('li', { text: l }); })),
        el('div', { class: 'actions' },
          el('button', { type: 'button', class: danger ? 'danger' : null, text: confirmLabel, onclick: function () { answered = true; dialog.close(); } }),
          el('button', { type: 'button', class: 'secondary', text: 'Cancel', onclick: function () { dialog.close(); } })));
      dialog.addEventListener('close', function () { dialog.remove(); resolve(answered); });
      document.body.appendChild(dialog);
      dialog.showModal();
    });
  }
  /**
   * What an operator typed ("1", "1.5", "1,50"), written with the payment's decimals for the
   * confirmation; the API reads it the same way. Anything else is shown as typed (the API refuses it).
   */
  function typedAmount(typed, like) {
    var decimals = (String(like).split('.')[1] || '').length;
    var m = /^\s*(\d+)(?:[.,](\d*))?\s*$/.exec(typed);
    if (!m || (m[2] || '').length > decimals) return typed.trim();
    return String(Number(m[1])) + (decimals ? '.' + (m[2] || '').padEnd(decimals, '0') : '');
  }
  function paymentName(p) { return 'order ' + p.order_number + ' (payment ' + p.payment_id + ')'; }
  function heading(text) {
    var h = el('h1', { text: text, tabindex: '-1' });
    return h;
  }
  function show(title) {
    var nodes = Array.prototype.slice.call(arguments, 1);
    view.textContent = '';
    var h = heading(title);
    view.appendChild(h);
    nodes.forEach(function (n) { if (n) view.appendChild(n); });
    document.title = title + ' – Checkout operations';
    h.focus();
  }
  function token() { return store.getItem('operator-token'); }
  function session() {
    try { return JSON.parse(store.getItem('operator-session') || 'null'); } catch (e) { return null; }
  }
  function may(route) { var s = session(); return Boolean(s && s.routes && s.routes.indexOf(route) >= 0); }
  function forget() {
    store.removeItem('operator-token');
    store.removeItem('operator-session');
  }
  function signOut(message) {
    forget();
    renderChrome();
    location.hash = '#/sign-in';
    if (message) say(message, 'error');
  }
  function problemText(body) {
    if (!body) return 'The request failed.';
    if (body.errors && body.errors.length) return body.errors.map(function (e) { return e.error_message; }).join(' ');
    return body.error_message || body.message || 'The request failed.';
  }
  // Each route() starts a new view; a read made for an earlier one is dropped when it comes back,
  // so a slow answer never paints over the page the operator has moved on to.
  var generation = 0;
  /**
   * One call of the admin API with the operator's token: the JSON answer, or with `csv` the text and
   * headers of a CSV answer. A refusal throws its text; a 401 signs the operator out.
   */
  function api(method, path, body, csv) {
    var asked = generation;
    var headers = { accept: csv ? 'text/csv' : 'application/json' };
    if (token()) headers.authorization = 'Bearer ' + token();
    if (body !== undefined) headers['content-type'] = 'application/json';
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' }).then(function (res) {
      var read = csv && res.ok ? res.text() : res.json().catch(function () { return {}; });
      return read.then(function (answer) {
        if (res.status === 401 && !(method === 'POST' && path === '/admin/api/session')) { signOut('Your session has ended. Sign in again.'); throw new Error('signed out'); }
        if (method === 'GET' && asked !== generation) return new Promise(function () {});
        if (!res.ok) { var err = new Error(problemText(answer)); err.body = answer; err.status = res.status; err.retryAfter = Number(res.headers.get('retry-after')) || 0; throw err; }
        return csv ? { text: answer, headers: res.headers } : answer;
      });
    });
  }
  function fail(e) { if (e && e.message !== 'signed out') say(e.message, 'error'); }
  function renderChrome() {
    var signedIn = Boolean(token());
    document.getElementById('nav').hidden = !signedIn;
    document.getElementById('who').hidden = !signedIn;
    var s = session();
    document.getElementById('who-name').textContent = signedIn && s ? 'Signed in as ' + s.username + ' (' + s.role + ')' : '';
    var current = (location.hash.split('/')[1] || '');
    Array.prototype.forEach.call(document.querySelectorAll('[data-nav]'), function (a) {
      if (a.getAttribute('data-nav') === current) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    });
  }
  function field(label, input, hint) {
    var id = input.id || ('f-' + Math.random().toString(36).slice(2));
    input.id = id;
    return el('div', null, el('label', { for: id }, label, hint ? el('span', { class: 'hint', text: hint }) : null), input);
  }
  function cell(text, cls) { return el('td', { class: cls, text: text === undefined || text === null ? '' : text }); }
  var tables = 0;
  function table(caption, columns, rows) {
    var id = 'table-' + (++tables);
    // A wide table scrolls sideways inside its own focusable region, so the page never has to (320 px screens).
    return el('div', { class: 'scroll', role: 'region', 'aria-labelledby': id, tabindex: '0' }, el('table', null, el('caption', { id: id, text: caption }),
      el('thead', null, el('tr', null, columns.map(function (c) { return el('th', { scope: 'col', text: c }); }))),
      el('tbody', null, rows.length ? rows : [el('tr', null, el('td', { colspan: String(columns.length), text: 'Nothing to show.' }))])));
  }
  // Times in the operator's own time zone (the browser's), written alike everywhere; UTC on hover.
  var CLOCK = new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
  function utc(iso) { return iso ? iso.replace('T', ' ').slice(0, 19) + ' UTC' : ''; }
  function when(iso) {
    if (!iso) return '';
    var part = {};
    CLOCK.formatToParts(new Date(iso)).forEach(function (x) { part[x.type] = x.value; });
    return part.year + '-' + part.month + '-' + part.day + ' ' + part.hour + ':' + part.minute + ':' + part.second + ' ' + part.timeZoneName;
  }
  function timeCell(iso, cls) {
    return el('td', { class: cls || 'time' }, iso ? el('time', { datetime: iso, title: utc(iso), text: when(iso) }) : null);
  }
  function merchantCell(p) { return p.merchant_name ? el('td', { title: p.merchant_key, text: p.merchant_name }) : cell(p.merchant_key, 'mono'); }
  function paymentLink(id) { return el('a', { href: '#/payments/' + encodeURIComponent(id), class: 'mono', text: id }); }
  function query(params) {
    return Object.keys(params).filter(function (k) { return params[k]; }).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]); }).join('&');
  }

  // Sign in
  /**
   * With a token: who it is, their role and the routes it allows (GET /admin/api/session); then the
   * payments, or the page the tab was on (`stay`).
   */
  function startSession(accessToken, stay) {
    store.setItem('operator-token', accessToken);
    return api('GET', '/admin/api/session').then(function (s) {
      store.setItem('operator-session', JSON.stringify(s));
      say('');
      if (stay || location.hash === '#/payments') route(); else location.hash = '#/payments';
    }, function (e) {
      if (e.message === 'signed out') throw e;
      forget();
      renderChrome();
      throw new Error(e.body && e.body.error_code === 403000 ? 'Your operator account has no role in the portal yet: ask an administrator to give you one.' : e.message);
    });
  }
  function signInView() {
    if (SIGN_IN.kind === 'cognito') return hostedSignInView();
    var user = el('input', { name: 'username', autocomplete: 'username', required: true });
    var pass = el('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
    var form = el('form', { class: 'signin', novalidate: true, onsubmit: function (e) {
      e.preventDefault();
      if (!user.value || !pass.value) { say('Enter your user name and password.', 'error'); (user.value ? pass : user).focus(); return; }
      say('Signing in…');
      api('POST', '/admin/api/session', { username: user.value, password: pass.value }).then(function (r) {
        return startSession(r.token);
      }).catch(function (e) {
        say(e.message, 'error');
        pass.value = '';
        pass.focus();
      });
    } }, field('User name', user), field('Password', pass), el('div', null, el('button', { type: 'submit', text: 'Sign in' })));
    show('Sign in', form);
  }
  /** Cognito's sign-in pages: password and authenticator code there, then back here with a code for the token. */
  function hostedSignInView() {
    var button = el('button', { type: 'button', text: 'Sign in', onclick: function () {
      button.disabled = true;
      var verifier = hosted.newSecret();
      var state = hosted.newSecret();
      store.setItem('pkce-verifier', verifier);
      store.setItem('pkce-state', state);
      hosted.authorizeUrl(SIGN_IN, verifier, state).then(function (url) { location.assign(url); });
    } });
    show('Sign in', el('p', { text: 'Operators sign in on the sign-in page of this deployment, with their password and the code of their authenticator app (set up at the first sign-in).' }), el('div', null, button));
  }
  /** The sign-in pages sent the operator back with ?code=…&state=… (or ?error=…). */
  function finishHostedSignIn(params) {
    var verifier = store.getItem('pkce-verifier');
    var state = store.getItem('pkce-state');
    store.removeItem('pkce-verifier');
    store.removeItem('pkce-state');
    // The code is single-use and must not stay in the address bar or the history.
    history.replaceState(null, '', location.pathname + '#/sign-in');
    route();
    if (params.get('error')) return say('Sign-in failed: ' + (params.get('error_description') || params.get('error')), 'error');
    if (!verifier || !state || params.get('state') !== state) return say('This sign-in was not started in this tab. Sign in again.', 'error');
    say('Signing in…');
    var request = hosted.tokenRequest(SIGN_IN, params.get('code'), verifier);
    fetch(request.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: request.body, credentials: 'omit' }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (json) {
        if (!res.ok || !json.id_token) throw new Error('Sign-in failed: ' + (json.error || res.status) + '. Sign in again.');
        return startSession(json.id_token);
      });
    }).catch(fail);
  }

  // Payments
  var SEARCH_FIELDS = ['order', 'payment_id', 'email', 'last4', 'amount', 'status', 'merchant', 'from', 'to'];
  function paymentsView(params) {
    var inputs = {
      order: el('input', { name: 'order', value: params.order || '' }),
      payment_id: el('input', { name: 'payment_id', value: params.payment_id || '', class: 'mono' }),
      email: el('input', { name: 'email', type: 'search', value: params.email || '' }),
      last4: el('input', { name: 'last4', inputmode: 'numeric', maxlength: '4', value: params.last4 || '' }),
      amount: el('input', { name: 'amount', inputmode: 'decimal', value: params.amount || '' }),
      status: el('select', { name: 'status' }, el('option', { value: '', text: 'Any' }), STATUSES.map(function (s) { return el('option', { value: s, text: s, selected: params.status === s }); })),
      merchant: el('input', { name: 'merchant', value: params.merchant || '' }),
      from: el('input', { name: 'from', type: 'date', value: params.from || '' }),
      to: el('input', { name: 'to', type: 'date', value: params.to || '' })
    };
    var form = el('form', { class: 'filters', role: 'search', onsubmit: function (e) {
      e.preventDefault();
      var next = {};
      SEARCH_FIELDS.forEach(function (k) { next[k] = inputs[k].value.trim(); });
      location.hash = '#/payments?' + query(next);
    } },
      field('Order number', inputs.order, 'or part of it'), field('Payment id', inputs.payment_id, 'or its first characters'),
      field('Customer e-mail', inputs.email, 'or part of it'), field('Card last four', inputs.last4), field('Amount', inputs.amount, 'e.g. 25 or 25.00'),
      field('Status', inputs.status), field('Merchant', inputs.merchant, 'name or key'),
      field('From', inputs.from, 'UTC day'), field('To', inputs.to, 'UTC day'),
      el('div', null, el('button', { type: 'submit', text: 'Search' })));
    var results = el('div', { 'aria-busy': 'true' });
    show('Payments', form, results);
    var search = {};
    SEARCH_FIELDS.concat(['cursor']).forEach(function (k) { if (params[k]) search[k] = params[k]; });
    // The cursors of the pages before this one, so "Previous page" can go back ("-" is the first page).
    var back = params.back ? params.back.split(',') : [];
    api('GET', '/admin/api/payments?' + query(search)).then(function (r) {
      results.removeAttribute('aria-busy');
      var pageNo = back.length + 1;
      results.appendChild(el('p', { class: 'count', id: 'result-count', text: r.payments.length
        ? 'Page ' + pageNo + ': ' + r.payments.length + (r.payments.length === 1 ? ' payment' : ' payments') + (r.cursor ? ', more on the next page.' : (pageNo > 1 ? ', the last page of this search.' : '.'))
        : (r.cursor ? 'Page ' + pageNo + ': no match among the payments read so far; the next page reads on.' : 'No payments match this search.') }));
      var columns = ['Created', 'Payment id', 'Merchant', 'Order', 'Amount', 'Status', 'Reason'];
      var rows = r.payments.map(function (p) {
        var cells = [timeCell(p.created_at), el('td', null, paymentLink(p.payment_id)), merchantCell(p), cell(p.order_number),
          cell(p.amount + ' ' + p.currency, 'num'), el('td', null, el('span', { class: 'badge', text: p.status })), cell(p.reason)];
        // Each cell names its column, for the stacked layout of a phone.
        cells.forEach(function (c, i) { c.setAttribute('data-label', columns[i]); });
        return el('tr', null, cells);
      });
      var list = table('Payments, newest first', columns, rows);
      list.querySelector('table').className = 'cards';
      results.appendChild(list);
      var pager = el('nav', { class: 'pager', 'aria-label': 'Pages' });
      function go(cursor, stack) {
        var p = Object.assign({}, search);
        delete p.cursor;
        if (cursor) p.cursor = cursor;
        if (stack.length) p.back = stack.join(',');
        location.hash = '#/payments?' + query(p);
      }
      if (back.length) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Previous page', onclick: function () {
        var stack = back.slice(0, -1);
        var prev = back[back.length - 1];
        go(prev === '-' ? '' : prev, stack);
      } }));
      if (r.cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Next page', onclick: function () {
        go(r.cursor, back.concat([params.cursor || '-']));
      } }));
      results.appendChild(pager);
      var total = el('p', { class: 'count', id: 'result-total', 'aria-live': 'polite' });
      results.insertBefore(total, list);
      if (r.payments.length || r.cursor) countMatches(search, total); else total.remove();
      if (may(ROUTE.exportPayments) && (r.payments.length || r.cursor)) {
        var exporting = el('button', { type: 'button', class: 'secondary', text: 'Download CSV', onclick: function () { exportMatches(search, exporting); } });
        pager.appendChild(exporting);
      }
    }).catch(fail);
  }

  /**
   * The search's total: the count endpoint does a bounded part per request and says where to go
   * on; asked again until it is complete, the running total shown meanwhile.
   */
  function countMatches(search, line) {
    var params = Object.assign({}, search);
    delete params.cursor;
    line.textContent = 'Counting the payments that match…';
    function step(cursor, requests, waits) {
      api('GET', '/admin/api/payments/count?' + query(Object.assign({}, params, cursor ? { cursor: cursor } : {}))).then(function (c) {
        if (c.complete) { line.textContent = plural(c.total, 'payment matches', 'payments match') + ' this search in all.'; return; }
        line.textContent = 'Counting… ' + c.total.toLocaleString('en') + ' so far.';
        if (requests < 200) step(c.cursor, requests + 1, 0); else line.textContent = 'More than ' + c.total.toLocaleString('en') + ' payments match this search.';
      }).catch(function (e) {
        // Busy with this operator's other counts or exports: the same part again after Retry-After.
        if (whenBusy(e, waits, function (text) { line.textContent = text; }, function () { step(cursor, requests, waits + 1); })) return;
        line.textContent = '';
        fail(e);
      });
    }
    step('', 1, 0);
  }

  /**
   * A count or export refused because the operator's other ones are running (429 with Retry-After):
   * says so and asks again after the wait, a bounded number of times. False for any other refusal
   * (a search too broad to answer in time is shown as its message says: narrow the search).
   */
  function whenBusy(e, waits, show, again) {
    if (!e || e.status !== 429 || waits >= 20) return false;
    var seconds = Math.min(Math.max(e.retryAfter || 2, 1), 30);
    show('Your other counts or exports are still running: trying again in ' + plural(seconds, 'second', 'seconds') + '…');
    setTimeout(again, seconds * 1000);
    return true;
  }

  /**
   * The search as a CSV file: part after part (each a bounded read on the server, the next named by
   * X-Next-Cursor), joined into one file the browser saves. Nothing is kept but the parts so far.
   */
  function exportMatches(search, button) {
    var params = Object.assign({}, search);
    delete params.cursor;
    var parts = [];
    var rows = 0;
    button.disabled = true;
    say('Exporting…');
    function step(cursor, waits) {
      // A part for a page the operator has left never comes back: the export ends with the page.
      api('GET', '/admin/api/payments/export?' + query(Object.assign({}, params, cursor ? { cursor: cursor } : {})), undefined, true).then(function (part) {
        parts.push(part.text);
        rows += Number(part.headers.get('x-export-rows') || 0);
        var next = part.headers.get('x-next-cursor');
        if (next) { say('Exporting… ' + plural(rows, 'payment', 'payments') + ' so far.'); return step(next, 0); }
        var name = 'payments-' + (params.from || 'recent') + (params.to ? '-to-' + params.to : '') + '.csv';
        var url = URL.createObjectURL(new Blob(parts, { type: 'text/csv;charset=utf-8' }));
        var link = el('a', { href: url, download: name, hidden: true });
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
        button.disabled = false;
        say('Exported ' + plural(rows, 'payment', 'payments') + ' to ' + name + '.', 'ok');
      }).catch(function (e) {
        if (whenBusy(e, waits, function (text) { say(text); }, function () { step(cursor, waits + 1); })) return;
        button.disabled = false;
        fail(e);
      });
    }
    step('', 0);
  }

  /** New credentials, shown once: each in a read-only field to select and copy. */
  function credentialsPanel(title, values) {
    var id = 'credentials-' + Math.random().toString(36).slice(2);
    return el('section', { class: 'credentials', 'aria-labelledby': id }, el('h2', { id: id, tabindex: '-1', text: title }),
      el('p', { class: 'hint', text: 'Copy these now and hand them to the merchant over a safe channel: they are not shown again.' }),
      values.map(function (v) { return field(v[0], el('input', { readonly: true, class: 'mono', value: v[1], spellcheck: 'false', autocomplete: 'off' })); }));
  }

  function amountInput(label, value, hint) {
    return field(label, el('input', { inputmode: 'decimal', value: value || '' }), hint);
  }

  function actionButtons(p, after) {
    var box = el('div', { class: 'actions' });
    function run(action, amountField, question) {
      var amount = amountField ? amountField.querySelector('input').value.trim() : '';
      if (amountField && !amount) { say('Enter the amount to ' + action + '.', 'error'); amountField.querySelector('input').focus(); return; }
      var shown = amount ? typedAmount(amount, p.amount) + ' ' + p.currency : p.amount + ' ' + p.currency;
      var q = question(shown);
      confirmMoney(q[0], q[1], q[2], q[3]).then(function (yes) {
        if (!yes) { say(action + ' cancelled: nothing was sent.'); return; }
        say('Working…');
        Array.prototype.forEach.call(box.querySelectorAll('button'), function (b) { b.disabled = true; });
        api('POST', '/admin/api/payments/' + encodeURIComponent(p.payment_id) + '/' + action, amount ? { amount: amount } : {}).then(function (r) {
          say(action + ' ' + shown + ': ' + r.outcome + (r.message ? ' – ' + r.message : '') + ' (status ' + r.status + ')', r.outcome === 'done' ? 'ok' : 'error');
          after();
        }).catch(function (e) { fail(e); after(); });
      });
    }
    var who = paymentName(p);
    if (p.actions.indexOf('capture') >= 0) {
      var capAmount = amountInput('Capture amount (' + p.currency + ')', p.amount, 'At most ' + p.amount);
      box.appendChild(capAmount);
      box.appendChild(el('button', { type: 'button', text: 'Capture', onclick: function () {
        run('capture', capAmount, function (shown) { return ['Capture ' + shown + '?', ['Capture ' + shown + ' of the ' + p.amount + ' ' + p.currency + ' authorized for ' + who + '.', 'The rest of the authorization, if any, is released.'], 'Capture ' + shown]; });
      } }));
    }
    if (p.actions.indexOf('release') >= 0) box.appendChild(el('button', { type: 'button', class: 'danger', text: 'Release', onclick: function () {
      run('release', null, function (shown) { return ['Release ' + shown + '?', ['Release the whole authorization of ' + shown + ' for ' + who + '.', 'Nothing of it can be captured afterwards.'], 'Release ' + shown, true]; });
    } }));
    if (p.actions.indexOf('void') >= 0) box.appendChild(el('button', { type: 'button', class: 'danger', text: 'Void', onclick: function () {
      var paid = (p.captured_amount || p.amount) + ' ' + p.currency;
      run('void', null, function () { return ['Void ' + paid + '?', ['Void ' + who + ': the whole ' + paid + ' goes back to the customer.'], 'Void ' + paid, true]; });
    } }));
    if (p.actions.indexOf('refund') >= 0) {
      var refAmount = amountInput('Refund amount (' + p.currency + ')', p.left_to_refund, 'Left to refund: ' + p.left_to_refund);
      box.appendChild(refAmount);
      box.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Refund', onclick: function () {
        run('refund', refAmount, function (shown) { return ['Refund ' + shown + '?', ['Refund ' + shown + ' of ' + who + ' to the customer.', 'Left to refund now: ' + p.left_to_refund + ' ' + p.currency + '.'], 'Refund ' + shown, true]; });
      } }));
    }
    if (!may(ROUTE.act)) return el('p', { text: 'Your role may look at payments but not act on them.' });
    return p.actions.length ? box : el('p', { text: 'No operator action applies to this payment now.' });
  }

  function auditTable(caption, entries, breaks) {
    var brokenAt = {};
    (breaks || []).forEach(function (b) { brokenAt[b.day + '#' + b.break.seq] = b.break; });
    return table(caption, ['When', 'Who', 'Role', 'What', 'Target', 'Outcome', 'Change'], entries.map(function (a) {
      var target = a.targetKind === 'payment' ? paymentLink(a.target) : el('a', { href: '#/merchants/' + encodeURIComponent(a.target.replace(/^merchant:/, '')), class: 'mono', text: a.target });
      var broken = brokenAt[String(a.at).slice(0, 10) + '#' + a.seq];
      return el('tr', broken ? { class: 'broken', 'data-chain': 'broken' } : null, cell(when(a.at) + (broken ? ' — chain broken here (' + broken.problem + ')' : '')), cell(a.actor), cell(a.actorRole), cell(a.action), el('td', null, target), cell(a.outcome + (a.detail ? ': ' + a.detail : '')),
        el('td', { class: 'diff' }, changeList(a.before, a.after)));
    }));
  }
  /** An entry's change as one line per field that differs: "field: before → after" (— for none). */
  function changeList(before, after) {
    var b = before || {};
    var a = after || {};
    function shown(v) { return v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v); }
    var keys = Object.keys(b).concat(Object.keys(a).filter(function (k) { return !(k in b); }));
    var lines = keys.filter(function (k) { return JSON.stringify(b[k]) !== JSON.stringify(a[k]); }).map(function (k) {
      return el('li', null, el('span', { class: 'field', text: k + ': ' }), before ? el('del', { text: shown(b[k]) }) : null, before ? ' → ' : null, el('ins', { text: shown(a[k]) }));
    });
    return lines.length ? el('ul', null, lines) : (before || after ? 'no change' : '');
  }

  function chainAlert(breaks) {
    if (!breaks || !breaks.length) return null;
    return el('p', { class: 'alert', role: 'alert', text: breaks.map(function (b) {
      return 'The audit chain of ' + b.day + ' is broken at entry ' + b.break.seq + ' (' + b.break.problem + '): an entry was changed, removed or reordered after it was written. Run npm run merchant -- verify-audit ' + b.day + '.';
    }).join(' ') });
  }

  // Callbacks
  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : many); }

  var CALLBACK_COLUMNS = ['No.', 'Type', 'Status', 'State', 'Attempts', 'Last attempt', 'HTTP status', 'Latency (ms)', 'Error', 'Next attempt', 'Action'];

  // The history gets a row of its own under its callback, as wide as the table, so opening it
  // does not stretch one column of the callbacks table.
  function attemptHistoryRow(c) {
    if (!c.attempts.length) return null;
    var n = c.index + 1;
    // Only the most recent attempts are kept; the count covers them all.
    var kept = c.attempts.length < c.attempt_count ? ' (the last ' + c.attempts.length + ')' : '';
    return el('tr', { class: 'history' }, el('td', { colspan: String(CALLBACK_COLUMNS.length) }, el('details', null,
      el('summary', { text: 'Attempt history of callback ' + n + ' (' + plural(c.attempt_count, 'attempt', 'attempts') + ')' }),
      table('Delivery attempts of callback ' + n + kept, ['Time', 'HTTP status', 'Latency (ms)', 'Error', 'URL'], c.attempts.map(function (a) {
        return el('tr', null, timeCell(a.at), cell(a.httpStatus === undefined ? 'no answer' : String(a.httpStatus), 'num'), cell(String(a.latencyMs), 'num'), cell(a.error), cell(a.url, 'mono'));
      })))));
  }

  /** The payment's callbacks, one row per transaction; reloads itself after a resend. */
  function callbacksSection(paymentId) {
    var title = el('h2', { id: 'callbacks-title', tabindex: '-1', text: 'Callbacks' });
    var body = el('div');
    var section = el('section', { 'aria-labelledby': 'callbacks-title' }, title,
      el('p', { class: 'hint', text: 'One server-to-server callback per transaction, posted to the merchant\'s notification URL. A failed one is tried again for 24 hours, then it is dead.' }), body);
    var path = '/admin/api/payments/' + encodeURIComponent(paymentId) + '/callbacks';
    /**
     * Asks first, naming what the merchant will receive again; a callback whose order status is not
     * the payment's now is sent only after the operator has read that warning (the API asks the same).
     */
    function resend(c, button) {
      var n = c.index + 1;
      var lines = ['Type: ' + c.type, 'Status: ' + c.status, 'Amount: ' + c.amount + ' ' + c.currency, 'Order status it reports: ' + c.order_status];
      if (c.contradiction) lines.push('Warning: ' + c.contradiction);
      confirmMoney('Resend callback ' + n + ' to the merchant?', lines, 'Resend callback ' + n, Boolean(c.contradiction)).then(function (yes) {
        if (!yes) return;
        button.disabled = true;
        say('Queuing callback ' + n + '…');
        api('POST', path + '/' + c.index + '/resend', c.contradiction ? { contradiction_confirmed: true } : {}).then(function (r) {
          if (r.outcome === 'queued') say('Callback ' + n + ' (' + c.type + '/' + c.status + ', ' + c.amount + ' ' + c.currency + ') queued: the callback job sends it again on its next run.', 'ok');
          else say('Callback ' + n + ' is already waiting to be sent.', 'error');
          load(true);
        }).catch(function (e) { fail(e); load(true); });
      });
    }
    function load(focus) {
      body.setAttribute('aria-busy', 'true');
      api('GET', path).then(function (r) {
        body.textContent = '';
        body.removeAttribute('aria-busy');
        var rows = r.callbacks.map(function (c) {
          var last = c.attempts.length ? c.attempts[c.attempts.length - 1] : null;
          // Not offered: a callback waiting to be sent says so by its state; any other says why.
          var waiting = c.state === 'pending' || c.state === 'not-sent';
          var action = c.resendable && may(ROUTE.resend)
            ? el('button', { type: 'button', class: 'secondary', text: 'Resend', 'aria-label': 'Resend callback ' + (c.index + 1), onclick: function (e) { resend(c, e.currentTarget); } })
            : (!c.resendable && !waiting && c.not_resendable_reason ? el('span', { class: 'hint', text: c.not_resendable_reason }) : null);
          return [el('tr', null, cell(String(c.index + 1), 'num'), cell(c.type), cell(c.status), el('td', null, el('span', { class: 'badge state-' + c.state, text: c.state })),
            cell(String(c.attempt_count), 'num'), cell(last ? when(last.at) : '', 'time'), cell(last && last.httpStatus !== undefined ? String(last.httpStatus) : (last ? 'no answer' : ''), 'num'),
            cell(last ? String(last.latencyMs) : '', 'num'), cell(c.last_error || (last && last.error) || ''), timeCell(c.next_attempt_at), el('td', null, action)), attemptHistoryRow(c)];
        });
        body.appendChild(table('Callbacks of this payment', CALLBACK_COLUMNS, rows));
        if (focus) title.focus();
      }).catch(function (e) { body.removeAttribute('aria-busy'); fail(e); });
    }
    load(false);
    return section;
  }

  /** A merchant's dead callbacks, oldest first, and a button that queues them all again. */
  function deadCallbacksSection(key) {
    var title = el('h2', { id: 'dead-callbacks-title', tabindex: '-1', text: 'Dead callbacks' });
    var body = el('div');
    var resendAll = el('button', { type: 'button', text: 'Resend all dead callbacks', hidden: true, onclick: function () {
      resendAll.disabled = true;
      say('Queuing dead callbacks…');
      api('POST', '/admin/api/merchants/' + encodeURIComponent(key) + '/callbacks/resend-dead', {}).then(function (r) {
        say(plural(r.queued, 'dead callback', 'dead callbacks') + ' queued to be sent again.' + (r.more ? ' More are left: press the button again.' : ''), 'ok');
        resendAll.disabled = false;
        load(undefined, true);
      }).catch(function (e) { resendAll.disabled = false; fail(e); });
    } });
    var section = el('section', { 'aria-labelledby': 'dead-callbacks-title' }, title,
      el('p', { class: 'hint', text: 'Callbacks still failing 24 hours after their first attempt. Resent callbacks are sent on the next run of the callback job.' }),
      el('div', { class: 'actions' }, resendAll), body);
    function load(cursor, focus) {
      body.setAttribute('aria-busy', 'true');
      api('GET', '/admin/api/merchants/' + encodeURIComponent(key) + '/callbacks/dead' + (cursor ? '?' + query({ cursor: cursor }) : '')).then(function (r) {
        body.textContent = '';
        body.removeAttribute('aria-busy');
        resendAll.hidden = !may(ROUTE.resendDead) || (!r.callbacks.length && !cursor);
        var rows = r.callbacks.map(function (c) {
          return el('tr', null, timeCell(c.dead_at), el('td', null, paymentLink(c.payment_id)), cell(String(c.index + 1), 'num'), cell(c.type), cell(c.status),
            cell(String(c.attempt_count), 'num'), cell(c.last_error));
        });
        body.appendChild(table('Dead callbacks, oldest first', ['Dead since', 'Payment id', 'No.', 'Type', 'Status', 'Attempts', 'Last error'], rows));
        var pager = el('div', { class: 'pager' });
        if (cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'First dead callbacks', onclick: function () { load(undefined, true); } }));
        if (r.cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'More dead callbacks', onclick: function () { load(r.cursor, true); } }));
        body.appendChild(pager);
        if (focus) title.focus();
      }).catch(function (e) { body.removeAttribute('aria-busy'); fail(e); });
    }
    load();
    return section;
  }

  function paymentView(id) {
    show('Payment');
    api('GET', '/admin/api/payments/' + encodeURIComponent(id)).then(function (r) {
      var p = r.payment;
      var facts = el('dl', { class: 'facts' });
      [['Payment id', p.payment_id], ['Status', p.status + (p.reason ? ' – ' + p.reason : '')], ['Merchant', p.merchant_key], ['Order', p.order_number],
        ['Amount', p.amount + ' ' + p.currency], ['Description', p.description], ['Customer', (p.customer.name || '') + (p.customer.email ? ' <' + p.customer.email + '>' : '')],
        ['Card', p.card ? p.card.brand + ' ' + p.card.mask + ' ' + p.card.expiry : ''], ['Created', when(p.created_at)], ['Authorization expires', when(p.authorization_expires_at)],
        ['Captured', p.captured_amount], ['Refunded', p.refunded_amount], ['Void possible until', when(p.voidable_until)]].forEach(function (f) {
        if (f[1]) { facts.appendChild(el('dt', { text: f[0] })); facts.appendChild(el('dd', { text: f[1] })); }
      });
      var tx = table('Transactions', ['When', 'Type', 'Status', 'Amount', 'Transaction id', 'Reason', 'By'], r.transactions.map(function (t) {
        return el('tr', null, timeCell(t.at), cell(t.type), cell(t.status), cell(t.amount + ' ' + p.currency, 'num'), cell(t.transId, 'mono'), cell(t.reason), cell(t.actor));
      }));
      show('Payment ' + p.order_number, facts, el('h2', { text: 'Actions' }), actionButtons(p, function () { paymentView(id); }), tx, callbacksSection(p.payment_id), auditTable('Operator actions', r.audit));
    }).catch(fail);
  }

  // Capture queue
  function queueView() {
    show('Capture queue');
    api('GET', '/admin/api/capture-queue').then(function (r) {
      // A viewer sees the queue; capturing and releasing are the operator role's.
      var acting = may(ROUTE.act) && may(ROUTE.bulk);
      var boxes = [];
      var amounts = {};
      var byId = {};
      var rows = r.payments.map(function (p) {
        var box = el('input', { type: 'checkbox', value: p.payment_id, 'aria-label': 'Select ' + p.order_number });
        boxes.push(box);
        var amount = el('input', { inputmode: 'decimal', value: p.amount, 'aria-label': 'Capture amount for ' + p.order_number });
        amounts[p.payment_id] = amount;
        byId[p.payment_id] = p;
        function act(action) {
          var typed = amount.value.trim();
          if (action === 'capture' && !typed) { say('Enter the amount to capture for ' + p.order_number + '.', 'error'); amount.focus(); return; }
          var shown = (action === 'capture' ? typedAmount(typed, p.amount) : p.amount) + ' ' + p.currency;
          var question = action === 'capture'
            ? ['Capture ' + shown + '?', ['Capture ' + shown + ' of the ' + p.amount + ' ' + p.currency + ' authorized for ' + paymentName(p) + '.'], 'Capture ' + shown]
            : ['Release ' + shown + '?', ['Release the whole authorization of ' + shown + ' for ' + paymentName(p) + '.'], 'Release ' + shown, true];
          confirmMoney(question[0], question[1], question[2], question[3]).then(function (yes) {
            if (!yes) { say(action + ' cancelled: nothing was sent.'); return; }
            say('Working…');
            api('POST', '/admin/api/payments/' + encodeURIComponent(p.payment_id) + '/' + action, action === 'capture' ? { amount: typed } : {}).then(function (res) {
              queueView();
              say(p.order_number + ' ' + action + ' ' + shown + ': ' + res.outcome + (res.message ? ' – ' + res.message : ''), res.outcome === 'done' ? 'ok' : 'error');
            }).catch(fail);
          });
        }
        if (!acting) {
          return el('tr', null, timeCell(p.authorization_expires_at), el('td', null, paymentLink(p.payment_id)), merchantCell(p), cell(p.order_number), cell(p.amount + ' ' + p.currency, 'num'));
        }
        return el('tr', null, el('td', null, box), timeCell(p.authorization_expires_at), el('td', null, paymentLink(p.payment_id)), merchantCell(p), cell(p.order_number),
          cell(p.amount + ' ' + p.currency, 'num'), el('td', null, el('div', { class: 'actions' }, amount,
            el('button', { type: 'button', text: 'Capture', onclick: function () { act('capture'); } }),
            el('button', { type: 'button', class: 'danger', text: 'Release', onclick: function () { act('release'); } }))));
      });
      /**
       * Capture or release the ticked rows: a capture sends each row's own amount box. The dialog
       * lists every payment and amount first; the result names each payment that was not done, and why.
       */
      function bulk(action) {
        var ids = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
        if (!ids.length) { say('Select at least one payment.', 'error'); return; }
        var sent = {};
        var empty = ids.filter(function (id) { return !amounts[id].value.trim(); });
        if (action === 'capture' && empty.length) { say('Enter the amount to capture for ' + byId[empty[0]].order_number + '.', 'error'); amounts[empty[0]].focus(); return; }
        var lines = ids.map(function (id) {
          var p = byId[id];
          if (action === 'release') return p.order_number + ': release ' + p.amount + ' ' + p.currency + ' (payment ' + id + ')';
          sent[id] = amounts[id].value.trim();
          var shown = typedAmount(sent[id], p.amount);
          return p.order_number + ': capture ' + shown + ' ' + p.currency + (shown === p.amount ? '' : ' of ' + p.amount) + ' (payment ' + id + ')';
        });
        var verb = action === 'capture' ? 'Capture' : 'Release';
        var title = verb + ' ' + ids.length + (ids.length === 1 ? ' payment?' : ' payments?');
        confirmMoney(title, lines, verb + ' ' + ids.length, action === 'release').then(function (yes) {
          if (!yes) { say(action + ' cancelled: nothing was sent.'); return; }
          say('Working on ' + ids.length + ' payments…');
          api('POST', '/admin/api/capture-queue/bulk', action === 'capture' ? { action: action, payment_ids: ids, amounts: sent } : { action: action, payment_ids: ids }).then(function (res) {
            var notDone = res.results.filter(function (x) { return x.outcome !== 'done'; });
            queueView();
            var summary = (action === 'capture' ? 'Captured ' : 'Released ') + (res.results.length - notDone.length) + ' of ' + res.results.length + '.';
            say(notDone.length ? summary + ' Not done:' : summary, notDone.length ? 'error' : 'ok', notDone.map(function (x) {
              var p = byId[x.payment_id];
              return (p ? p.order_number + ' (payment ' + x.payment_id + ')' : 'payment ' + x.payment_id) + ': ' + x.outcome + (x.message ? ' – ' + x.message : '');
            }));
          }).catch(fail);
        });
      }
      var selectAll = el('input', { type: 'checkbox', id: 'select-all', onchange: function () { boxes.forEach(function (b) { b.checked = selectAll.checked; }); } });
      var bulkBar = el('div', { class: 'actions' }, el('label', { for: 'select-all' }, selectAll, ' Select all'),
        el('button', { type: 'button', text: 'Capture selected', onclick: function () { bulk('capture'); } }),
        el('button', { type: 'button', class: 'danger', text: 'Release selected', onclick: function () { bulk('release'); } }));
      var columns = acting ? ['Select', 'Expires', 'Payment id', 'Merchant', 'Order', 'Amount', 'Capture or release'] : ['Expires', 'Payment id', 'Merchant', 'Order', 'Amount'];
      show('Capture queue', el('p', { text: r.payments.length + ' authorizations waiting, the soonest to expire first.' }), acting ? bulkBar : null,
        table('Authorizations waiting for capture', columns, rows));
    }).catch(fail);
  }

  // Merchants
  function merchantsView() {
    show('Merchants');
    api('GET', '/admin/api/merchants').then(function (r) {
      show('Merchants', table('Merchants by name', ['Name', 'Merchant key', 'DMS', 'Auto capture', 'Return parameters'], r.merchants.map(function (m) {
        return el('tr', null, el('td', null, el('a', { href: '#/merchants/' + encodeURIComponent(m.merchant_key), text: m.name })), cell(m.merchant_key, 'mono'),
          cell(m.dms ? 'on' : 'off'), cell(m.autoCaptureDelayMinutes === undefined ? 'manual' : m.autoCaptureDelayMinutes + ' min'), cell(m.returnParams ? 'on' : 'off'));
      })), may(ROUTE.createMerchant) ? newMerchantForm() : null);
    }).catch(fail);
  }

  /** An admin creates a merchant: its key, signing password and webhook secret are shown once. */
  function newMerchantForm() {
    var name = el('input', { name: 'name', required: true, maxlength: '64', autocomplete: 'off' });
    var key = el('input', { name: 'merchant_key', class: 'mono', maxlength: '64', autocomplete: 'off' });
    var dms = el('input', { name: 'dms', type: 'checkbox' });
    var out = el('div');
    var form = el('form', { class: 'settings', novalidate: true, onsubmit: function (e) {
      e.preventDefault();
      if (!name.value.trim()) { say('Enter the merchant\'s name.', 'error'); name.focus(); return; }
      var body = { name: name.value.trim(), dms: dms.checked };
      if (key.value.trim()) body.merchant_key = key.value.trim();
      say('Creating the merchant…');
      api('POST', '/admin/api/merchants', body).then(function (c) {
        form.reset();
        out.textContent = '';
        var panel = credentialsPanel('Merchant ' + body.name + ' created', [['Merchant key', c.merchant_key], ['Signing password', c.password], ['Webhook secret', c.webhook_secret]]);
        panel.appendChild(el('p', null, el('a', { href: '#/merchants/' + encodeURIComponent(c.merchant_key), text: 'Open the settings of ' + body.name })));
        out.appendChild(panel);
        say('Merchant ' + body.name + ' created.', 'ok');
        panel.querySelector('h2').focus();
      }).catch(fail);
    } },
      field('Name', name), field('Merchant key', key, 'Optional: letters, digits and hyphens; a random one when empty'),
      field('Two-stage payments (DMS)', dms, 'Payments are authorized, then captured'),
      el('div', null, el('button', { type: 'submit', text: 'Create merchant' })));
    return el('section', { 'aria-labelledby': 'new-merchant-title' }, el('h2', { id: 'new-merchant-title', text: 'New merchant' }), form, out);
  }

  /**
   * An admin rotates the merchant's signing password or webhook secret, after confirming; the new
   * value is shown once.
   */
  function credentialsSection(key, name) {
    var out = el('div');
    function rotate(what) {
      var password = what === 'password';
      var lines = password
        ? ['The new password works at once. The current one stops working within minutes (when the service\'s cached copy expires): the merchant must switch to the new one now.']
        : ['Callbacks are signed with the new secret at once. The current secret keeps signing beside it for 24 hours, so the merchant\'s receiver can switch without missing a callback.'];
      var label = password ? 'Rotate signing password' : 'Rotate webhook secret';
      confirmMoney(label + ' of ' + name + '?', lines, label, true).then(function (yes) {
        if (!yes) { say('Nothing was changed.'); return; }
        say('Rotating…');
        api('POST', '/admin/api/merchants/' + encodeURIComponent(key) + '/' + (password ? 'password' : 'webhook-secret'), {}).then(function (r) {
          out.textContent = '';
          var panel = password
            ? credentialsPanel('New signing password', [['Signing password', r.password]])
            : credentialsPanel('New webhook secret', [['Webhook secret', r.webhook_secret]]);
          if (r.previous_valid_until) panel.appendChild(el('p', { class: 'hint', text: 'The previous secret signs too until ' + when(r.previous_valid_until) + '.' }));
          out.appendChild(panel);
          say(password ? 'Signing password rotated.' : 'Webhook secret rotated.', 'ok');
          panel.querySelector('h2').focus();
        }).catch(fail);
      });
    }
    var buttons = el('div', { class: 'actions' },
      may(ROUTE.rotatePassword) ? el('button', { type: 'button', class: 'danger', text: 'Rotate signing password', onclick: function () { rotate('password'); } }) : null,
      may(ROUTE.rotateWebhookSecret) ? el('button', { type: 'button', class: 'danger', text: 'Rotate webhook secret', onclick: function () { rotate('webhook'); } }) : null);
    return el('section', { 'aria-labelledby': 'credentials-title' }, el('h2', { id: 'credentials-title', text: 'Credentials' }),
      el('p', { class: 'hint', text: 'The signing password checks the merchant\'s requests; the webhook secret signs the callbacks it receives. Neither is shown after it is made.' }),
      buttons, out);
  }

  function merchantView(key) {
    show('Merchant');
    api('GET', '/admin/api/merchants/' + encodeURIComponent(key)).then(function (r) {
      var s = r.settings;
      var f = {
        name: el('input', { name: 'name', value: s.name || '', required: true }),
        dms: el('input', { name: 'dms', type: 'checkbox', checked: Boolean(s.dms) }),
        delay: el('input', { name: 'auto_capture_delay_minutes', inputmode: 'numeric', value: s.autoCaptureDelayMinutes === undefined ? '' : String(s.autoCaptureDelayMinutes) }),
        returnParams: el('input', { name: 'return_params', type: 'checkbox', checked: Boolean(s.returnParams) }),
        notificationUrl: el('input', { name: 'notification_url', type: 'url', value: s.notificationUrl || '' }),
        methods: el('input', { name: 'methods', value: (s.methods || []).join(', ') }),
        maxDeclines: el('input', { name: 'max_declines', inputmode: 'numeric', value: String(s.maxDeclines || 3) }),
        color: el('input', { name: 'primary_color', value: (s.branding && s.branding.primaryColor) || '', placeholder: '#0b5cad' }),
        logo: el('input', { name: 'logo_url', type: 'url', value: (s.branding && s.branding.logoUrl) || '' }),
        frames: el('input', { name: 'frame_ancestors', value: (s.frameAncestors || []).join(', ') }),
        rules: el('textarea', { name: 'pre_routing' }, JSON.stringify((s.preRouting || []).map(function (x) {
          var o = { methods: x.methods };
          if (x.currency) o.currency = x.currency;
          if (x.minAmountMinor !== undefined) o.min_amount_minor = x.minAmountMinor;
          if (x.maxAmountMinor !== undefined) o.max_amount_minor = x.maxAmountMinor;
          return o;
        }), null, 2))
      };
      function list(v) { return v.split(',').map(function (x) { return x.trim(); }).filter(Boolean); }
      // Only an admin changes settings: anyone else sees them in a disabled form, without Save.
      var editable = may(ROUTE.settings);
      var form = el('form', { class: 'settings', novalidate: true, onsubmit: function (e) {
        e.preventDefault();
        if (!editable) return;
        var rules;
        try { rules = f.rules.value.trim() ? JSON.parse(f.rules.value) : null; } catch (err) { say('Pre-routing rules must be JSON.', 'error'); f.rules.focus(); return; }
        var body = {
          name: f.name.value.trim(), dms: f.dms.checked, return_params: f.returnParams.checked,
          auto_capture_delay_minutes: f.delay.value.trim() === '' ? null : Number(f.delay.value),
          notification_url: f.notificationUrl.value.trim() || null,
          methods: list(f.methods.value).length ? list(f.methods.value) : null,
          max_declines: Number(f.maxDeclines.value),
          branding: f.color.value.trim() || f.logo.value.trim() ? { primary_color: f.color.value.trim() || null, logo_url: f.logo.value.trim() || null } : null,
          frame_ancestors: list(f.frames.value).length ? list(f.frames.value) : null,
          pre_routing: rules && rules.length ? rules : null
        };
        say('Saving…');
        api('PUT', '/admin/api/merchants/' + encodeURIComponent(key), body).then(function () {
          merchantView(key);
          say('Settings saved.', 'ok');
        }).catch(fail);
      } },
        field('Name', f.name), field('Two-stage payments (DMS)', f.dms, 'Payments are authorized, then captured'),
        field('Automatic capture delay', f.delay, 'Minutes after authorization; empty = manual capture only'),
        field('Return parameters', f.returnParams, 'Append payment_id, trans_id, order_id, hash to the return URLs'),
        field('Notification URL', f.notificationUrl), field('Payment methods', f.methods, 'Comma separated, e.g. card'),
        field('Declines before cancel', f.maxDeclines), field('Brand colour', f.color, '#RRGGBB'), field('Logo URL', f.logo, 'https only'),
        field('Allowed framing origins', f.frames, 'Comma separated, e.g. https://shop.example'),
        field('Pre-routing rules', f.rules, 'JSON list of {"currency", "min_amount_minor", "max_amount_minor", "methods"}'),
        editable ? el('div', null, el('button', { type: 'submit', text: 'Save settings' })) : el('p', { class: 'hint', text: 'Only an admin can change these settings.' }));
      if (!editable) Object.keys(f).forEach(function (k) { f[k].disabled = true; });
      var rotating = may(ROUTE.rotatePassword) || may(ROUTE.rotateWebhookSecret);
      show('Merchant ' + (s.name || key), el('p', { class: 'mono', text: key }), form, rotating ? credentialsSection(key, s.name || key) : null, deadCallbacksSection(key), auditTable('Settings changes', r.audit));
    }).catch(fail);
  }

  // Audit
  function auditView(params) {
    var inputs = {
      actor: el('input', { name: 'actor', value: params.actor || '' }),
      action: el('input', { name: 'action', value: params.action || '' }),
      target: el('input', { name: 'target', value: params.target || '', class: 'mono' })
    };
    var form = el('form', { class: 'filters', role: 'search', onsubmit: function (e) {
      e.preventDefault();
      location.hash = '#/audit?' + query({ actor: inputs.actor.value.trim(), action: inputs.action.value.trim(), target: inputs.target.value.trim() });
    } }, field('Who', inputs.actor, 'user name or cli:login, or part of it'), field('Action', inputs.action, 'e.g. payment.refund or merchant.'),
      field('Target', inputs.target, 'payment id or merchant:<key>'), el('div', null, el('button', { type: 'submit', text: 'Filter' })));
    show('Audit log', form);
    var filters = { actor: params.actor, action: params.action, target: params.target };
    api('GET', '/admin/api/audit?' + query(Object.assign({}, filters, { cursor: params.cursor }))).then(function (r) {
      var pager = el('div', { class: 'pager' });
      if (params.cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Newest', onclick: function () { location.hash = '#/audit?' + query(filters); } }));
      if (r.cursor) pager.appendChild(el('button', { type: 'button', class: 'secondary', text: 'Older entries', onclick: function () { location.hash = '#/audit?' + query(Object.assign({}, filters, { cursor: r.cursor })); } }));
      show('Audit log', el('p', { text: 'Every operator action, newest first. Entries cannot be changed or removed; each day\'s entries form a hash chain that shows any change.' }), form, chainAlert(r.breaks), auditTable('Operator actions', r.entries, r.breaks), pager);
    }).catch(fail);
  }

  function route() {
    // Only '#/…' is a route; any other fragment (the skip link's '#main') is not a page to show.
    if (location.hash && location.hash.indexOf('#/') !== 0) return;
    generation++;
    // A tab signed in before its session was read (a reload meanwhile): read it first.
    if (token() && !session()) {
      var kept = token();
      startSession(kept, true).catch(function (e) { if (e.message !== 'signed out') { say(e.message, 'error'); location.hash = '#/sign-in'; } });
      return;
    }
    renderChrome();
    var hash = location.hash || '#/payments';
    var parts = hash.slice(2).split('?');
    var path = parts[0].split('/');
    var params = {};
    new URLSearchParams(parts[1] || '').forEach(function (v, k) { params[k] = v; });
    if (!token()) { if (path[0] !== 'sign-in') { location.hash = '#/sign-in'; return; } return signInView(); }
    say('');
    if (path[0] === 'payments' && path[1]) return paymentView(decodeURIComponent(path[1]));
    if (path[0] === 'queue') return queueView();
    if (path[0] === 'merchants' && path[1]) return merchantView(decodeURIComponent(path[1]));
    if (path[0] === 'merchants') return merchantsView();
    if (path[0] === 'audit') return auditView(params);
    if (path[0] === 'sign-in') { location.hash = '#/payments'; return; }
    return paymentsView(params);
  }
  document.getElementById('sign-out').addEventListener('click', function () {
    signOut();
    // On AWS the sign-in pages keep a session of their own: end it too.
    if (SIGN_IN.kind === 'cognito') return location.assign(hosted.logoutUrl(SIGN_IN));
    say('Signed out.', 'ok');
  });
  // The skip link moves focus to the content and leaves the route (the URL fragment) alone.
  document.querySelector('.skip').addEventListener('click', function (e) { e.preventDefault(); document.getElementById('main').focus(); });
  window.addEventListener('hashchange', route);
  var returned = new URLSearchParams(location.search);
  if (SIGN_IN.kind === 'cognito' && (returned.has('code') || returned.has('error'))) finishHostedSignIn(returned);
  else route();
}
