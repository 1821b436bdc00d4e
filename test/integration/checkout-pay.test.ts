import { sandboxLedger, type SandboxLedgerRecord } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { storedPaymentItems } from '../support/payments';
import { TTL_ATTRIBUTE } from '../../lambdas/adapters/dynamodb/keys';
import { setDeps } from '../../lambdas/container';
import type { Payment } from '../../lambdas/domain/payment';
import { logger } from '../../lambdas/observability/logger';
import type { Acquirer, AuthorizeRequest } from '../../lambdas/ports/acquirer';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';
import { createCheckout, statusOf, type CheckoutLink } from '../support/merchant-site';
import { serviceForFile } from '../support/suites';

/**
 * POST /auth/{token} (the hosted page's form) over real HTTP, through the real handlers, the
 * sandbox acquirer and the DynamoDB engine: one charge per link, what is stored and what never is.
 */
const URLS = {
  success_url: 'https://shop.example/success',
  cancel_url: 'https://shop.example/cancel',
  error_url: 'https://shop.example/error',
};
const PAN = '4111111111111111';
/** Distinctive, so that finding it anywhere means it was stored. */
const CVV = '987';
const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) CheckoutIntegrationTest/1.0';

const { service, merchants: [shop, strictShop] } = serviceForFile({
  merchants: [
    { name: 'Gift Shop', settings: { returnParams: true } },
    { name: 'Strict Shop', settings: { returnParams: true, maxDeclines: 2 } },
  ],
});

/** The form the page posts: card fields, then what its script collects of the browser. */
function cardForm(expiry: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    method: 'card',
    card_number: '4111 1111 1111 1111',
    card_expiry: expiry,
    card_cvv: CVV,
    card_holder: 'John Doe',
    browser_language: 'de-DE',
    browser_screen_width: '1920',
    browser_screen_height: '1080',
    browser_color_depth: '24',
    browser_tz_offset: '-60',
    browser_java: 'false',
    ...extra,
  };
}

interface PageAnswer {
  readonly status: number;
  readonly location: string | null;
  readonly html: string;
}

async function answer(res: Response): Promise<PageAnswer> {
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}

/** The browser submitting the page's form, without following the redirect. */
const submit = async (url: string, form: Record<string, string>): Promise<PageAnswer> =>
  answer(
    await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': USER_AGENT, 'accept-language': 'en-GB,en;q=0.9' },
      body: new URLSearchParams(form).toString(),
    }),
  );

const get = async (url: string): Promise<PageAnswer> => answer(await fetch(url, { redirect: 'manual', headers: { 'user-agent': USER_AGENT } }));

const checkout = (merchant: MerchantCredentials = shop, overrides: Record<string, unknown> = {}) => createCheckout(service, merchant, { ...URLS, ...overrides });

/** The payment item exactly as stored (storage attributes included). */
const storedItem = (paymentId: string): Promise<Record<string, unknown>> => storedPaymentItems(service.deps.db, service.backend.tableName, paymentId);
const storedPayment = async (paymentId: string) => (await storedItem(paymentId)) as unknown as Payment;

/** The sandbox acquirer's own records of a payment's attempts. */
async function ledgerEntries(paymentId: string): Promise<SandboxLedgerRecord[]> {
  return sandboxLedger(service.deps.db, service.backend.tableName, paymentId);
}

/** Runs with deps.acquirer replaced by a wrapper around the sandbox, then puts the original back. */
async function withAcquirer<T>(wrap: (real: Acquirer) => Acquirer, run: () => Promise<T>): Promise<T> {
  setDeps({ ...service.deps, acquirer: wrap(service.deps.acquirer) });
  try {
    return await run();
  } finally {
    setDeps(service.deps);
  }
}

function countingAuthorize(calls: AuthorizeRequest[]): (real: Acquirer) => Acquirer {
  return (real) =>
    Object.assign(Object.create(real) as Acquirer, {
      authorize: (r: AuthorizeRequest) => {
        calls.push(r);
        return real.authorize(r);
      },
    });
}

