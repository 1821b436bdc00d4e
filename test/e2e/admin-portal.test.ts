import type { Page } from 'playwright-core';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { ERRORS } from '../../lambdas/domain/errors';
import { SANDBOX_REASONS } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { operatorToken, seedOperator, type OperatorCredentials } from '../support/admin';
import { auditContext, screenshot, seriousA11yViolations } from '../support/browser';
import { startCallbackReceiver, verifiesWith, type CallbackReceiver } from '../support/callback-receiver';
import { openSession, paidPayment, refundOf, statusOf, storedPayment, submitPage, type PaidPayment } from '../support/payments';
import { NOT_RESENDABLE } from '../../lambdas/domain/callback-resend';
import {
  authorization,
  browser,
  clock,
  dmsShop,
  heading,
  open,
  pageOverflows,
  plainShop,
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
 * The operators' portal in a real browser, under its real Content-Security-Policy: an operator
 * captures authorizations from the queue (one, then two at once), reads a payment's history and
 * the delivery attempts of its callbacks, resends a callback and a merchant's dead ones, turns on
 * two-stage payments for a merchant, and finds all of it in the audit log (seed spec §1: manual
 * capture "in an administration portal"); the roles, the money totals, merchant administration and
 * axe-core on every page. Signing in and out, searching payments and the portal on a phone, in
 * dark and with the keyboard are admin-portal-views.test.ts (a file of its own: the two halves
 * run on different workers).
 */
usePortalSuite();

/** The confirmation a money action opens: its title and one line per payment. */
const confirmation = (page: Page) => page.getByRole('dialog');
async function confirmationLines(page: Page): Promise<{ title: string; lines: string[] }> {
  const dialog = confirmation(page);
  await dialog.waitFor();
  return { title: (await dialog.getByRole('heading').textContent()) ?? '', lines: await dialog.getByRole('listitem').allTextContents() };
}
/** Answers the open confirmation with its first (confirming) button, or Cancel. */
async function answer(page: Page, confirm: boolean): Promise<void> {
  const dialog = confirmation(page);
  await (confirm ? dialog.getByRole('button').first() : dialog.getByRole('button', { name: 'Cancel' })).click();
  await dialog.waitFor({ state: 'detached' });
}

/** Signs the tab in unless an earlier test did (so a test still runs alone, with -t). */
async function signedIn(page: Page): Promise<void> {
  if (!page.url().startsWith(service.baseUrl)) await page.goto(portal());
  if (!(await page.evaluate(() => sessionStorage.getItem('operator-token')))) await signIn(page);
}

/** The narrowest screen the portal is made for. */
const PHONE = { viewport: { width: 320, height: 900 } } as const;
const HOUR = 3600_000;

const receivers: CallbackReceiver[] = [];
afterAll(() => Promise.all(receivers.map((r) => r.close())));

/** A one-stage merchant whose notification URL is a receiver on loopback that answers as scripted. */
async function shopWithReceiver(name: string): Promise<{ shop: MerchantCredentials; receiver: CallbackReceiver }> {
  const receiver = await startCallbackReceiver();
  receivers.push(receiver);
  return { shop: await service.createMerchant({ name, settings: { notificationUrl: receiver.url } }), receiver };
}

/** A paid payment whose callback was answered 500 a minute before T0, then delivered at T0. */
async function callbackDeliveredAfterAFailure(shop: MerchantCredentials, receiver: CallbackReceiver): Promise<PaidPayment> {
  clock.set(new Date(T0.getTime() - 60_000));
  receiver.script(500);
  const paid = await paidPayment(service, shop);
  await runCallbackJob(service.deps);
  clock.set(T0);
  await runCallbackJob(service.deps);
  expect(receiver.received.filter((c) => c.fields.id === paid.paymentId).map((c) => c.answer)).toEqual([500, 200]);
  return paid;
}

/** A paid payment whose callback failed for a day: the first attempt 26 hours before T0, dead an hour before T0. */
async function deadCallback(shop: MerchantCredentials, receiver: CallbackReceiver): Promise<PaidPayment> {
  receiver.fallback = 500;
  clock.set(new Date(T0.getTime() - 26 * HOUR));
  const paid = await paidPayment(service, shop);
  await runCallbackJob(service.deps);
  clock.set(new Date(T0.getTime() - HOUR));
  await runCallbackJob(service.deps);
  clock.set(T0);
  const [record] = await service.deps.callbacks.records(paid.paymentId);
  expect(record?.state).toBe('dead');
  return paid;
}

/** The cells of a table's own rows (not of a table nested in one, nor the rows that hold an attempt history). */
const rowsOf = (table: ReturnType<Page['getByRole']>) =>
  table.locator(':scope > tbody > tr:not(.history)').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent ?? '')));

/** What operators did in this file, for the audit log test: [action, order number or merchant]. */
const done: [string, string][] = [];

describe('the capture queue', () => {
  it('captures one authorization from its row: it leaves the queue and the payment is settled', async () => {
    const [first, second] = [await authorization('10.00'), await authorization('11.00')];
    const page = await open();
    await signIn(page);
    await page.getByRole('link', { name: 'Capture queue' }).click();
    await heading(page, 'Capture queue').waitFor();
    await rowOf(page, first.order.number).waitFor();
    expect(await page.getByRole('link', { name: 'Capture queue' }).getAttribute('aria-current')).toBe('page');
    await screenshot(page, 'admin-queue');

    await rowOf(page, first.order.number).getByRole('button', { name: 'Capture' }).click();
    expect(await confirmationLines(page)).toEqual({ title: 'Capture 10.00 USD?', lines: [`Capture 10.00 USD of the 10.00 USD authorized for order ${first.order.number} (payment ${first.paymentId}).`] });
    await answer(page, true);
    await statusLine(page).filter({ hasText: `${first.order.number} capture 10.00 USD: done` }).waitFor();
    await rowOf(page, first.order.number).waitFor({ state: 'detached' });
    await rowOf(page, second.order.number).waitFor();
    await expect(statusOf(service, dmsShop, first.paymentId)).resolves.toMatchObject({ status: 'settled' });
    await expect(statusOf(service, dmsShop, second.paymentId)).resolves.toMatchObject({ status: 'pending' });
    done.push(['payment.capture 10.00', first.paymentId]);
    await screenshot(page, 'admin-queue-captured');
  });

  it('lists the soonest to expire first and bulk-captures the two selected', async () => {
    const made: PaidPayment[] = [];
    for (const minutes of [30, 10, 20]) {
      clock.set(new Date(T0.getTime() - minutes * 60_000));
      made.push(await authorization());
    }
    clock.set(T0);
    const page = await open();
    await signIn(page);
    await visit(page, '#/queue', 'Capture queue');
    await rowOf(page, made[0]?.order.number ?? '').waitFor();
    const expiries = await page.locator('tbody tr td:nth-child(2)').allTextContents();
    expect(expiries).toEqual([...expiries].sort());
    const orders = (await page.locator('tbody tr td:nth-child(5)').allTextContents()).filter((o) => made.some((m) => m.order.number === o));
    expect(orders).toEqual([made[0], made[2], made[1]].map((m) => m?.order.number));

    const [a, b, untouched] = made as [PaidPayment, PaidPayment, PaidPayment];
    await page.getByRole('checkbox', { name: `Select ${a.order.number}` }).check();
    await page.getByRole('checkbox', { name: `Select ${b.order.number}` }).check();
    await page.getByRole('button', { name: 'Capture selected' }).click();
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'Captured 2 of 2.' }).waitFor();
    await rowOf(page, a.order.number).waitFor({ state: 'detached' });
    await rowOf(page, b.order.number).waitFor({ state: 'detached' });
    await rowOf(page, untouched.order.number).waitFor();
    for (const p of [a, b]) await expect(statusOf(service, dmsShop, p.paymentId)).resolves.toMatchObject({ status: 'settled' });
    await expect(statusOf(service, dmsShop, untouched.paymentId)).resolves.toMatchObject({ status: 'pending' });
    done.push(['payment.capture 25.00', a.paymentId], ['payment.capture 25.00', b.paymentId]);
  });
});

