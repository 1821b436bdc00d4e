import { ManualClock } from '../../lambdas/ports/clock';
import { openSession, paidPayment, refusal, sessionBody, statusOf, storedPayment, submitPage, TEST_PAN, type Session } from '../support/payments';
import { serviceForFile } from '../support/suites';

/**
 * Saved cards (seed spec 2.1 req_token / card_token, protocol.md §2, §6): a payment with
 * req_token stores the card and reports its card_token; a later session offers the saved card
 * masked on the page, and the customer pays with it without typing the number.
 */
const SESSION = '/api/v1/session';
const T0 = new Date('2030-03-10T09:00:00.000Z');
const TOKEN_INVALID = refusal(205005, 'CARD_TOKEN_INVALID');
const TOKEN_EXPIRED = refusal(205006, 'CARD_TOKEN_EXPIRED');

const clock = new ManualClock(T0);
const { service, merchants: [shop, otherShop] } = serviceForFile({ clock, clockAt: T0, merchants: [{ name: 'Gift Shop' }, { name: 'Other Shop' }] });

/** A card token of `merchant`, from a req_token payment paid with 01/38. */
async function savedCardToken(merchant = shop): Promise<string> {
  const paid = await paidPayment(service, merchant, { reqToken: true });
  expect(paid.status.status).toBe('settled');
  const token = paid.status.card_token;
  if (!token) throw new Error('no card token');
  return token;
}

const pageOf = async (session: Session) => {
  const res = await service.request({ method: 'GET', path: session.path });
  expect(res.status).toBe(200);
  return res.text;
};

/** A token item written straight to the vault, for cards the sandbox cannot produce. */
async function vaultToken(expMonth: number, expYear: number, merchant = shop): Promise<string> {
  const token = `${expYear}${String(expMonth).padStart(2, '0')}`.padEnd(64, 'e');
  await service.deps.tokens.saveCardToken({
    token,
    merchantKey: merchant.merchant_key,
    storedCredentialRef: 'sbxcred_written_by_test',
    card: { mask: '411111****1111', brand: 'visa', expMonth, expYear, holder: 'John Doe' },
    createdAt: T0.toISOString(),
  });
  return token;
}

describe('saving a card (req_token)', () => {
  it('reports a 64-character card_token once the payment is settled', async () => {
    const paid = await paidPayment(service, shop, { reqToken: true });
    expect(paid.status).toMatchObject({ status: 'settled', card_token: expect.stringMatching(/^[A-Za-z0-9]{64}$/) });
  });

  it('accepts req_token sent as "Y"', async () => {
    const paid = await paidPayment(service, shop, { reqToken: 'Y' });
    expect(paid.status.card_token).toHaveLength(64);
  });

  it('issues no token without req_token, nor for a declined payment', async () => {
    const plain = await paidPayment(service, shop);
    expect(plain.status.card_token).toBeUndefined();
    const declined = await paidPayment(service, shop, { reqToken: true, card: '02/38', close: true });
    expect(declined.status).toMatchObject({ status: 'decline' });
    expect(declined.status.card_token).toBeUndefined();
  });

  it('keeps neither the card number nor the CVV anywhere in storage', async () => {
    await savedCardToken();
    const stored = JSON.stringify(await service.tableItems());
    expect(stored).not.toContain(TEST_PAN);
    expect(stored).toContain('411111****1111');
  });
});

