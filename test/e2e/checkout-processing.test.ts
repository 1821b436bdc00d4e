import type { Page, Request } from 'playwright-core';
import { setDeps } from '../../lambdas/container';
import type { Acquirer, AuthorizeRequest } from '../../lambdas/ports/acquirer';
import { ManualClock } from '../../lambdas/ports/clock';
import { reconcileDue } from '../../lambdas/use-cases/reconcile';
import { RECONCILE_AFTER_MS } from '../../lambdas/use-cases/work-queue';
import { cards, payWith, screenshot, seriousA11yViolations } from '../support/browser';
import { checkoutHarness } from '../support/checkout-harness';
import { statusOf } from '../support/merchant-site';
import { asFunction } from '../support/table-access';
import { until } from '../support/until';

/**
 * A payment whose outcome is not known when the customer presses Pay (the sandbox's 08/38: the
 * acquirer does not answer) keeps the customer on our processing page, which looks at our record
 * of the payment until the reconciler has recorded the outcome, then goes on as a payment does:
 * success_url, the decline, or a final decline's cancel_url. Never cancel_url or error_url by itself.
 */
const clock = new ManualClock(new Date());
const h = checkoutHarness({ shop: { name: 'Gift Shop', settings: { returnParams: true } }, service: { clock } });
const { open, checkout, landOn } = h;

const onProcessingPage = (page: Page) => page.locator('h1#title[data-state="processing"]').waitFor();
/** The reconcile job as it runs in the cloud (its table calls checked against its grant), once the attempt is due. */
async function reconcile(): Promise<void> {
  clock.advance(RECONCILE_AFTER_MS + 1_000);
  const report = await asFunction('ReconcileAttempts', () => reconcileDue(h.service.deps));
  expect(report).toMatchObject({ settled: 1 });
}
/** Where the merchant site saw the customer arrive, from now on. */
const visitsFrom = (start: number) => h.site.visits.slice(start).map((v) => v.path);
const statusLooks = (page: Page): Request[] => {
  const seen: Request[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.endsWith('/status')) seen.push(r);
  });
  return seen;
};
const waitForLooks = async (looks: readonly Request[], n: number) => {
  await until(() => looks.length >= n, { everyMs: 50 });
  expect(looks.length).toBeGreaterThanOrEqual(n);
};

/**
 * The acquirer decides, but its answer to the page is lost (a reset connection): the page cannot
 * know the outcome; the reconciler finds it by the attempt's key.
 */
const answersLost = (real: Acquirer): Acquirer =>
  Object.assign(Object.create(real) as Acquirer, {
    authorize: async (r: AuthorizeRequest) => {
      await real.authorize(r);
      throw new Error('connection reset before the answer');
    },
  });

async function payWithAnswerLost(page: Page, card: (typeof cards)[keyof typeof cards]): Promise<void> {
  setDeps({ ...h.service.deps, acquirer: answersLost(h.service.deps.acquirer) });
  try {
    await payWith(page, card);
    await onProcessingPage(page);
  } finally {
    setDeps(h.service.deps);
  }
}

describe('an in-flight payment (08/38)', () => {
  it('keeps the customer on the processing page until the reconciler settles it, then lands on success_url', async () => {
    const page = await open();
    const looks = statusLooks(page);
    const link = await checkout();
    const start = h.site.visits.length;
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await onProcessingPage(page);

    expect(new URL(page.url()).origin).toBe(h.service.baseUrl);
    expect(await page.locator('h1#title').textContent()).toBe('Your payment is being processed');
    expect(await page.locator('#processing-status').textContent()).toBe('Waiting for the result of your payment…');
    await screenshot(page, 'processing-waiting');
    // Several looks at the payment while the acquirer stays silent: still here, nowhere else.
    await waitForLooks(looks, 2);
    expect(await page.locator('h1#title').getAttribute('data-state')).toBe('processing');
    expect(visitsFrom(start)).toEqual([]);
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });

    await reconcile();
    await landOn(page, '/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
    expect(visitsFrom(start)).toEqual(['/success']);
    await expect(statusOf(h.service, h.shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  }, 90_000);

  it('answers the page\'s look with a tiny JSON of our record only, and a link it does not know with 404 in the error envelope', async () => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await onProcessingPage(page);

    const path = `${new URL(link.url).pathname}/status`;
    const waiting = await h.service.request({ method: 'GET', path });
    expect(waiting.status).toBe(200);
    expect(waiting.headers['cache-control']).toBe('no-store');
    expect(waiting.json).toEqual({ state: 'processing' });

    await reconcile();
    expect((await h.service.request({ method: 'GET', path })).json).toEqual({ state: 'done' });
    const unknown = await h.service.request({ method: 'GET', path: `/auth/${'A'.repeat(45)}/status` });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ error_code: 208050, error_message: 'Payment link not found.', errors: [] });
  });

  it('shows the decline the reconciler finds, with the tries left, on the page; the shop sees nobody', async () => {
    const page = await open();
    const link = await checkout();
    const start = h.site.visits.length;
    await page.goto(link.url);
    await payWithAnswerLost(page, cards.declined);

    await reconcile();
    const alert = page.getByRole('alert').filter({ hasText: 'declined' });
    await alert.waitFor();
    expect(await alert.textContent()).toBe('Your bank declined the payment. Check the card details and try again, use another card, or contact your bank.You can try 2 more times.');
    expect(new URL(page.url()).pathname).toBe(`${new URL(link.url).pathname}/complete`);
    expect(visitsFrom(start)).toEqual([]);

    // The same link pays with another card.
    await payWith(page, cards.approved);
    await landOn(page, '/success');
  });

  it('goes to cancel_url with the return parameters when the decline it waited for was the last one allowed', async () => {
    const strict = await h.service.createMerchant({ name: 'Strict Shop', settings: { returnParams: true, maxDeclines: 1 } });
    const page = await open();
    const link = await checkout({}, strict);
    const start = h.site.visits.length;
    await page.goto(link.url);
    await payWithAnswerLost(page, cards.declined);
    expect(visitsFrom(start)).toEqual([]);

    await reconcile();
    await landOn(page, '/cancel');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
    await expect(statusOf(h.service, strict, link.paymentId)).resolves.toMatchObject({ status: 'decline' });
  });

  it('stops looking once the link has expired and leaves "Check again" to the customer', async () => {
    const page = await open();
    const link = await checkout({ session_expiry: 5 });
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await onProcessingPage(page);

    clock.advance(6 * 60_000);
    const looks = statusLooks(page);
    await page.goto(link.url);
    await onProcessingPage(page);
    expect(await page.locator('#processing-status').textContent()).toBe('This is taking longer than usual. Check again in a few minutes; please do not pay again.');
    await new Promise((r) => setTimeout(r, 3_000));
    expect(looks).toEqual([]);

    await reconcile();
    await page.getByRole('link', { name: 'Check again' }).click();
    await landOn(page, '/success');
  });

  it('offers the way back to the shop as error_url, the shop\'s page for an open outcome, never cancel_url', async () => {
    const page = await open();
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await onProcessingPage(page);
    expect(await page.getByRole('link', { name: 'Back to the shop' }).getAttribute('href')).toBe(h.site.urls().error_url);
    await reconcile();
  });
});