/** Opens a 3-D Secure or bank page and posts one answer on it: the page's own answer, not followed. */
async function postAnswer(challengeUrl: string, form: Record<string, string>): Promise<PageAnswer> {
  const page = await get(challengeUrl);
  expect(page.status).toBe(200);
  // The page carries where to come back (from its own address, never from storage) in a hidden field.
  const back = /name="return" value="([^"]+)"/.exec(page.html)?.[1];
  expect(back).toBe(new URL(challengeUrl).searchParams.get('return'));
  return submit(new URL(new URL(challengeUrl).pathname, challengeUrl).toString(), { ...form, return: back ?? '' });
}

/** Follows a 3-D Secure or bank page as the customer would: open it, answer it, come back. */
async function answerChallenge(challengeUrl: string, form: Record<string, string>): Promise<PageAnswer> {
  const answered = await postAnswer(challengeUrl, form);
  expect(answered.status).toBe(303);
  return get(new URL(answered.location ?? '', challengeUrl).toString());
}

describe('one charge per link', () => {
  it('charges once when 20 submissions of 01/38 race on one link; the others see the paid or processing page', async () => {
    const link = await checkout();
    const calls: AuthorizeRequest[] = [];
    const answers = await withAcquirer(countingAuthorize(calls), () =>
      Promise.all(Array.from({ length: 20 }, () => submit(link.url, cardForm('01/38')))),
    );

    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const winners = answers.filter((a) => a.status === 303);
    expect(winners).toHaveLength(1);
    expect(winners[0]?.location).toMatch(/^https:\/\/shop\.example\/success\?payment_id=/);
    for (const loser of answers.filter((a) => a.status !== 303)) {
      expect([200, 202]).toContain(loser.status);
      expect(loser.html).toMatch(/This order is already paid|Your payment is being processed/);
      expect(loser.html).not.toContain('id="pay-form"');
    }

    expect(calls).toHaveLength(1);
    expect(calls[0]?.idempotencyKey).toBe(`${link.paymentId}.1`);
    expect(await ledgerEntries(link.paymentId)).toHaveLength(1);
    const payment = await storedPayment(link.paymentId);
    expect(payment.status).toBe('settled');
    expect(payment.attempt).toBe(1);
    expect(payment.transactions.filter((t) => t.type === 'sale' && t.status === 'success')).toHaveLength(1);
    expect(payment.transactions).toHaveLength(1);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('does not charge a paid link again', async () => {
    const link = await checkout();
    expect((await submit(link.url, cardForm('01/38'))).status).toBe(303);
    const calls: AuthorizeRequest[] = [];
    const again = await withAcquirer(countingAuthorize(calls), () => submit(link.url, cardForm('01/38')));
    expect(again.status).toBe(200);
    expect(again.html).toContain('This order is already paid');
    expect(calls).toEqual([]);
    expect(await ledgerEntries(link.paymentId)).toHaveLength(1);
  });

  it('records the attempt (status prepare, in flight, kept from TTL) before the acquirer is called', async () => {
    const link = await checkout();
    const seen: Record<string, unknown>[] = [];
    await withAcquirer(
      (real) =>
        Object.assign(Object.create(real) as Acquirer, {
          authorize: async (r: AuthorizeRequest) => {
            seen.push(await storedItem(r.paymentId));
            return real.authorize(r);
          },
        }),
      () => submit(link.url, cardForm('01/38')),
    );

    expect(seen).toHaveLength(1);
    const atCall = seen[0] as Record<string, unknown>;
    expect(atCall.status).toBe('prepare');
    // The capture mode the attempt is sent with is kept with it (a sale here: the merchant is not DMS).
    expect(atCall.inFlight).toEqual({ attempt: 1, transId: expect.any(String), startedAt: expect.any(String), idempotencyKey: `${link.paymentId}.1`, authorizeOnly: false });
    expect(atCall.attempt).toBe(1);
    expect(atCall[TTL_ATTRIBUTE]).toBeUndefined();
    expect(atCall.workPk).toMatch(/^reconcile#\d+$/);
    const after = await storedPayment(link.paymentId);
    expect(after.status).toBe('settled');
    expect(after.inFlight).toBeUndefined();
  });
});

describe('what is stored of the card and the browser', () => {
  let output: string;
  let restore: () => void;
  beforeEach(() => {
    output = '';
    const capture = (chunk: unknown) => {
      output += String(chunk);
      return true;
    };
    const spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation(capture),
      jest.spyOn(process.stderr, 'write').mockImplementation(capture),
      ...(['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => jest.spyOn(console, m).mockImplementation((...args: unknown[]) => void capture(args.map(String).join(' ')))),
    ];
    // The logger is silent under Jest; every level is on here so that a leak would show. Powertools
    // puts the configured level back at each invocation (debug sampling), so that step is held off.
    spies.push(jest.spyOn(logger, 'refreshSampleRateCalculation').mockImplementation(() => undefined));
    logger.setLogLevel('DEBUG');
    restore = () => {
      logger.setLogLevel('SILENT');
      spies.forEach((s) => s.mockRestore());
    };
  });
  afterEach(() => restore());

  /** Every value anywhere in a structure. */
  const leaves = (value: unknown): unknown[] =>
    value !== null && typeof value === 'object' ? Object.values(value).flatMap(leaves) : [value];
  const keysOf = (value: unknown): string[] =>
    value !== null && typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]) : [];

  it('never stores or logs the card number or the CVV, through approvals, declines and challenges', async () => {
    const approved = await checkout();
    const declined = await checkout();
    const challenged = await checkout();
    const noAnswer = await checkout();
    const invalid = await checkout();
    await submit(approved.url, cardForm('01/38'));
    await submit(declined.url, cardForm('02/38'));
    await submit(challenged.url, cardForm('05/38'));
    await submit(noAnswer.url, cardForm('08/38'));
    const refused = await submit(invalid.url, cardForm('13/38'));
    expect(refused.status).toBe(400);
    // Not even echoed into the page of a refused form.
    expect(refused.html).not.toContain(PAN);
    expect(refused.html).not.toContain('4111 1111 1111 1111');
    expect(refused.html).not.toContain(`value="${CVV}"`);

    const table = await service.tableItems();
    const dump = JSON.stringify(table);
    expect(dump).not.toContain(PAN);
    expect(dump).not.toContain('4111 1111 1111 1111');
    expect(leaves(table).filter((v) => String(v) === CVV)).toEqual([]);
    expect(keysOf(table).filter((k) => /cvv|cvc|security_?code|^pan$|card_?number/i.test(k))).toEqual([]);

    expect(output).not.toContain(PAN);
    expect(output).not.toContain('4111 1111 1111 1111');
    expect(output).not.toContain('4111+1111+1111+1111');
    expect(output).not.toMatch(new RegExp(`\\b${CVV}\\b`));
  });

  it('logs a failing acquirer with the card number masked; the customer sees the processing page, never a 500', async () => {
    const link = await checkout();
    const failed = await withAcquirer(
      (real) =>
        Object.assign(Object.create(real) as Acquirer, {
          // A careless adapter that puts the card number into its error message.
          authorize: async (r: AuthorizeRequest) => {
            throw new Error(`acquirer refused card ${r.instrument.kind === 'card' ? r.instrument.card.pan : ''}`);
          },
        }),
      () => submit(link.url, cardForm('01/38')),
    );

    // The outcome is unknown (the acquirer may have approved): not an error of ours to show as 500.
    expect(failed.status).toBe(202);
    expect(failed.html).toContain('Your payment is being processed');
    expect(failed.html).not.toContain(PAN);
    expect(output).toContain('acquirer call failed');
    expect(output).toContain('acquirer refused card 411111******1111');
    expect(output).not.toContain(PAN);
    // The attempt stays claimed: reconciliation asks the acquirer, the customer cannot pay twice.
    expect(await storedPayment(link.paymentId)).toMatchObject({ status: 'prepare', inFlight: { attempt: 1 } });
    expect((await get(link.url)).html).toContain('Your payment is being processed');
  });

  it('stores the card masked with brand and expiry and of the browser only its address; the acquirer gets the browser data 3-D Secure needs', async () => {
    const link = await checkout();
    const calls: AuthorizeRequest[] = [];
    expect((await withAcquirer(countingAuthorize(calls), () => submit(link.url, cardForm('01/38')))).status).toBe(303);
    expect(calls.map((c) => c.browser)).toEqual([
      {
        language: 'de-DE',
        screenWidth: 1920,
        screenHeight: 1080,
        colorDepth: 24,
        timeZoneOffsetMinutes: -60,
        javaEnabled: false,
        userAgent: USER_AGENT,
        acceptHeader: expect.any(String),
        ip: '127.0.0.1',
      },
    ]);
    const payment = await storedPayment(link.paymentId);
    expect(payment.card).toEqual({ mask: '411111****1111', brand: 'visa', expMonth: 1, expYear: 2038, holder: 'John Doe' });
    // What callbacks carry (customer_ip); the rest of the browser data was the acquirer's to use.
    expect(payment.customerIp).toBe('127.0.0.1');
    expect(payment.browser).toBeUndefined();
  });

  it('falls back to the request headers for the browser data when the page script did not run', async () => {
    const link = await checkout();
    const { method, card_number, card_expiry, card_cvv, card_holder } = cardForm('01/38');
    const calls: AuthorizeRequest[] = [];
    const paid = await withAcquirer(countingAuthorize(calls), () => submit(link.url, { method, card_number, card_expiry, card_cvv, card_holder } as Record<string, string>));
    expect(paid.status).toBe(303);
    expect(calls[0]?.browser).toMatchObject({ language: 'en-GB', userAgent: USER_AGENT });
    expect(calls[0]?.browser?.screenWidth).toBeUndefined();
  });
});

describe('challenges', () => {
  it.each([
    ['05/38', '3ds', { code: '123456', decision: 'confirm' }],
    ['12/38', 'redirect', { decision: 'confirm' }],
  ] as const)('%s: the status is %s while the customer is away, settled once they confirm', async (expiry, flow, confirm) => {
    const link = await checkout();
    const paid = await submit(link.url, cardForm(expiry));
    expect(paid.status).toBe(303);
    const challengeUrl = new URL(paid.location ?? '', link.url).toString();
    // The page has an unguessable key of its own; the way back names the link, in the browser only.
    expect(new URL(challengeUrl).pathname).toMatch(new RegExp(`^/sandbox/challenge/${link.paymentId}\\.1\\.[A-Za-z0-9_-]{22}$`));
    expect(new URL(challengeUrl).searchParams.get('return')).toBe(`${new URL(link.url).pathname}/complete`);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: flow });

    // Opening the link meanwhile points back to the pending confirmation.
    const meanwhile = await get(link.url);
    expect(meanwhile.html).toContain('Confirmation needed');

    const back = await answerChallenge(challengeUrl, confirm);
    expect(back.status).toBe(303);
    expect(back.location).toMatch(/^https:\/\/shop\.example\/success\?payment_id=/);
    const payment = await storedPayment(link.paymentId);
    expect(payment.status).toBe('settled');
    // The step to the challenge or bank, then the sale: the platform's sequence (protocol.md §7).
    expect(payment.transactions.map((t) => `${t.type}:${t.status}`)).toEqual([`${flow}:success`, 'sale:success']);
  });

  it('asks again after a wrong one-time code; the third wrong code declines, and the link takes another attempt', async () => {
    const link = await checkout();
    const paid = await submit(link.url, cardForm('05/38'));
    const challengeUrl = new URL(paid.location ?? '', link.url).toString();
    for (const left of [2, 1]) {
      const again = await postAnswer(challengeUrl, { code: '000000', decision: 'confirm' });
      expect(again.status).toBe(400);
      expect(again.html).toContain(`This code is not right. Check it and enter it again (${left} ${left === 1 ? 'try' : 'tries'} left).`);
      expect(again.html).toContain('id="code"');
      await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: '3ds' });
    }
    const back = await answerChallenge(challengeUrl, { code: '000000', decision: 'confirm' });
    expect(back.status).toBe(200);
    expect(back.html).toContain('Your bank could not confirm it was you. Try again, or use another card.');
    // Not final while the link takes another attempt: the status reads prepare (attempts.ts).
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });
    expect((await storedPayment(link.paymentId)).status).toBe('decline');
    expect((await submit(link.url, cardForm('01/38'))).status).toBe(303);
    expect((await storedPayment(link.paymentId)).attempt).toBe(2);
  });
});