describe('paying with a saved card', () => {
  it('lists the saved card masked on the page (brand, last 4, expiry) and pays with it, no number typed', async () => {
    const token = await savedCardToken();
    const session = await openSession(service, shop, { cardToken: [token] });
    const html = await pageOf(session);
    expect(html).toContain(`<input type="radio" name="saved_card" value="${token}" checked> VISA ending in 1111, expires 01/38`);
    expect(html).not.toContain(TEST_PAN);

    const page = await submitPage(service, session, { savedCard: token });
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('https://shop.example/success');
    const status = await statusOf(service, shop, session.paymentId);
    expect(status.status).toBe('settled');
    const item = await storedPayment(service, session.paymentId);
    expect(item.card).toMatchObject({ mask: '411111****1111', expMonth: 1, expYear: 2038 });
    expect(item.transactions).toEqual([expect.objectContaining({ type: 'sale', status: 'success' })]);
  });

  it('accepts card_token as a single string', async () => {
    const token = await savedCardToken();
    const session = await openSession(service, shop, { cardToken: token });
    expect(await pageOf(session)).toContain(`value="${token}"`);
    expect((await submitPage(service, session, { savedCard: token })).status).toBe(303);
    await expect(statusOf(service, shop, session.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('still takes a new card when the customer chooses it over the saved one', async () => {
    const token = await savedCardToken();
    const session = await openSession(service, shop, { cardToken: [token] });
    const page = await submitPage(service, session, { savedCard: 'new', card: '01/38' });
    expect(page.status).toBe(303);
    await expect(statusOf(service, shop, session.paymentId)).resolves.toMatchObject({ status: 'settled' });
  });

  it('ignores req_token when card_token is given: no new token is issued', async () => {
    const token = await savedCardToken();
    const session = await openSession(service, shop, { cardToken: [token], reqToken: true });
    await submitPage(service, session, { savedCard: token });
    const status = await statusOf(service, shop, session.paymentId);
    expect(status.status).toBe('settled');
    expect(status.card_token).toBeUndefined();
  });

  it('refuses a token the session does not offer (a tampered form) and charges nothing', async () => {
    const [offered, other] = await Promise.all([savedCardToken(), savedCardToken()]);
    const session = await openSession(service, shop, { cardToken: [offered] });
    const page = await submitPage(service, session, { savedCard: other });
    expect(page.status).toBe(400);
    const item = await storedPayment(service, session.paymentId);
    expect(item.status).toBe('prepare');
    expect(item.transactions).toEqual([]);
  });
});

describe('card_token refusals at session creation', () => {
  it('answers 205005 for an unknown token', async () => {
    const res = await service.signedPost(SESSION, sessionBody(shop, { cardToken: ['Z'.repeat(64)] }), shop.password);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(TOKEN_INVALID);
  });

  it("answers 205005 for another merchant's token, exactly as for an unknown one", async () => {
    const theirs = await savedCardToken(otherShop);
    const res = await service.signedPost(SESSION, sessionBody(shop, { cardToken: [theirs] }), shop.password);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(TOKEN_INVALID);
  });

  it('answers 205006 for a card that expired before today', async () => {
    const token = await vaultToken(2, 2030);
    const res = await service.signedPost(SESSION, sessionBody(shop, { cardToken: [token] }), shop.password);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(TOKEN_EXPIRED);
  });

  it('accepts a card in its expiry month (valid through its last day)', async () => {
    const token = await vaultToken(3, 2030);
    const session = await openSession(service, shop, { cardToken: [token] });
    expect(await pageOf(session)).toContain('VISA ending in 1111, expires 03/30');
  });

  it('answers 205006 for a saved 01/38 card once February 2038 has come', async () => {
    const token = await savedCardToken();
    clock.set('2038-01-31T23:59:59.000Z');
    expect((await service.signedPost(SESSION, sessionBody(shop, { cardToken: [token] }), shop.password)).status).toBe(200);
    clock.set('2038-02-01T00:00:00.000Z');
    const res = await service.signedPost(SESSION, sessionBody(shop, { cardToken: [token] }), shop.password);
    expect(res.status).toBe(400);
    expect(res.json).toEqual(TOKEN_EXPIRED);
  });
});

describe('a saved card that expires while its link is open', () => {
  it('is refused at payment with a clear message, and nothing is charged', async () => {
    // A card valid through March 2031, offered by a 12-hour link opened on its last evening.
    const token = await vaultToken(3, 2031);
    clock.set('2031-03-31T20:00:00.000Z');
    const session = await openSession(service, shop, { cardToken: [token], extra: { session_expiry: 720 } });
    clock.set('2031-04-01T00:00:01.000Z');
    const res = await submitPage(service, session, { savedCard: token });
    expect(res.status).toBe(400);
    expect(res.text).toContain('This saved card has expired. Choose another card.');
    const payment = await storedPayment(service, session.paymentId);
    expect(payment).toMatchObject({ status: 'prepare', transactions: [] });
    expect(payment.attempt).toBeUndefined();
  });
});
