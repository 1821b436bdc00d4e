import { validSessionBody } from '../support/fixtures';
import { serviceForFile } from '../support/suites';

/**
 * The local runner reports every refused request with its reason, as an integrator needs it when a
 * call fails: the route (never a link token from the path), the status and the answer's messages,
 * never the request's body (card data typed on the page or sent to the API stays out of the log).
 */
const { service, merchants: [shop] } = serviceForFile({ merchants: [{ name: 'Log Shop' }] });

const last = () => service.refusals.at(-1) ?? '';

describe('refused requests in the runner\'s log', () => {
  it('names an unknown path, and a known path asked with the wrong method, as the fallback answered them', async () => {
    await service.request({ method: 'GET', path: '/api/v1/sessions' });
    expect(last()).toBe('refused GET NotFound ($default) 404: No route: GET /api/v1/sessions does not exist.');
    await service.request({ method: 'GET', path: '/api/v1/session' });
    expect(last()).toBe('refused GET NotFound ($default) 405: Method GET is not allowed on /api/v1/session; use POST.');
  });

  it('names a path with a link token by its template when the method is wrong', async () => {
    const session = await service.signedPost<{ redirect_url: string }>('/api/v1/session', validSessionBody(shop.merchant_key), shop.password);
    const path = new URL(session.json.redirect_url).pathname;
    await service.request({ method: 'PUT', path, headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(last()).toBe('refused PUT NotFound ($default) 405: Method PUT is not allowed on /auth/{token}; use GET or POST.');
    expect(service.refusals.join('\n')).not.toContain(path.split('/').at(-1)!);
  });

  it('gives a validation refusal with its field messages, by route', async () => {
    const res = await service.signedPost('/api/v1/session', validSessionBody(shop.merchant_key, { language: 'xx' }), shop.password);
    expect(res.status).toBe(400);
    expect(last()).toBe('refused POST CreateSession (POST /api/v1/session) 400: Request data is invalid. language: This value is not valid.');
  });

  it("says what an amount's refusal means (JPY takes no decimals), the merchant's answer in the protocol's words", async () => {
    const res = await service.signedPost('/api/v1/session', validSessionBody(shop.merchant_key, { order: { number: 'jpy-1', amount: '1500.00', currency: 'JPY', description: 'Tickets' } }), shop.password);
    expect([res.status, res.json]).toEqual([400, { error_code: 0, error_message: 'Request data is invalid.', errors: [{ error_code: 100000, error_message: 'order.amount: This value is not valid.' }] }]);
    expect(last()).toBe(
      "refused POST CreateSession (POST /api/v1/session) 400: Request data is invalid. order.amount: This value is not valid. (an amount is a string with exactly its currency's decimals: 10.00 USD, 1500 JPY (none), 10.250 KWD; docs/errors.md)",
    );
  });

  it('says why an operator request was refused', async () => {
    await service.request({ method: 'GET', path: '/admin/api/payments', headers: {} });
    expect(last()).toBe('refused GET AdminPayments (GET /admin/api/payments) 401: no operator token (Authorization: Bearer …)');
  });

  it('never logs the card data of a refused page post, nor the link token of its path', async () => {
    const session = await service.signedPost<{ redirect_url: string }>('/api/v1/session', validSessionBody(shop.merchant_key), shop.password);
    const path = new URL(session.json.redirect_url).pathname;
    const token = path.split('/').at(-1)!;
    const res = await service.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ card_number: '4111 1111 1111 1112', card_expiry: '01/38', card_cvv: '987', card_holder: 'John Doe' }).toString(),
    });
    expect(res.status).toBe(400);
    const line = last();
    expect(line).toBe('refused POST CheckoutPay (POST /auth/{token}) 400: an HTML page (the page shows what to correct)');
    const all = service.refusals.join('\n');
    for (const secret of [token, '4111', '987']) expect(all).not.toContain(secret);
  });

  it('masks anything shaped like a card number in an unknown path', async () => {
    await service.request({ method: 'GET', path: '/pay/4111111111111111' });
    expect(last()).toBe('refused GET NotFound ($default) 404: No route: GET /pay/411111******1111 does not exist.');
  });
});