describe('a payment', () => {
  it('is found by its order number and shows its details, actions and history; a partial capture is added to it', async () => {
    const paid = await authorization('40.00');
    const page = await open();
    await signIn(page);
    await page.getByLabel('Order number').fill(paid.order.number);
    await page.getByLabel('Order number').press('Enter');
    // The unfiltered list may still be on screen when the row first shows: wait for the search's answer.
    await page.waitForFunction(
      (number) => { const rows = document.querySelectorAll('tbody tr'); return rows.length === 1 && rows[0]?.textContent?.includes(number); },
      paid.order.number,
    ).catch(() => undefined);
    await rowOf(page, paid.order.number).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);
    await screenshot(page, 'admin-payments');
    await page.getByRole('link', { name: paid.paymentId }).click();

    await heading(page, `Payment ${paid.order.number}`).waitFor();
    const facts = page.locator('dl.facts');
    await expect(facts.textContent()).resolves.toContain('pending');
    await expect(facts.textContent()).resolves.toContain('40.00 USD');
    await expect(facts.textContent()).resolves.toContain('visa 411111****1111 01/2038');
    expect(await page.getByRole('button').allTextContents()).toEqual(expect.arrayContaining(['Capture', 'Release']));
    expect(await page.getByRole('button', { name: 'Void' }).count()).toBe(0);

    // "abc", 0 and more than authorized are refused before the question, saying why.
    for (const [typed, why] of [
      ['abc', 'abc is not an amount in USD'],
      ['0.00', 'The amount to capture must be more than 0.'],
      ['40.01', 'At most 40.00 USD can be captured; 40.01 USD is more.'],
    ] as const) {
      await page.getByLabel('Capture amount (USD)').fill(typed);
      await page.getByRole('button', { name: 'Capture' }).click();
      await statusLine(page).filter({ hasText: why }).waitFor();
      expect(await confirmation(page).count()).toBe(0);
    }
    await page.getByLabel('Capture amount (USD)').fill('15.00');
    await page.getByRole('button', { name: 'Capture' }).click();
    expect((await confirmationLines(page)).title).toBe('Capture 15.00 USD?');
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'capture 15.00 USD: done (status settled)' }).waitFor();
    const history = page.getByRole('table', { name: 'Transactions' });
    await history.getByRole('cell', { name: 'capture', exact: true }).waitFor();
    expect(await history.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)))).toEqual([
      // A sale that only authorized (DMS) reads as the authorization it is.
      [expect.any(String), 'authorization (sale)', 'success', '40.00 USD', expect.any(String), '', ''],
      [expect.any(String), 'capture', 'success', '15.00 USD', expect.any(String), '', 'operator:olivia'],
    ]);
    await expect(facts.textContent()).resolves.toContain('Captured15.00');
    const actions = page.getByRole('table', { name: 'Operator actions' });
    await actions.getByRole('cell', { name: 'olivia', exact: true }).waitFor();
    await expect(actions.textContent()).resolves.toContain('payment.capture 15.00');
    expect(await page.getByRole('button').allTextContents()).toEqual(expect.arrayContaining(['Void', 'Refund']));
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'settled' });
    done.push(['payment.capture 15.00', paid.paymentId]);
    await screenshot(page, 'admin-payment-detail');
  });
});

