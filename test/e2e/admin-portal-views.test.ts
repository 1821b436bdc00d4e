import type { Page } from 'playwright-core';
import { SIGN_IN_LOCKOUT } from '../../lambdas/adapters/local/operator-auth';
import { ERRORS } from '../../lambdas/domain/errors';
import { SESSION_EXPIRED_REASON } from '../../lambdas/domain/payment-view';
import { seedOperator } from '../support/admin';
import { auditContext, expectStrictPage, screenshot, seriousA11yViolations } from '../support/browser';
import { openSession, paidPayment, statusOf } from '../support/payments';
import { until } from '../support/until';
import {
  authorization,
  browser,
  clock,
  dmsShop,
  heading,
  open,
  operator,
  pageOverflows,
  portal,
  rowOf,
  service,
  signIn,
  statusLine,
  T0,
  usePortalSuite,
  visit,
} from '../support/admin-portal-suite';

/**
 * The operators' portal in a real browser, under its real Content-Security-Policy, as an operator
 * signs in and out (the failed sign-ins and the lockout in the audit log too), finds payments
 * (search, paging, totals, the CSV file, a count the server cannot give at once, an order number
 * as a shop writes it), and uses it on a 390 px phone, in dark and with the keyboard alone. What
 * operators do to payments, merchants and callbacks, and the audit log of it, is
 * admin-portal.test.ts: the two files run on different workers.
 */
usePortalSuite();

describe('signing in', () => {
  it('signs in with the keyboard alone: labelled fields, Enter submits; a wrong password is announced', async () => {
    const page = await open();
    await page.goto(portal());
    await heading(page, 'Sign in').waitFor();
    expect(new URL(page.url()).hash).toBe('#/sign-in');
    await expect(page.locator('nav[aria-label="Sections"]').isVisible()).resolves.toBe(false);
    await screenshot(page, 'admin-sign-in');

    // The heading has focus; the next stops are the two labelled fields.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).labels?.[0]?.textContent)).toBe('User name');
    await page.keyboard.type(operator.username);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).labels?.[0]?.textContent)).toBe('Password');
    await page.keyboard.type('not-the-password');
    await page.keyboard.press('Enter');
    await statusLine(page).filter({ hasText: 'Wrong user name or password.' }).waitFor();
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe('password');
    expect(await page.getByLabel('Password').inputValue()).toBe('');

    await page.keyboard.type(operator.password);
    await page.keyboard.press('Enter');
    await heading(page, 'Payments').waitFor();
    expect(new URL(page.url()).hash).toBe('#/payments');
    await page.getByText('Signed in as olivia').waitFor();
    expect(await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents()).toEqual(['Payments', 'Capture queue', 'Merchants', 'Accounts', 'Disputes', 'Audit log']);
  });

  it('asks for both fields before sending anything', async () => {
    const page = await open();
    await page.goto(portal());
    await heading(page, 'Sign in').waitFor();
    const posts: string[] = [];
    page.on('request', (r) => void (r.method() === 'POST' && posts.push(r.url())));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await statusLine(page).filter({ hasText: 'Enter your user name and password.' }).waitFor();
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe('username');
    expect(posts).toEqual([]);
  });

  it('sends a signed-out visitor to the sign-in page, and an operator with an ended session back there', async () => {
    const page = await open();
    await page.goto(`${portal()}#/queue`);
    await heading(page, 'Sign in').waitFor();
    expect(new URL(page.url()).hash).toBe('#/sign-in');

    await page.evaluate(() => {
      sessionStorage.setItem('operator-token', 'expired.or.forged');
      sessionStorage.setItem('operator-name', 'olivia');
    });
    await visit(page, '#/queue', 'Sign in');
    await statusLine(page).filter({ hasText: 'Your session has ended. Sign in again.' }).waitFor();
  });
});