describe('without JavaScript', () => {
  it('reloads the check by itself and lands on success_url once the reconciler has settled it', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    const start = h.site.visits.length;
    await page.goto(link.url);
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), payWith(page, cards.noAnswer)]);
    expect(answer.status()).toBe(202);
    await onProcessingPage(page);
    expect(await answer.text()).toMatch(/<noscript><meta http-equiv="refresh" content="2;url=\/auth\/[^/"]+\/complete"><\/noscript>/);

    // The refresh re-reads the outcome (GET /complete), and the customer stays while it is open.
    const check = await page.waitForResponse((r) => new URL(r.url()).pathname.endsWith('/complete'));
    expect(check.status()).toBe(202);
    await onProcessingPage(page);
    expect(visitsFrom(start)).toEqual([]);

    await reconcile();
    await landOn(page, '/success');
    expect(new URL(page.url()).searchParams.get('payment_id')).toBe(link.paymentId);
  });

  it('shows the decline the reconciler finds, with the form to try again', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout();
    const start = h.site.visits.length;
    await page.goto(link.url);
    await payWithAnswerLost(page, cards.declined);
    await reconcile();
    await page.getByRole('alert').filter({ hasText: 'Your bank declined the payment.' }).waitFor();
    expect(await page.locator('#pay-form').count()).toBe(1);
    expect(visitsFrom(start)).toEqual([]);
  });

  it('leaves "Check again" once it stops refreshing (the link expired)', async () => {
    const page = await open({ javaScriptEnabled: false });
    const link = await checkout({ session_expiry: 5 });
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await onProcessingPage(page);
    clock.advance(6 * 60_000);
    const stalled = await page.goto(link.url);
    expect(await stalled?.text()).not.toContain('http-equiv="refresh"');
    await reconcile();
    await page.getByRole('link', { name: 'Check again' }).click();
    await landOn(page, '/success');
  });
});

describe('the processing page', () => {
  it('fetches only its own status under a CSP with the page\'s nonce, and reports no violation', async () => {
    const page = await open();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    const link = await checkout();
    await page.goto(link.url);
    const [answer] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), payWith(page, cards.noAnswer)]);
    const csp = answer.headers()['content-security-policy'] ?? '';
    const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    expect(csp).toContain("connect-src 'self'");
    expect(await answer.text()).toContain(`<script nonce="${nonce}">`);
    const looks = statusLooks(page);
    await waitForLooks(looks, 1);
    expect(violations).toEqual([]);
    // Any other page of the link fetches nothing.
    const form = await page.request.get((await checkout()).url);
    expect(form.headers()['content-security-policy']).toContain("connect-src 'none'");
    await reconcile();
  });

  it('is accessible: a live region for the status, no serious or critical axe violation', async () => {
    const page = await h.audited();
    const link = await checkout();
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await onProcessingPage(page);
    expect(await page.locator('#processing-status').getAttribute('aria-live')).toBe('polite');
    expect(await page.locator('#processing-status').getAttribute('role')).toBe('status');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await reconcile();
  });

  it('speaks the session\'s language', async () => {
    const page = await open();
    const link = await checkout({ language: 'de' });
    await page.goto(link.url);
    await payWith(page, cards.noAnswer);
    await onProcessingPage(page);
    expect(await page.locator('h1#title').textContent()).toBe('Ihre Zahlung wird verarbeitet');
    expect(await page.getByRole('link', { name: 'Erneut prüfen' }).count()).toBe(1);
    await reconcile();
  });
});