describe('money actions: the amounts typed, asked first, every refusal explained', () => {
  /** Everything the page POSTs to the admin API while `act` runs. */
  async function postsDuring(page: Page, act: () => Promise<void>): Promise<{ url: string; body: unknown }[]> {
    const posts: { url: string; body: unknown }[] = [];
    const listen = (r: import('playwright-core').Request) => void (r.method() === 'POST' && posts.push({ url: new URL(r.url()).pathname, body: r.postDataJSON() }));
    page.on('request', listen);
    await act();
    page.off('request', listen);
    return posts;
  }

  it('bulk-captures each row\'s edited amount, after a confirmation listing every payment and amount', async () => {
    const [edited, full] = [await authorization('30.00'), await authorization('30.00')];
    const page = await open();
    await signIn(page);
    await visit(page, '#/queue', 'Capture queue');
    await page.getByLabel(`Capture amount for ${edited.order.number}`).fill('1');
    await page.getByRole('checkbox', { name: `Select ${edited.order.number}` }).check();
    await page.getByRole('checkbox', { name: `Select ${full.order.number}` }).check();
    await page.getByRole('button', { name: 'Capture selected' }).click();
    const asked = await confirmationLines(page);
    expect(asked.title).toBe('Capture 2 payments?');
    expect(asked.lines.sort()).toEqual([
      `${edited.order.number}: capture 1.00 USD of 30.00 (payment ${edited.paymentId})`,
      `${full.order.number}: capture 30.00 USD (payment ${full.paymentId})`,
    ].sort());
    await screenshot(page, 'admin-bulk-confirmation');
    const posts = await postsDuring(page, async () => {
      await answer(page, true);
      await statusLine(page).filter({ hasText: 'Captured 2 of 2.' }).waitFor();
    });
    expect(posts).toEqual([{ url: '/admin/api/capture-queue/bulk', body: { action: 'capture', payment_ids: expect.arrayContaining([edited.paymentId, full.paymentId]), amounts: { [edited.paymentId]: '1', [full.paymentId]: '30.00' } } }]);
    expect((await storedPayment(service, edited.paymentId)).capturedMinor).toBe(100);
    expect((await storedPayment(service, full.paymentId)).capturedMinor).toBe(3000);
    await expect(statusOf(service, dmsShop, edited.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('names each payment a bulk capture did not do, and why', async () => {
    const [ok, tooMuch, declined] = [await authorization('30.00'), await authorization('30.00'), await authorization('30.00', '03/38')];
    const page = await open();
    await signIn(page);
    await visit(page, '#/queue', 'Capture queue');
    await page.getByLabel(`Capture amount for ${tooMuch.order.number}`).fill('31.00');
    for (const p of [ok, tooMuch, declined]) await page.getByRole('checkbox', { name: `Select ${p.order.number}` }).check();
    await page.getByRole('button', { name: 'Capture selected' }).click();
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'Captured 1 of 3. Not done:' }).waitFor();
    const failures = await statusLine(page).getByRole('listitem').allTextContents();
    expect(failures.sort()).toEqual([
      `${tooMuch.order.number} (payment ${tooMuch.paymentId}): refused – Capture amount 31.00 is bigger than the authorized amount (30.00 USD).`,
      `${declined.order.number} (payment ${declined.paymentId}): failed – ${SANDBOX_REASONS.captureDeclined}`,
    ].sort());
    await expect(statusOf(service, dmsShop, ok.paymentId)).resolves.toMatchObject({ status: 'settled' });
    await expect(statusOf(service, dmsShop, tooMuch.paymentId)).resolves.toMatchObject({ status: 'pending' });
  });

  it('asks before a release, a bulk release and a void; Cancel sends nothing', async () => {
    const [auth, other] = [await authorization('12.00'), await authorization('13.00')];
    const page = await open();
    await signIn(page);
    await visit(page, '#/queue', 'Capture queue');
    const cancelled = await postsDuring(page, async () => {
      await rowOf(page, auth.order.number).getByRole('button', { name: 'Release' }).click();
      expect(await confirmationLines(page)).toEqual({ title: 'Release 12.00 USD?', lines: [`Release the whole authorization of 12.00 USD for order ${auth.order.number} (payment ${auth.paymentId}).`] });
      await answer(page, false);
      await statusLine(page).filter({ hasText: 'release cancelled: nothing was sent.' }).waitFor();
      await page.getByRole('checkbox', { name: `Select ${auth.order.number}` }).check();
      await page.getByRole('checkbox', { name: `Select ${other.order.number}` }).check();
      await page.getByRole('button', { name: 'Release selected' }).click();
      const asked = await confirmationLines(page);
      expect(asked.title).toBe('Release 2 payments?');
      expect(asked.lines.sort()).toEqual([`${auth.order.number}: release 12.00 USD (payment ${auth.paymentId})`, `${other.order.number}: release 13.00 USD (payment ${other.paymentId})`].sort());
      await page.keyboard.press('Escape');
      await confirmation(page).waitFor({ state: 'detached' });
    });
    expect(cancelled).toEqual([]);
    for (const p of [auth, other]) await expect(statusOf(service, dmsShop, p.paymentId)).resolves.toMatchObject({ status: 'pending' });

    await visit(page, `#/payments/${auth.paymentId}`, `Payment ${auth.order.number}`);
    await page.getByRole('button', { name: 'Release' }).click();
    expect((await confirmationLines(page)).title).toBe('Release 12.00 USD?');
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'release 12.00 USD: done (status reversal)' }).waitFor();

    const shop = await service.createMerchant({ name: 'Void Shop' });
    const sale = await paidPayment(service, shop, { order: { amount: '20.00' } });
    await visit(page, `#/payments/${sale.paymentId}`, `Payment ${sale.order.number}`);
    await page.getByRole('button', { name: 'Void' }).click();
    expect(await confirmationLines(page)).toEqual({ title: 'Void 20.00 USD?', lines: [`Void order ${sale.order.number} (payment ${sale.paymentId}): the whole 20.00 USD goes back to the customer.`] });
    expect(await postsDuring(page, () => answer(page, false))).toEqual([]);
    await expect(statusOf(service, shop, sale.paymentId)).resolves.toMatchObject({ status: 'settled' });
    await page.getByRole('button', { name: 'Void' }).click();
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'void 20.00 USD: done' }).waitFor();
    await expect(statusOf(service, shop, sale.paymentId)).resolves.toMatchObject({ status: 'void' });
  });

  it('refunds only an amount it shows and asks about: what is left is filled in; an empty box, "abc", 0 or more than is left are refused before any question, saying why', async () => {
    const shop = await service.createMerchant({ name: 'Refund Shop' });
    const sale = await paidPayment(service, shop, { order: { amount: '20.00' } });
    const page = await open();
    await signIn(page);
    await visit(page, `#/payments/${sale.paymentId}`, `Payment ${sale.order.number}`);
    const box = page.getByLabel('Refund amount (USD)');
    expect(await box.inputValue()).toBe('20.00');
    expect(await box.getAttribute('placeholder')).toBeNull();

    for (const [typed, why] of [
      ['', 'Enter the amount to refund.'],
      ['abc', 'abc is not an amount in USD'],
      ['0.00', 'The amount to refund must be more than 0.'],
      ['100', 'At most 20.00 USD can be refunded; 100.00 USD is more.'],
      ['1.234', '1.234 is not an amount in USD'],
    ] as const) {
      await box.fill(typed);
      expect(await postsDuring(page, async () => {
        await page.getByRole('button', { name: 'Refund' }).click();
        await statusLine(page).filter({ hasText: why }).waitFor();
      })).toEqual([]);
      expect(await confirmation(page).count()).toBe(0);
      if (typed) expect(await box.getAttribute('aria-invalid')).toBe('true');
    }

    await page.getByLabel('Refund amount (USD)').fill('7.50');
    await page.getByRole('button', { name: 'Refund' }).click();
    // What is refundable before and after this refund, not a figure that reads as either.
    expect(await confirmationLines(page)).toEqual({ title: 'Refund 7.50 USD?', lines: [`Refund 7.50 USD of order ${sale.order.number} (payment ${sale.paymentId}) to the customer.`, 'Refundable before this refund: 20.00 USD; after it: 12.50 USD.'] });
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'refund 7.50 USD: done' }).waitFor();
    await page.getByText('Left to refund: 12.50').waitFor();
    expect(await page.getByLabel('Refund amount (USD)').inputValue()).toBe('12.50');
    await page.getByLabel('Refund amount (USD)').fill('15.00');
    await page.getByRole('button', { name: 'Refund' }).click();
    await statusLine(page).filter({ hasText: 'At most 12.50 USD can be refunded; 15.00 USD is more.' }).waitFor();
    expect(await confirmation(page).count()).toBe(0);
    await expect(statusOf(service, shop, sale.paymentId)).resolves.toMatchObject({ status: 'settled', refunded_amount: '7.50' });
  });

  it('what cannot be undone stands apart: Void away from the refund amount and its button, at desktop and phone widths', async () => {
    const shop = await service.createMerchant({ name: 'Apart Shop' });
    const sale = await paidPayment(service, shop, { order: { amount: '20.00' } });
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      const page = await open({ viewport });
      await signIn(page);
      await visit(page, `#/payments/${sale.paymentId}`, `Payment ${sale.order.number}`);
      const zone = page.getByRole('group', { name: 'Cannot be undone' });
      expect(await zone.getByRole('button').allTextContents()).toEqual(['Void']);
      const voidBox = (await page.getByRole('button', { name: 'Void' }).boundingBox())!;
      for (const near of [page.getByLabel('Refund amount (USD)'), page.getByRole('button', { name: 'Refund' })]) {
        const box = (await near.boundingBox())!;
        const apart = Math.max(voidBox.x - (box.x + box.width), box.x - (voidBox.x + voidBox.width), voidBox.y - (box.y + box.height), box.y - (voidBox.y + voidBox.height));
        expect(apart).toBeGreaterThanOrEqual(24);
      }
    }
  });

  it('a destructive question starts on Cancel: Enter alone sends nothing', async () => {
    const shop = await service.createMerchant({ name: 'Careful Shop' });
    const sale = await paidPayment(service, shop, { order: { amount: '20.00' } });
    const page = await open();
    await signIn(page);
    await visit(page, `#/payments/${sale.paymentId}`, `Payment ${sale.order.number}`);
    await page.getByRole('button', { name: 'Refund' }).click();
    await confirmation(page).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    expect(await postsDuring(page, async () => {
      await page.keyboard.press('Enter');
      await statusLine(page).filter({ hasText: 'refund cancelled: nothing was sent.' }).waitFor();
    })).toEqual([]);
    await expect(statusOf(service, shop, sale.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('after a void the payment no longer says until when it can be voided', async () => {
    const shop = await service.createMerchant({ name: 'Voided Shop' });
    const sale = await paidPayment(service, shop, { order: { amount: '20.00' } });
    const page = await open();
    await signIn(page);
    await visit(page, `#/payments/${sale.paymentId}`, `Payment ${sale.order.number}`);
    const terms = () => page.locator('dl.facts dt').allTextContents();
    expect(await terms()).toContain('Void possible until');
    await page.getByRole('button', { name: 'Void' }).click();
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'void 20.00 USD: done' }).waitFor();
    await page.locator('dl.facts').filter({ hasText: 'void' }).waitFor();
    expect(await terms()).not.toContain('Void possible until');
  });
});