it('pays after a mistyped one-time code corrected on the same page', async () => {
  const link = await checkout();
  const paid = await submit(link.url, cardForm('05/38'));
  const challengeUrl = new URL(paid.location ?? '', link.url).toString();
  expect((await postAnswer(challengeUrl, { code: '123465', decision: 'confirm' })).status).toBe(400);
  expect((await answerChallenge(challengeUrl, { code: '123456', decision: 'confirm' })).status).toBe(303);
  await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'settled' });
});

describe('declines', () => {
  it('takes declines up to maxDeclines, then sends the customer to cancel_url and closes the link', async () => {
    const link: CheckoutLink = await checkout(strictShop);
    const first = await submit(link.url, cardForm('02/38'));
    expect(first.status).toBe(200);
    expect(first.html).toContain('Your bank declined the payment. Check the card details and try again, use another card, or contact your bank.');
    expect(first.html).toContain('You can try once more.');

    const second = await submit(link.url, cardForm('02/38'));
    expect(second.status).toBe(303);
    const cancel = new URL(second.location ?? '');
    expect(`${cancel.origin}${cancel.pathname}`).toBe(URLS.cancel_url);
    expect(cancel.searchParams.get('payment_id')).toBe(link.paymentId);
    expect(cancel.searchParams.get('hash')).toMatch(/^[0-9a-f]{40}$/);

    const calls: AuthorizeRequest[] = [];
    const third = await withAcquirer(countingAuthorize(calls), () => submit(link.url, cardForm('01/38')));
    expect(third.status).toBe(410);
    expect(third.html).toContain('This payment link can no longer be used');
    expect(calls).toEqual([]);
    expect((await get(link.url)).status).toBe(410);
    const payment = await storedPayment(link.paymentId);
    expect(payment).toMatchObject({ status: 'decline', declines: 2, attempt: 2 });
    expect(await ledgerEntries(link.paymentId)).toHaveLength(2);
  });
});