describe('searching payments', () => {
  it('finds by part of the order number, payment id start, e-mail, last four, amount and merchant name, shows merchants by name', async () => {
    const shop = await service.createMerchant({ name: 'Searchable Teas' });
    const stamp = String(Date.now() % 100000).padStart(5, '0');
    const tea = await paidPayment(service, shop, { order: { number: `TEA-${stamp}-A`, amount: '17.25' }, extra: { customer: { name: 'Ana Lima', email: 'ana.tea@example.com' } } });
    const other = await paidPayment(service, shop, { order: { number: `TEA-${stamp}-B`, amount: '8.00' }, extra: { customer: { name: 'Bo Berg', email: 'bo@example.org' } } });
    const page = await open();
    await signIn(page);
    const search = async (fields: Record<string, string>) => {
      await visit(page, '#/payments', 'Payments');
      for (const [label, value] of Object.entries(fields)) await page.getByLabel(label).fill(value);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.locator('#result-count').waitFor();
      await page.waitForFunction(() => !document.querySelector('[aria-busy]'));
      return page.locator('tbody tr td:nth-child(4)').allTextContents();
    };
    expect((await search({ 'Order number': `tea-${stamp}-`, Merchant: 'searchable' })).sort()).toEqual([tea.order.number, other.order.number].sort());
    expect(await search({ 'Customer e-mail': 'ANA.TEA', Merchant: 'Searchable Teas' })).toEqual([tea.order.number]);
    expect(await search({ 'Card last four': '1111', Amount: '8', Merchant: 'teas' })).toEqual([other.order.number]);
    expect(await search({ 'Payment id': tea.paymentId.slice(0, 6), Merchant: 'teas' })).toEqual([tea.order.number]);
    expect(await rowOf(page, tea.order.number).locator('td:nth-child(3)').textContent()).toBe('Searchable Teas');
    expect(await rowOf(page, tea.order.number).locator('td:nth-child(3)').getAttribute('title')).toBe(shop.merchant_key);
    await page.getByLabel('Card last four').fill('11');
    await page.getByRole('button', { name: 'Search' }).click();
    await statusLine(page).filter({ hasText: 'last4: Enter the last four digits of the card.' }).waitFor();
  }, 90_000);

  it('pages forward and back', async () => {
    const shop = await service.createMerchant({ name: 'Paging Shop' });
    const made: string[] = [];
    for (let i = 0; i < 27; i++) {
      clock.set(new Date(T0.getTime() - (i + 1) * 1000));
      made.push((await openSession(service, shop)).order.number);
    }
    clock.set(T0);
    const page = await open();
    await signIn(page);
    await visit(page, `#/payments?merchant=${encodeURIComponent('Paging Shop')}`, 'Payments');
    await page.locator('#result-count').filter({ hasText: 'Page 1: 25 payments, more on the next page.' }).waitFor();
    await page.locator('#result-total').filter({ hasText: '27 payments match this search in all.' }).waitFor();
    expect(await page.getByRole('button', { name: 'Previous page' }).count()).toBe(0);
    const firstPage = await page.locator('tbody tr td:nth-child(4)').allTextContents();
    const counts: string[] = [];
    page.on('request', (r) => void (r.url().includes('/admin/api/payments/count') && counts.push(r.url())));
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.locator('#result-count').filter({ hasText: 'Page 2: 2 payments, the last page of this search.' }).waitFor();
    // The search's total, counted on its first page, is shown again without counting again.
    expect(await page.locator('#result-total').textContent()).toBe('27 payments match this search in all.');
    expect(counts).toEqual([]);
    const secondPage = await page.locator('tbody tr td:nth-child(4)').allTextContents();
    expect([...firstPage, ...secondPage]).toEqual(made);
    expect(await page.getByRole('button', { name: 'Next page' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.locator('#result-count').filter({ hasText: 'Page 1: 25 payments' }).waitFor();
    expect(await page.locator('tbody tr td:nth-child(4)').allTextContents()).toEqual(firstPage);
  });

  it('counts the landing page\'s matches (every merchant\'s last seven days) only when asked', async () => {
    const page = await open();
    const counts: string[] = [];
    page.on('request', (r) => void (r.url().includes('/admin/api/payments/count') && counts.push(r.url())));
    await signIn(page);
    await page.locator('#result-count').waitFor();
    const ask = page.locator('#result-total').getByRole('button', { name: 'Count all matches' });
    await ask.waitFor();
    expect(counts).toEqual([]);
    await ask.click();
    // Counted to the end, over as many requests as the server asks for.
    await page.locator('#result-total').filter({ hasText: /^\d+ payments? match(es)? this search in all\.$/ }).waitFor();
    expect(counts.length).toBeGreaterThan(0);
  });

  it('shows times in the operator\'s time zone, with UTC on hover', async () => {
    const paid = await authorization('31.00');
    const page = await open({ timezoneId: 'Europe/Berlin' });
    await signIn(page);
    await visit(page, `#/payments?order=${encodeURIComponent(paid.order.number)}`, 'Payments');
    const created = rowOf(page, paid.order.number).locator('time').first();
    await created.waitFor();
    // T0 is 09:00 UTC in June: 11:00 in Berlin (summer time).
    expect(await created.textContent()).toBe('2030-06-03 11:00:00 GMT+2');
    expect(await created.getAttribute('title')).toBe('2030-06-03 09:00:00 UTC');
    expect(await created.getAttribute('datetime')).toBe(T0.toISOString());
  });

  it('is usable on a 390 px phone: each payment a card of labelled lines, nothing wider than the screen', async () => {
    const paid = await authorization('12.34');
    const page = await open({ viewport: { width: 390, height: 844 } });
    await signIn(page);
    await visit(page, `#/payments?order=${encodeURIComponent(paid.order.number)}`, 'Payments');
    // On a phone a cell's name starts with its column's label: the row is found by its payment link.
    const row = page.locator('tbody tr', { has: page.getByRole('link', { name: paid.paymentId }) });
    await row.waitFor();
    expect(await pageOverflows(page)).toBe(false);
    // The cells stack: the row is one column of "label value" lines.
    const lines = await row.locator('td').evaluateAll((tds) => tds.map((td) => [getComputedStyle(td, '::before').content, Math.round(td.getBoundingClientRect().width)]));
    expect(lines.map((l) => l[0])).toEqual(['"Created"', '"Payment id"', '"Merchant"', '"Order"', '"Amount"', '"Status"', '"Reason"']);
    const widths = new Set(lines.map((l) => l[1]));
    expect(widths.size).toBe(1);
    await screenshot(page, 'admin-payments-phone');
  });
});

describe('the total and the CSV file of a search', () => {
  it('counts every match over a month of days and downloads all of them as one file, formulas defused', async () => {
    const shop = await service.createMerchant({ name: 'Export Shop' });
    const made: string[] = [];
    for (let i = 0; i < 30; i++) {
      clock.set(new Date(T0.getTime() - i * 23 * 3600_000));
      const number = i % 10 === 0 ? `@SUM(${i}+1)` : `EXP-${T0.getTime() % 100000}-${i}`;
      made.push((await openSession(service, shop, { order: { number, amount: `${i + 1}.25` } })).order.number);
    }
    clock.set(T0);
    const page = await open();
    await signIn(page);
    await visit(page, `#/payments?merchant=${encodeURIComponent('Export Shop')}&from=2030-05-04&to=2030-06-03`, 'Payments');
    await page.locator('#result-total').filter({ hasText: '30 payments match this search in all.' }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('payments-2030-05-04-to-2030-06-03.csv');
    await statusLine(page).filter({ hasText: 'Exported 30 payments to payments-2030-05-04-to-2030-06-03.csv.' }).waitFor();
    // Read as a stream: the browser is the run's shared one, connected to, whose files are not ours to open.
    const chunks: Buffer[] = [];
    for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const lines = text.replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('created_at,payment_id,merchant_key,merchant_name,order_number,amount,currency,status,reason,captured_amount,refunded_amount,chargeback_amount,card_brand,card_mask,customer_email,updated_at,description,customer_name');
    expect(lines).toHaveLength(31);
    const orders = lines.slice(1).map((l) => l.split(',')[4]);
    expect(orders).toEqual(made.map((n) => (n.startsWith('@') ? `'${n}` : n)));
    expect(lines[1]!.split(',')[5]).toBe('1.25');
  });
});

describe('a count the server cannot give at once', () => {
  async function searchPage() {
    const name = `Busy Shop ${Date.now() % 100000}`;
    const shop = await service.createMerchant({ name });
    for (let i = 0; i < 3; i++) await openSession(service, shop, { order: { number: `BUSY-${i}` } });
    const page = await open();
    await signIn(page);
    return { page, name };
  }
  const envelope = (entry: { code: number; message: string }) => JSON.stringify({ error_code: entry.code, error_message: entry.message, errors: [] });

  it('busy with the operator\'s other counts (429): says so, waits the Retry-After, and then shows the total', async () => {
    const { page, name } = await searchPage();
    let refused = 0;
    await page.route('**/admin/api/payments/count?**', async (route) => {
      if (refused++ === 0) return route.fulfill({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' }, body: envelope(ERRORS.OPERATOR_SEARCHES_BUSY) });
      return route.continue();
    });
    await visit(page, `#/payments?merchant=${encodeURIComponent(name)}`, 'Payments');
    await page.locator('#result-total').filter({ hasText: 'Your other counts or exports are still running: trying again in 1 second' }).waitFor();
    await page.locator('#result-total').filter({ hasText: '3 payments match this search in all.' }).waitFor();
    expect(refused).toBe(2);
  });

  it('too broad for one request (422): shows the server\'s "narrow your search" message, asks nothing again', async () => {
    const { page, name } = await searchPage();
    let asked = 0;
    await page.route('**/admin/api/payments/count?**', (route) => {
      asked++;
      return route.fulfill({ status: 422, headers: { 'content-type': 'application/json' }, body: envelope(ERRORS.SEARCH_TOO_BROAD) });
    });
    await visit(page, `#/payments?merchant=${encodeURIComponent(name)}`, 'Payments');
    await statusLine(page).filter({ hasText: 'Narrow your search' }).waitFor();
    await page.waitForTimeout(1_500);
    expect(asked).toBe(1);
  });
});

describe('an order as a shop writes it', () => {
  it('is found by an order number with # & + / and shown with its description as text; a customer without a name shows no placeholder', async () => {
    const shop = await service.createMerchant({ name: 'Module Shop' });
    const number = `INV/2026/${Date.now() % 100000}-12#A&b+c`;
    const description = `<script>alert(1)</script> & "quotes" 'x' <img src=x onerror=alert(2)>`;
    // No customer in the session: the page asked for the e-mail, and the cardholder became the name.
    const paid = await paidPayment(service, shop, { order: { number, description }, extra: { customer: null }, holder: 'Ana Lima', fields: { email: 'ana@example.com' } });
    expect(paid.status).toMatchObject({ status: 'settled', customer: { name: 'Ana Lima', email: 'ana@example.com' } });
    const unpaid = await openSession(service, shop, { order: { number: `${number}-open`, description }, extra: { customer: null } });

    const page = await open();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await signIn(page);
    await page.getByLabel('Order number').fill(number);
    await page.getByLabel('Order number').press('Enter');
    // The route keeps the number through the address's fragment and the API's query string.
    await page.waitForFunction((n) => { const rows = document.querySelectorAll('tbody tr'); return rows.length === 1 && rows[0]?.textContent?.includes(n); }, number);
    expect(await page.getByLabel('Order number').inputValue()).toBe(number);
    await page.getByRole('link', { name: paid.paymentId }).click();

    await heading(page, `Payment ${number}`).waitFor();
    const fact = (name: string) => page.locator('dl.facts dt', { hasText: name }).locator('xpath=following-sibling::dd[1]');
    expect(await fact('Description').textContent()).toBe(description);
    expect(await fact('Customer').textContent()).toBe('Ana Lima <ana@example.com>');
    expect(await page.locator('main img, main script').count()).toBe(0);

    // A session without a customer, not paid yet: nothing is known of the customer, and nothing stands in for it.
    await visit(page, `#/payments/${unpaid.paymentId}`, `Payment ${number}-open`);
    await page.locator('dl.facts dt', { hasText: 'Description' }).waitFor();
    expect(await page.locator('dl.facts dt', { hasText: 'Customer' }).count()).toBe(0);
    expect(await page.locator('dl.facts').textContent()).not.toMatch(/undefined|null/);
    expect(dialogs).toEqual([]);
  });
});

describe('one status everywhere', () => {
  it('an expired link reads the same in the portal and the API: decline with its reason, in the detail and under a decline filter', async () => {
    const shop = await service.createMerchant({ name: 'Expired Link Shop' });
    const session = await openSession(service, shop, { extra: { session_expiry: 5 } });
    clock.advance(5 * 60_000);
    const merchantReads = await statusOf(service, shop, session.paymentId);
    expect(merchantReads).toMatchObject({ status: 'decline', reason: SESSION_EXPIRED_REASON });
    const page = await open();
    await signIn(page);

    await visit(page, `#/payments/${session.paymentId}`, `Payment ${session.order.number}`);
    const status = page.locator('dl.facts dt', { hasText: 'Status' }).locator('xpath=following-sibling::dd[1]');
    // What the status means, then the word the merchants' API uses.
    await expect(status.textContent()).resolves.toBe(`Declined (decline) – ${SESSION_EXPIRED_REASON}`);
    // The merchant by name, as the list shows it, with its key.
    const merchant = page.locator('dl.facts dt', { hasText: 'Merchant' }).locator('xpath=following-sibling::dd[1]');
    await expect(merchant.textContent()).resolves.toBe(`Expired Link Shop (${shop.merchant_key})`);

    await visit(page, `#/payments?merchant=${encodeURIComponent(shop.merchant_key)}&status=decline`, 'Payments');
    const row = rowOf(page, session.order.number);
    await row.waitFor();
    const cells = await row.locator('td').allTextContents();
    expect(cells).toEqual(expect.arrayContaining(['Declined (decline)', SESSION_EXPIRED_REASON]));
    await visit(page, `#/payments?merchant=${encodeURIComponent(shop.merchant_key)}&status=prepare`, 'Payments');
    await page.getByText('No payments match this search.').waitFor();
    expect(await rowOf(page, session.order.number).count()).toBe(0);
  });
});

describe('sign-ins in the audit log, by days, and its CSV file', () => {
  it('records sign-ins, the failed ones too (never what was typed as a password, an unknown name masked); filters them by days; downloads them', async () => {
    // A day of its own: the hour's quota of unknown names and the lockout tests stay apart.
    clock.set(new Date('2030-07-10T10:00:00.000Z'));
    const page = await open();
    await page.goto(portal());
    await heading(page, 'Sign in').waitFor();
    for (const [name, password] of [[operator.username, 'olivia-typed-this-wrong'], ['ghost-at-the-door', 'whatever-typed-here']]) {
      await page.getByLabel('User name').fill(name!);
      await page.getByLabel('Password').fill(password!);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await statusLine(page).filter({ hasText: 'Wrong user name or password.' }).waitFor();
    }
    await signIn(page);
    await visit(page, '#/audit?action=operator.&from=2030-07-10&to=2030-07-10', 'Audit log');
    const table = page.getByRole('table', { name: 'Operator actions' });
    await table.locator('tbody tr').first().waitFor();
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((r) => [...r.children].slice(0, 6).map((c) => c.textContent ?? '')));
    expect(rows).toEqual([
      ['2030-07-10 10:00:00 UTC', 'olivia', 'admin', 'operator.sign-in', 'operator:olivia', 'done: signed in from 127.0.0.1'],
      ['2030-07-10 10:00:00 UTC', 'gh… (17 characters)', '', 'operator.sign-in', 'operator:gh… (17 characters)', 'refused: no operator has this name from 127.0.0.1'],
      ['2030-07-10 10:00:00 UTC', 'olivia', '', 'operator.sign-in', 'operator:olivia', 'refused: wrong password from 127.0.0.1'],
    ]);
    expect(await page.content()).not.toMatch(/olivia-typed-this-wrong|whatever-typed-here|ghost-at-the-door/);

    // The days: the day before has none; a start after the end is refused, and says why.
    const day = (name: string) => page.getByRole('textbox', { name: `${name} UTC day` });
    await day('From').fill('2030-07-09');
    await day('To').fill('2030-07-09');
    await page.getByRole('button', { name: 'Filter' }).click();
    await table.getByRole('cell', { name: 'Nothing to show.' }).waitFor();
    await day('From').fill('2030-07-11');
    await page.getByRole('button', { name: 'Filter' }).click();
    await statusLine(page).filter({ hasText: 'The first day should not be after the last.' }).waitFor();

    await visit(page, '#/audit?action=operator.&from=2030-07-10&to=2030-07-10', 'Audit log');
    await table.locator('tbody tr').first().waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    expect(download.suggestedFilename()).toBe('audit-2030-07-10-to-2030-07-10.csv');
    await statusLine(page).filter({ hasText: 'Exported 3 entries to audit-2030-07-10-to-2030-07-10.csv.' }).waitFor();
    const chunks: Buffer[] = [];
    for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
    const lines = Buffer.concat(chunks).toString('utf8').replace(/^\uFEFF/, '').split('\r\n').filter(Boolean);
    expect(lines[0]).toBe('at,actor,actor_role,action,target_kind,target,outcome,detail,before,after,id,seq,prev_hash,hash');
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 7).join(','))).toEqual([
      '2030-07-10T10:00:00.000Z,olivia,admin,operator.sign-in,operator,operator:olivia,done',
      '2030-07-10T10:00:00.000Z,gh… (17 characters),,operator.sign-in,operator,operator:gh… (17 characters),refused',
      '2030-07-10T10:00:00.000Z,olivia,,operator.sign-in,operator,operator:olivia,refused',
    ]);

    // Signing out is recorded too, with the role.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading(page, 'Sign in').waitFor();
    const signedOut = async () => (await service.deps.audit.day('2030-07-10')).find((e) => e.action === 'operator.sign-out');
    await until(signedOut, { everyMs: 100 });
    expect(await signedOut()).toMatchObject({ actor: 'olivia', actorRole: 'admin', target: 'operator:olivia', outcome: 'done' });
  });
});

describe('signing out', () => {
  it('forgets the token and goes back to the sign-in page', async () => {
    const page = await open();
    await signIn(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading(page, 'Sign in').waitFor();
    await statusLine(page).filter({ hasText: 'Signed out.' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('operator-token'))).toBeNull();
    await visit(page, '#/queue', 'Sign in');
  });
});

describe('locking out', () => {
  it(`locks the user name after ${SIGN_IN_LOCKOUT.maxFailures} wrong passwords and says so; the right one no longer gets in`, async () => {
    const victim = await seedOperator(service, 'lena', 'lenas-long-password', 'viewer');
    const page = await open();
    await page.goto(portal());
    await heading(page, 'Sign in').waitFor();
    await page.getByLabel('User name').fill(victim.username);
    for (let i = 1; i <= SIGN_IN_LOCKOUT.maxFailures; i++) {
      await page.getByLabel('Password').fill(`wrong-password-${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const expected = i < SIGN_IN_LOCKOUT.maxFailures ? 'Wrong user name or password.' : ERRORS.OPERATOR_LOCKED.message;
      // The same line may repeat: wait for this attempt's answer (the password field is emptied by it).
      await page.waitForFunction((text) => document.getElementById('status')?.textContent === text && (document.querySelector('input[name=password]') as HTMLInputElement).value === '', expected);
    }
    await screenshot(page, 'admin-sign-in-locked');
    await page.getByLabel('Password').fill(victim.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForFunction(() => (document.querySelector('input[name=password]') as HTMLInputElement).value === '');
    await statusLine(page).filter({ hasText: ERRORS.OPERATOR_LOCKED.message }).waitFor();
    await heading(page, 'Sign in').waitFor();
  });
});

describe('keyboard use', () => {
  it('the skip link moves focus to the content and stays on the page', async () => {
    const page = await open();
    await signIn(page);
    await visit(page, '#/queue', 'Capture queue');
    await page.getByText(/authorizations? waiting/).waitFor();
    await page.locator('a.skip').focus();
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    expect(new URL(page.url()).hash).toBe('#/queue');
    await heading(page, 'Capture queue').waitFor();
  });

  it('labels every form field of every page', async () => {
    const page = await open();
    await signIn(page);
    // Each page once its answer is shown (a hash change is no new load: no load state to wait for).
    const pages: [string, string, string][] = [
      ['#/payments', 'Payments', 'Payments, newest first'],
      ['#/queue', 'Capture queue', 'Authorizations waiting for capture'],
      [`#/merchants/${dmsShop.merchant_key}`, 'Merchant Queue Shop', 'Settings changes'],
    ];
    for (const [route, title, table] of pages) {
      await visit(page, route, title);
      await page.getByRole('table', { name: table }).waitFor();
      const unlabelled = await page.locator('input, select, textarea').evaluateAll((fields) =>
        fields.filter((f) => !((f as HTMLInputElement).labels?.length || f.getAttribute('aria-label'))).map((f) => f.outerHTML),
      );
      expect([route, unlabelled]).toEqual([route, []]);
    }
  });
});

describe('security headers of /admin', () => {
  it('sends a CSP with a fresh nonce for the page\'s own script and style, and forbids framing', async () => {
    const page = await open();
    const { csp, nonce } = await expectStrictPage(await page.goto(portal()));
    expect(csp).toContain("connect-src 'self'");
    // The script ran under that policy: it drew the sign-in form.
    await heading(page, 'Sign in').waitFor();
    const second = await page.request.get(portal());
    expect(second.headers()['content-security-policy']).not.toContain(nonce);
  });
});

describe('in dark (prefers-color-scheme: dark): dark surfaces, and axe\'s contrast checks clean', () => {
  let page: Page;
  beforeAll(async () => {
    const context = await auditContext(browser, { colorScheme: 'dark', timezoneId: 'UTC' });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  });
  afterAll(() => page?.context().close());

  it('sign-in, payments, a payment with its actions, the capture queue and merchants', async () => {
    await visit(page, '#/sign-in', 'Sign in');
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(18, 20, 23)');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await signIn(page);
    const paid = await authorization();
    for (const [route, title] of [['#/payments', 'Payments'], [`#/payments/${paid.paymentId}`, `Payment ${paid.order.number}`], ['#/queue', 'Capture queue'], ['#/merchants', 'Merchants']] as const) {
      await visit(page, route, title);
      await page.waitForLoadState('networkidle');
      await page.locator('#view table, #view form, #view dl').first().waitFor();
      expect([route, await seriousA11yViolations(page)]).toEqual([route, []]);
    }
  });
});

describe('on a 390 px phone (390×844): the main flows without sideways scrolling, axe-clean', () => {
  // The axe context (CSP bypassed, only so axe-core can be injected), one tab for the whole walk.
  let page: Page;
  beforeAll(async () => {
    const context = await auditContext(browser, { viewport: { width: 390, height: 844 }, timezoneId: 'UTC' });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
  });
  afterAll(() => page?.context().close());

  /** The page is no wider than the screen, nor is any table in its own region (tables are cards here), and axe finds nothing serious (unless the page was just checked). */
  async function expectFits(where: string, axe = true): Promise<void> {
    await page.waitForLoadState('networkidle');
    const widths = await page.evaluate(() => {
      const doc = document.scrollingElement as Element;
      const wide = [...document.querySelectorAll('.scroll')].filter((r) => r.scrollWidth > r.clientWidth).map((r) => r.querySelector('caption')?.textContent);
      return { scrolls: doc.scrollWidth > doc.clientWidth, wideTables: wide };
    });
    expect([where, widths, axe ? await seriousA11yViolations(page) : []]).toEqual([where, { scrolls: false, wideTables: [] }, []]);
  }

  /** The first result is on the first screen: nothing scrolled, its row's top inside the window. */
  async function expectFirstResultOnScreen(row: ReturnType<Page['locator']>): Promise<void> {
    const box = await row.first().boundingBox();
    expect([await page.evaluate(() => window.scrollY), box!.y + Math.min(box!.height, 40) <= 844]).toEqual([0, true]);
  }

  /** A section through the compact menu: the sections are folded behind "Menu" until it is opened. */
  async function section(name: string, title: string): Promise<void> {
    const menu = page.getByRole('button', { name: 'Menu' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await page.getByRole('link', { name }).isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await expectFits('the open menu');
    await page.getByRole('link', { name }).click();
    await heading(page, title).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
  }

  it('signs in, searches payments (filters folded, results first), opens one, then the capture queue, the audit log and merchants', async () => {
    const paid = await authorization('19.90');
    await visit(page, '#/sign-in', 'Sign in');
    await expectFits('sign-in', false);
    await signIn(page);
    const rows = page.getByRole('table', { name: 'Payments, newest first' }).locator('tbody tr');
    await rows.first().waitFor();
    // The nine search fields are folded behind "Filters": the results come first.
    expect(await page.getByLabel('Order number').isVisible()).toBe(false);
    await expectFirstResultOnScreen(rows);
    await expectFits('payments');

    await page.getByText('Filters', { exact: true }).click();
    await page.getByLabel('Order number').fill(paid.order.number);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Filters (1 set)').waitFor();
    const found = rows.filter({ has: page.getByRole('link', { name: paid.paymentId }) });
    await found.waitFor();
    expect(await page.getByLabel('Order number').isVisible()).toBe(false);
    await expectFirstResultOnScreen(found);
    await expectFits('a search', false);

    await page.getByRole('link', { name: paid.paymentId }).click();
    await heading(page, `Payment ${paid.order.number}`).waitFor();
    await page.getByRole('table', { name: 'Transactions' }).locator('tbody tr').first().waitFor();
    await expectFits('a payment');

    await section('Capture queue', 'Capture queue');
    await page.getByRole('table', { name: 'Authorizations waiting for capture' }).getByRole('link', { name: paid.paymentId }).waitFor();
    await expectFits('the capture queue');

    await section('Audit log', 'Audit log');
    const entries = page.getByRole('table', { name: 'Operator actions' }).locator('tbody tr');
    await entries.first().waitFor();
    await expectFirstResultOnScreen(entries);
    await expectFits('the audit log');

    await section('Merchants', 'Merchants');
    await page.getByRole('table', { name: 'Merchants by name' }).locator('tbody tr').first().waitFor();
    await expectFits('merchants');

    // Dark, with the menu open: the same variables, axe's contrast checks clean.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('button', { name: 'Menu' }).click();
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(18, 20, 23)');
    await expectFits('merchants in dark, the menu open');
  }, 90_000);
});