describe('callbacks', () => {
  it('shows a payment\'s delivery attempts (a 500, then a 200) on a phone, and resends the callback', async () => {
    const { shop, receiver } = await shopWithReceiver('Callback Shop');
    const paid = await callbackDeliveredAfterAFailure(shop, receiver);
    const page = await open(PHONE);
    await signIn(page);
    await visit(page, `#/payments/${paid.paymentId}`, `Payment ${paid.order.number}`);

    const callbacks = page.getByRole('table', { name: 'Callbacks of this payment' });
    await callbacks.getByRole('button', { name: 'Resend callback 1' }).waitFor();
    expect(await rowsOf(callbacks)).toEqual([['1', 'sale', 'success', 'delivered', '2', '2030-06-03 09:00:00 UTC', '200', expect.stringMatching(/^\d+$/), '', '', 'Resend']]);
    const history = page.getByRole('table', { name: 'Delivery attempts of callback 1' });
    expect(await history.isVisible()).toBe(false);
    await callbacks.getByText('Attempt history of callback 1 (2 attempts)').click();
    await history.waitFor();
    expect(await rowsOf(history)).toEqual([
      ['2030-06-03 08:59:00 UTC', '500', expect.stringMatching(/^\d+$/), 'HTTP 500', receiver.url],
      ['2030-06-03 09:00:00 UTC', '200', expect.stringMatching(/^\d+$/), '', receiver.url],
    ]);
    // The tables are cards of labelled lines; the page keeps the phone's width.
    expect(await pageOverflows(page)).toBe(false);
    await screenshot(page, 'admin-payment-callbacks-320');

    // Asked first, naming what the merchant receives again.
    await callbacks.getByRole('button', { name: 'Resend callback 1' }).click();
    expect(await confirmationLines(page)).toEqual({
      title: 'Resend callback 1 to the merchant?',
      lines: ['Type: sale', 'Status: success', 'Amount: 25.00 USD', 'Order status it reports: settled'],
    });
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'Callback 1 (sale/success, 25.00 USD) queued: the callback job sends it again on its next run.' }).waitFor();
    // On a phone a cell's name starts with its column's label (the tables are cards).
    await callbacks.getByRole('cell', { name: /(^|\s)pending$/ }).waitFor();
    expect(await callbacks.getByRole('button').count()).toBe(0);
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Callbacks');
    done.push(['callback.resend no. 1', paid.paymentId]);

    await runCallbackJob(service.deps);
    const again = receiver.received.filter((c) => c.fields.id === paid.paymentId);
    expect(again.map((c) => c.answer)).toEqual([500, 200, 200]);
    expect(verifiesWith(again[2]!, shop.password)).toBe(true);
    await page.reload();
    await callbacks.getByRole('button', { name: 'Resend callback 1' }).waitFor();
    expect((await rowsOf(callbacks))[0]?.slice(3, 5)).toEqual(['delivered', '3']);
    await callbacks.getByText('Attempt history of callback 1 (3 attempts)').click();
    expect((await rowsOf(history)).map((cells) => cells[1])).toEqual(['500', '200', '200']);
  });

  it('does not offer to resend a skipped callback: a decline the customer followed with a payment on the link (02/38, then 01/38) says why', async () => {
    const { shop, receiver } = await shopWithReceiver('Second Try Portal Shop');
    const session = await openSession(service, shop);
    await submitPage(service, session, { card: '02/38' });
    await submitPage(service, session, { card: '01/38' });
    await runCallbackJob(service.deps);
    expect(receiver.received.filter((c) => c.fields.id === session.paymentId).map((c) => `${c.fields.type}/${c.fields.status}`)).toEqual(['sale/success']);
    const page = await open();
    await signIn(page);
    await visit(page, `#/payments/${session.paymentId}`, `Payment ${session.order.number}`);

    const callbacks = page.getByRole('table', { name: 'Callbacks of this payment' });
    await callbacks.getByRole('button', { name: 'Resend callback 2' }).waitFor();
    const rows = await rowsOf(callbacks);
    expect(rows.map((r) => [r[0], r[1], r[2], r[3], r[10]])).toEqual([
      ['1', 'sale', 'fail', 'skipped', NOT_RESENDABLE.superseded],
      ['2', 'sale', 'success', 'delivered', 'Resend'],
    ]);
    expect(await callbacks.getByRole('button', { name: 'Resend callback 1' }).count()).toBe(0);
    // The portal and the merchant read the payment alike.
    await expect(page.locator('dl.facts').textContent()).resolves.toContain('settled');
    await expect(statusOf(service, shop, session.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('warns, in the confirmation, that a resend contradicts the payment: the sale\'s callback after a full refund', async () => {
    const { shop, receiver } = await shopWithReceiver('Refunded Portal Shop');
    const paid = await paidPayment(service, shop);
    expect((await refundOf(service, shop, paid.paymentId, '25.00')).status).toBe(200);
    await runCallbackJob(service.deps);
    const page = await open();
    await signIn(page);
    await visit(page, `#/payments/${paid.paymentId}`, `Payment ${paid.order.number}`);

    const callbacks = page.getByRole('table', { name: 'Callbacks of this payment' });
    await callbacks.getByRole('button', { name: 'Resend callback 1' }).click();
    const warning = 'It tells the merchant the order is settled, but the payment is refund now: the merchant may take it as the latest state.';
    expect(await confirmationLines(page)).toEqual({
      title: 'Resend callback 1 to the merchant?',
      lines: ['Type: sale', 'Status: success', 'Amount: 25.00 USD', 'Order status it reports: settled', `Warning: ${warning}`],
    });
    await answer(page, false);
    await runCallbackJob(service.deps);
    expect(receiver.received.filter((c) => c.fields.id === paid.paymentId)).toHaveLength(3);

    await callbacks.getByRole('button', { name: 'Resend callback 1' }).click();
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'Callback 1 (sale/success, 25.00 USD) queued' }).waitFor();
    await runCallbackJob(service.deps);
    expect(receiver.received.filter((c) => c.fields.id === paid.paymentId).map((c) => c.fields.type)).toEqual(['sale', 'refund', 'refund', 'sale']);
    const [entry] = (await service.deps.audit.forTarget(paid.paymentId, 10)).filter((e) => e.action === 'callback.resend no. 1');
    expect(entry).toMatchObject({ outcome: 'done', after: { type: 'sale', status: 'success', amount: '25.00 USD', order_status: 'settled', payment_status: 'refund', contradicts: true } });
  });

  it('lists a merchant\'s dead callbacks and resends them all: the count is announced and the list empties', async () => {
    const { shop, receiver } = await shopWithReceiver('Dead Receiver Shop');
    const paid = await deadCallback(shop, receiver);
    const page = await open(PHONE);
    await signIn(page);
    await visit(page, `#/merchants/${shop.merchant_key}`, 'Merchant Dead Receiver Shop');

    const dead = page.getByRole('table', { name: 'Dead callbacks, oldest first' });
    await dead.getByRole('link', { name: paid.paymentId }).waitFor();
    expect(await rowsOf(dead)).toEqual([['2030-06-03 08:00:00 UTC', paid.paymentId, '1', 'sale', 'success', '2', 'HTTP 500']]);
    expect(await pageOverflows(page)).toBe(false);
    await screenshot(page, 'admin-merchant-dead-callbacks-320');

    receiver.fallback = 200;
    await page.getByRole('button', { name: 'Resend all dead callbacks' }).click();
    await statusLine(page).filter({ hasText: '1 dead callback queued to be sent again.' }).waitFor();
    await dead.getByRole('cell', { name: 'Nothing to show.' }).waitFor();
    await page.getByRole('button', { name: 'Resend all dead callbacks' }).waitFor({ state: 'hidden' });
    done.push(['callback.resend-dead', `merchant:${shop.merchant_key}`]);

    await runCallbackJob(service.deps);
    expect(receiver.received.filter((c) => c.fields.id === paid.paymentId).map((c) => c.answer)).toEqual([500, 500, 200]);
    await dead.getByRole('link', { name: paid.paymentId }).waitFor({ state: 'detached' });
  });
});