describe('no answer from the acquirer', () => {
  it('leaves 08/38 in prepare with the attempt in flight, and keeps the customer on the processing page', async () => {
    const link = await checkout();
    const paid = await submit(link.url, cardForm('08/38'));
    // Not error_url nor cancel_url: either would read as "not paid" to a customer whose payment may settle.
    expect(paid.status).toBe(202);
    expect(paid.location).toBeNull();
    expect(paid.html).toContain('Your payment is being processed');

    const payment = await storedPayment(link.paymentId);
    expect(payment.status).toBe('prepare');
    expect(payment.inFlight).toMatchObject({ attempt: 1, idempotencyKey: `${link.paymentId}.1` });
    expect(payment.transactions).toEqual([]);
    await expect(statusOf(service, shop, link.paymentId)).resolves.toMatchObject({ status: 'prepare' });

    // The customer cannot pay again while the outcome is unknown.
    const again = await submit(link.url, cardForm('01/38'));
    expect(again.status).toBe(202);
    expect(again.html).toContain('Your payment is being processed');
    expect(await ledgerEntries(link.paymentId)).toHaveLength(1);
  });

  it('offers error_url as the way back while the outcome is open, and cancel_url only when the session has no error_url', async () => {
    const withError = await submit((await checkout()).url, cardForm('08/38'));
    expect(withError.html).toContain(`href="${URLS.error_url}"`);
    expect(withError.html).not.toContain(`href="${URLS.cancel_url}"`);
    const without = await submit((await checkout(shop, { error_url: undefined })).url, cardForm('08/38'));
    expect(without.status).toBe(202);
    expect(without.html).toContain(`href="${URLS.cancel_url}"`);
  });
});