describe('merchant settings', () => {
  it('turns two-stage payments on with a capture delay, saved and in force for the next payment', async () => {
    const page = await open();
    await signIn(page);
    await page.getByRole('link', { name: 'Merchants' }).click();
    await heading(page, 'Merchants').waitFor();
    await page.getByRole('link', { name: 'Plain Shop' }).click();
    await heading(page, 'Merchant Plain Shop').waitFor();
    await screenshot(page, 'admin-merchant-settings');

    const dms = page.getByLabel('Two-stage payments (DMS)');
    const delay = page.getByLabel('Automatic capture delay');
    expect(await dms.isChecked()).toBe(false);
    expect(await delay.inputValue()).toBe('');

    // A refused value is announced and nothing changes.
    await dms.check();
    await delay.fill('-5');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await statusLine(page).filter({ hasText: 'auto capture delay must be a whole number of minutes from 0 to 10080' }).waitFor();
    expect(await service.deps.merchants.find(plainShop.merchant_key)).toMatchObject({ dms: false });

    // A brand colour too light for the page's white button text is refused when set, not dropped later.
    await delay.fill('15');
    await page.getByLabel('Brand colour').fill('#ffcc00');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await statusLine(page).filter({ hasText: 'brand color #ffcc00 is too light: white text on it has a contrast of 1.51:1, and the page needs at least 4.5:1 (try a darker shade)' }).waitFor();
    expect((await service.deps.merchants.find(plainShop.merchant_key))?.branding).toBeUndefined();
    await page.getByLabel('Brand colour').fill('');

    await delay.fill('15');
    // E-mail receipts (ADR 0037) switch on in the same save.
    expect(await page.getByLabel('E-mail receipts').isChecked()).toBe(false);
    await page.getByLabel('E-mail receipts').check();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await statusLine(page).filter({ hasText: 'Settings saved.' }).waitFor();
    const changes = page.getByRole('table', { name: 'Settings changes' });
    await changes.getByRole('cell', { name: 'olivia', exact: true }).waitFor();

    await page.reload();
    await heading(page, 'Merchant Plain Shop').waitFor();
    expect(await page.getByLabel('Two-stage payments (DMS)').isChecked()).toBe(true);
    expect(await page.getByLabel('Automatic capture delay').inputValue()).toBe('15');
    expect(await page.getByLabel('E-mail receipts').isChecked()).toBe(true);
    expect(await service.deps.merchants.find(plainShop.merchant_key)).toMatchObject({ dms: true, autoCaptureDelayMinutes: 15, emailReceipts: true });
    const next = await paidPayment(service, plainShop);
    expect(next.status.status).toBe('pending');
    done.push(['merchant.settings', `merchant:${plainShop.merchant_key}`]);
    await screenshot(page, 'admin-merchant-saved');
  });
});

describe('the audit log', () => {
  // Reads what the tests above did through the portal (run the file as a whole).
  it('shows who did each of the actions above, with which role, when, and the state before and after', async () => {
    expect(done.length).toBeGreaterThanOrEqual(5);
    const page = await open();
    await signIn(page);
    await page.getByRole('link', { name: 'Audit log' }).click();
    await heading(page, 'Audit log').waitFor();
    const table = page.getByRole('table', { name: 'Operator actions' });
    // Every sign-in is an entry too: the actions may be on older pages ("Older entries").
    const rows: string[][] = [];
    for (let pages = 0; pages < 10; pages++) {
      await page.locator('#view table:not([data-read]) tbody tr').first().waitFor();
      rows.push(...(await table.locator('tbody tr').evaluateAll((trs) => trs.map((r) => [...r.children].map((c) => c.textContent ?? '')))));
      if (done.every(([action, target]) => rows.some((r) => r[3] === action && r[4] === target))) break;
      await page.evaluate(() => document.querySelector('#view table')?.setAttribute('data-read', ''));
      await page.getByRole('button', { name: 'Older entries' }).click();
    }
    for (const [action, target] of done) {
      expect(rows).toContainEqual(['2030-06-03 09:00:00 UTC', 'olivia', 'admin', action, target, 'done', expect.any(String)]);
    }
    // Each entry as a diff: one line per field that changed, before → after.
    await visit(page, `#/audit?action=${encodeURIComponent('payment.capture 15.00')}`, 'Audit log');
    const capture = table.locator('tbody tr', { has: page.getByRole('cell', { name: 'payment.capture 15.00', exact: true }) });
    await capture.waitFor();
    expect(await capture.locator('td.diff li').allTextContents()).toEqual(['status: pending → settled', 'captured_amount: — → 15.00']);
    expect(await capture.locator('td.diff del').allTextContents()).toEqual(['pending', '—']);
    expect(await capture.locator('td.diff ins').allTextContents()).toEqual(['settled', '15.00']);
    await screenshot(page, 'admin-audit');
  });

  it('filters by who, action and target', async () => {
    const page = await open();
    await signIn(page);
    await visit(page, '#/audit', 'Audit log');
    const table = page.getByRole('table', { name: 'Operator actions' });
    await table.locator('tbody tr').first().waitFor();
    const column = (n: number) => table.locator(`tbody tr td:nth-child(${n})`).allTextContents();

    await page.getByRole('textbox', { name: 'Action' }).fill('payment.refund');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => url.hash.includes('action=payment.refund'));
    // The unfiltered table stays until the filtered one replaces it: wait for the replacement.
    await page.waitForFunction(() => {
      const cells = [...document.querySelectorAll('table tbody tr td:nth-child(4)')];
      return cells.length > 0 && cells.every((c) => (c.textContent ?? '').startsWith('payment.refund'));
    });
    const actions = await column(4);
    // The refund made above (amounts the portal refuses before asking are never sent, so never audited).
    expect(actions.length).toBeGreaterThanOrEqual(1);
    expect(actions.filter((a) => !a.startsWith('payment.refund'))).toEqual([]);

    const [, target] = done.find(([a]) => a === 'merchant.settings')!;
    await visit(page, `#/audit?target=${encodeURIComponent(target)}`, 'Audit log');
    await table.locator('tbody tr').first().waitFor();
    expect(new Set(await column(5))).toEqual(new Set([target]));

    await visit(page, '#/audit?actor=nobody-like-this', 'Audit log');
    await table.getByRole('cell', { name: 'Nothing to show.' }).waitFor();
    await visit(page, '#/audit?actor=OLIV', 'Audit log');
    await table.locator('tbody tr').first().waitFor();
    expect(new Set(await column(2))).toEqual(new Set(['olivia']));
  });
});

describe('roles', () => {
  let viewer: OperatorCredentials;
  let clerk: OperatorCredentials;
  beforeAll(async () => {
    viewer = await seedOperator(service, 'vivian', 'vivian-long-password', 'viewer');
    clerk = await seedOperator(service, 'oscar', 'oscar-long-password', 'operator');
  });

  it('a viewer sees payments, the queue and settings without a button to act; a forged capture is refused with 403', async () => {
    const paid = await authorization('12.00');
    const page = await open();
    await signIn(page, viewer);
    await page.getByText('Signed in as vivian (viewer)').waitFor();

    await visit(page, `#/payments/${paid.paymentId}`, `Payment ${paid.order.number}`);
    await page.getByText('Your role may look at payments but not act on them.').waitFor();
    await page.getByRole('table', { name: 'Callbacks of this payment' }).waitFor();
    expect(await page.getByRole('button', { name: /^(Capture|Release|Void|Refund|Resend)/ }).count()).toBe(0);

    await visit(page, '#/queue', 'Capture queue');
    await rowOf(page, paid.order.number).waitFor();
    expect(await page.getByRole('button', { name: /Capture|Release/ }).count()).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);

    await visit(page, `#/merchants/${dmsShop.merchant_key}`, 'Merchant Queue Shop');
    await page.getByText('Only an admin can change these settings.').waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await page.getByLabel('Two-stage payments (DMS)').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: /^Rotate/ }).count()).toBe(0);
    await screenshot(page, 'admin-viewer-merchant');
    await visit(page, '#/merchants', 'Merchants');
    await page.getByRole('table', { name: 'Merchants by name' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create merchant' }).count()).toBe(0);

    // The page offers no capture; a capture sent with the viewer's own token anyway is refused.
    const forged = await page.evaluate(async (id) => {
      const res = await fetch(`/admin/api/payments/${id}/capture`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sessionStorage.getItem('operator-token')}`, 'content-type': 'application/json' },
        body: '{}',
      });
      return [res.status, await res.json()];
    }, paid.paymentId);
    expect(forged).toEqual([403, { error_code: ERRORS.FORBIDDEN.code, error_message: ERRORS.FORBIDDEN.message, errors: [] }]);
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'pending' });
  });

  it('an operator captures, but sees merchant settings read-only', async () => {
    const paid = await authorization('13.00');
    const page = await open();
    await signIn(page, clerk);
    await visit(page, `#/payments/${paid.paymentId}`, `Payment ${paid.order.number}`);
    await page.getByRole('button', { name: 'Capture' }).click();
    expect((await confirmationLines(page)).title).toBe('Capture 13.00 USD?');
    await answer(page, true);
    await statusLine(page).filter({ hasText: 'capture 13.00 USD: done (status settled)' }).waitFor();
    await expect(statusOf(service, dmsShop, paid.paymentId)).resolves.toMatchObject({ status: 'settled' });
    const actions = page.getByRole('table', { name: 'Operator actions' });
    await actions.getByRole('cell', { name: 'oscar', exact: true }).waitFor();
    expect(await actions.locator('tbody tr').first().evaluate((r) => [...r.children].slice(1, 4).map((c) => c.textContent))).toEqual(['oscar', 'operator', 'payment.capture 13.00']);

    await visit(page, `#/merchants/${dmsShop.merchant_key}`, 'Merchant Queue Shop');
    await page.getByText('Only an admin can change these settings.').waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Rotate/ }).count()).toBe(0);
  });

  it('an admin may edit merchant settings', async () => {
    const page = await open();
    await signIn(page);
    await page.getByText('Signed in as olivia (admin)').waitFor();
    await visit(page, `#/merchants/${dmsShop.merchant_key}`, 'Merchant Queue Shop');
    await page.getByRole('button', { name: 'Save settings' }).waitFor();
    expect(await page.getByLabel('Name').isEditable()).toBe(true);
    expect(await page.getByText('Only an admin can change these settings.').count()).toBe(0);
  });

  it('an operator without a role is told so and stays signed out', async () => {
    const page = await open();
    await page.goto(portal());
    await heading(page, 'Sign in').waitFor();
    const roleless = await operatorToken(service.backend.operatorKey, { username: 'ronan' });
    await page.evaluate((t) => sessionStorage.setItem('operator-token', t), roleless);
    await visit(page, '#/payments', 'Sign in');
    await statusLine(page).filter({ hasText: 'Your operator account has no role in the portal yet: ask an administrator to give you one.' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('operator-token'))).toBeNull();
  });
});

describe('money totals', () => {
  /** The amounts of a table's Amount cells ("25.00 USD") added up per currency, as the page should say it. */
  const expectedTotals = (amounts: readonly string[]) => {
    const byCurrency = new Map<string, number>();
    for (const a of amounts) {
      const [value, currency] = a.split(' ');
      byCurrency.set(currency!, (byCurrency.get(currency!) ?? 0) + Math.round(Number(value) * 100));
    }
    return [...byCurrency].sort(([a], [b]) => a.localeCompare(b)).map(([c, minor]) => `${(minor / 100).toFixed(2)} ${c}`).join(' · ');
  };

  it('the capture queue says the money waiting and a payments page its total, per currency, adding up the rows shown', async () => {
    await authorization();
    await paidPayment(service, await service.createMerchant({ name: 'Totals Shop' }), { order: { amount: '12.34' } });
    const page = await open();
    await signIn(page);
    await visit(page, '#/queue', 'Capture queue');
    await page.getByText(/authorizations? waiting/).waitFor();
    const queued = await page.getByRole('table', { name: 'Authorizations waiting for capture' }).locator('tbody tr td.num').allTextContents();
    expect(queued.length).toBeGreaterThan(0);
    await page.getByText(`: ${expectedTotals(queued)} in all.`, { exact: false }).waitFor();

    await visit(page, '#/payments', 'Payments');
    await page.locator('#page-total').waitFor();
    const listed = await page.getByRole('table', { name: 'Payments, newest first' }).locator('tbody tr td.num').allTextContents();
    expect(listed.length).toBeGreaterThan(0);
    expect(await page.locator('#page-total').textContent()).toBe(`Total on this page: ${expectedTotals(listed)}`);
  });
});

describe('accessibility (axe-core: no serious or critical violations)', () => {
  // A context that bypasses CSP, only so that axe-core can be injected; every test above runs under the real policy.
  let page: Page;
  beforeAll(async () => {
    const context = await auditContext(browser);
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await authorization();
  });
  afterAll(() => page?.context().close());

  const pages: [string, string, string][] = [
    ['sign-in', '#/sign-in', 'Sign in'],
    ['payments', '#/payments', 'Payments'],
    ['capture queue', '#/queue', 'Capture queue'],
    ['merchants', '#/merchants', 'Merchants'],
    ['merchant settings', '', 'Merchant Queue Shop'],
    ['audit log', '#/audit', 'Audit log'],
  ];
  it.each(pages)('the %s page', async (name, route, title) => {
    if (name === 'sign-in') {
      await visit(page, route, title);
    } else {
      if (!(await page.evaluate(() => sessionStorage.getItem('operator-token')))) await signIn(page);
      await visit(page, route || `#/merchants/${dmsShop.merchant_key}`, title);
    }
    await page.waitForLoadState('networkidle');
    await page.locator('#view table, #view form').first().waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('a payment page with its actions', async () => {
    const paid = await authorization();
    await visit(page, `#/payments/${paid.paymentId}`, `Payment ${paid.order.number}`);
    await page.waitForLoadState('networkidle');
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('a payment page with its callbacks and an attempt history open', async () => {
    const { shop, receiver } = await shopWithReceiver('Audited Callback Shop');
    const paid = await callbackDeliveredAfterAFailure(shop, receiver);
    await signedIn(page);
    await visit(page, `#/payments/${paid.paymentId}`, `Payment ${paid.order.number}`);
    await page.getByText('Attempt history of callback 1 (2 attempts)').click();
    await page.getByRole('table', { name: 'Delivery attempts of callback 1' }).waitFor();
    await screenshot(page, 'admin-payment-callbacks');
    expect(await seriousA11yViolations(page)).toEqual([]);
  });

  it('a merchant page with dead callbacks', async () => {
    const { shop, receiver } = await shopWithReceiver('Audited Dead Shop');
    const paid = await deadCallback(shop, receiver);
    await signedIn(page);
    await visit(page, `#/merchants/${shop.merchant_key}`, 'Merchant Audited Dead Shop');
    await page.getByRole('link', { name: paid.paymentId }).waitFor();
    expect(await seriousA11yViolations(page)).toEqual([]);
  });
});

describe('merchant administration (admin role)', () => {
  it('creates a merchant whose credentials, shown once, work at once; the audit log records it without them', async () => {
    const page = await open();
    await signIn(page);
    await visit(page, '#/merchants', 'Merchants');
    await page.getByRole('heading', { name: 'New merchant' }).waitFor();
    await page.getByRole('button', { name: 'Create merchant' }).click();
    await statusLine(page).filter({ hasText: "Enter the merchant's name." }).waitFor();
    await page.getByRole('textbox', { name: 'Name' }).fill('Portal Made Shop');
    await page.getByRole('checkbox', { name: 'Two-stage payments (DMS)' }).check();
    await page.getByRole('button', { name: 'Create merchant' }).click();
    const panel = page.getByRole('region', { name: 'Merchant Portal Made Shop created' });
    await panel.waitFor();
    await expect(panel.getByRole('heading').evaluate((h) => h === document.activeElement)).resolves.toBe(true);
    const merchantKey = await panel.getByLabel('Merchant key').inputValue();
    const password = await panel.getByLabel('Signing password').inputValue();
    const webhookSecret = await panel.getByLabel('Webhook secret').inputValue();
    expect(await service.deps.merchants.find(merchantKey)).toMatchObject({ name: 'Portal Made Shop', dms: true });
    const paid = await paidPayment(service, { merchant_key: merchantKey, password });
    expect(paid.status.status).toBe('pending');
    expect(await service.deps.secrets.webhookSecretsOf(merchantKey, clock.now())).toEqual([webhookSecret]);
    await screenshot(page, 'admin-merchant-created');

    // The list shows it at once, in its place by name, as the list read afresh shows it.
    const merchants = page.getByRole('table', { name: 'Merchants by name' });
    const listed = () => merchants.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    const shown = await listed();
    expect(shown).toContainEqual(['Portal Made Shop', merchantKey, 'on', expect.any(String), expect.any(String)]);

    // The same key again is refused, and names the field.
    await page.getByRole('textbox', { name: 'Name' }).fill('Copy Shop');
    await page.locator('form input[name=merchant_key]').fill(merchantKey);
    await page.getByRole('button', { name: 'Create merchant' }).click();
    await statusLine(page).filter({ hasText: `merchant_key: merchant ${merchantKey} already exists` }).waitFor();
    expect((await service.deps.merchants.find(merchantKey))?.name).toBe('Portal Made Shop');

    await panel.getByRole('link', { name: 'Open the settings of Portal Made Shop' }).click();
    await heading(page, 'Merchant Portal Made Shop').waitFor();
    const changes = page.getByRole('table', { name: 'Settings changes' });
    await changes.getByRole('cell', { name: 'merchant.create', exact: true }).waitFor();
    expect(await changes.textContent()).not.toContain(password);
    expect(await changes.textContent()).not.toContain(webhookSecret);
    await visit(page, '#/merchants', 'Merchants');
    await merchants.getByRole('cell', { name: merchantKey }).waitFor();
    expect(await listed()).toEqual(shown);
  });

  it('rotates the signing password and the webhook secret after asking; the new values work, the old ones a day more', async () => {
    const shop = await service.createMerchant({ name: 'Rotating Shop' });
    const [oldSecret] = await service.deps.secrets.webhookSecretsOf(shop.merchant_key, clock.now());
    const page = await open();
    await signIn(page);
    await visit(page, `#/merchants/${shop.merchant_key}`, 'Merchant Rotating Shop');

    await page.getByRole('button', { name: 'Rotate signing password' }).click();
    expect((await confirmationLines(page)).title).toBe('Rotate signing password of Rotating Shop?');
    await answer(page, false);
    await statusLine(page).filter({ hasText: 'Nothing was changed.' }).waitFor();
    expect(await service.deps.secrets.passwordOf(shop.merchant_key)).toBe(shop.password);

    await page.getByRole('button', { name: 'Rotate signing password' }).click();
    await answer(page, true);
    const passwordPanel = page.getByRole('region', { name: 'New signing password' });
    await passwordPanel.waitFor();
    const password = await passwordPanel.getByLabel('Signing password').inputValue();
    expect(password).not.toBe(shop.password);
    expect(password).toMatch(/^[0-9a-f]{32}$/);
    expect((await paidPayment(service, { merchant_key: shop.merchant_key, password })).status.status).toBe('settled');
    // The old one keeps working for a day: a live integration switches without a failed request.
    await passwordPanel.getByText('The previous password is accepted too until 2030-06-04 09:00:00 UTC.').waitFor();
    expect((await paidPayment(service, shop)).status.status).toBe('settled');

    await page.getByRole('button', { name: 'Rotate webhook secret' }).click();
    expect((await confirmationLines(page)).lines[0]).toContain('keeps signing beside it for 24 hours');
    await answer(page, true);
    const secretPanel = page.getByRole('region', { name: 'New webhook secret' });
    await secretPanel.waitFor();
    const secret = await secretPanel.getByLabel('Webhook secret').inputValue();
    await secretPanel.getByText('The previous secret signs too until 2030-06-04 09:00:00 UTC.').waitFor();
    expect(await service.deps.secrets.webhookSecretsOf(shop.merchant_key, clock.now())).toEqual([secret, oldSecret]);

    await page.reload();
    await heading(page, 'Merchant Rotating Shop').waitFor();
    const changes = page.getByRole('table', { name: 'Settings changes' });
    await changes.getByRole('cell', { name: 'merchant.rotate-webhook-secret', exact: true }).waitFor();
    expect(await changes.getByRole('cell', { name: 'merchant.rotate-password', exact: true }).count()).toBe(1);
    // Shown once: a reload shows neither value.
    expect(await page.content()).not.toContain(password);
    expect(await page.content()).not.toContain(secret);
  });
});
