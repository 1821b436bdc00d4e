import { serviceForFile } from '../support/suites';
import { openSession, submitPage } from '../support/payments';

/**
 * Without JavaScript the server is the only validator: a refused form comes back with what the
 * customer typed, except the card number and the security code, which are never echoed.
 */
describe('a refused form keeps what the customer typed', () => {
  const { service, merchants: [merchant] } = serviceForFile({ merchants: [{}] });

  it('refills expiry, name, e-mail and country, never the card number or CVV', async () => {
    const session = await openSession(service, merchant, { extra: { customer: { name: 'John Doe' }, billing_address: null } });
    const res = await submitPage(service, session, {
      number: '4111111111111112',
      cvv: '987',
      card: '01/38',
      holder: 'Jane Roe',
      fields: { email: 'jane@example.com', country: 'DE' },
    });
    expect(res.status).toBe(400);
    expect(res.text).toContain('Invalid card number');
    expect(res.text).toMatch(/name="card_expiry"[^>]*value="01\/38"/);
    expect(res.text).toMatch(/name="card_holder"[^>]*value="Jane Roe"/);
    expect(res.text).toMatch(/name="email"[^>]*value="jane@example.com"/);
    expect(res.text).toContain('<option value="DE" selected>');
    expect(res.text).not.toContain('4111111111111112');
    // The CVV as a value of its own anywhere: not inside the page's random ids, nonces and tokens,
    // where three digits turn up by chance (a whole-page substring check failed on one).
    expect(res.text).not.toMatch(/name="card_cvv"[^>]*value="[^"]/);
    expect(res.text).not.toMatch(/(?<![\w+/=-])987(?![\w+/=-])/);
  });

  it.each([
    ['digits only', '4111111111111111'],
    ['grouped with spaces', '4111 1111 1111 1111'],
    ['grouped with dots', '4111.1111.1111.1111'],
    ['grouped with slashes', '4111/1111/1111/1111'],
    ['grouped with dashes, inside an e-mail', 'x4111-1111-1111-1111@example.com'],
  ])('never fills back a card number typed into the name or e-mail field (%s)', async (_how, typed) => {
    const session = await openSession(service, merchant, { extra: { customer: { name: 'John Doe' }, billing_address: null } });
    const res = await submitPage(service, session, { number: '1', cvv: '987', card: '01/38', holder: typed, fields: { email: typed, country: 'DE' } });
    expect(res.status).toBe(400);
    expect(res.text.replace(/\D/g, ' ')).not.toMatch(/4111\s*1111\s*1111\s*1111/);
    expect(res.text).not.toMatch(/name="card_holder"[^>]*value="[^"]/);
    expect(res.text).not.toMatch(/name="email"[^>]*value="[^"]/);
    // What was not card-shaped still comes back.
    expect(res.text).toMatch(/name="card_expiry"[^>]*value="01\/38"/);
    expect(res.text).toContain('<option value="DE" selected>');
  });

  it('does not take a card number typed into the e-mail field as the customer\'s e-mail', async () => {
    const session = await openSession(service, merchant, { extra: { customer: { name: 'John Doe' }, billing_address: null } });
    const res = await submitPage(service, session, { card: '01/38', fields: { email: '4111111111111111@example.com', country: 'DE' } });
    expect(res.status).toBe(400);
    const stored = JSON.stringify(await service.deps.store.findPayment(session.paymentId));
    expect(stored).not.toContain('4111111111111111');
  });

  it('escapes what it echoes', async () => {
    const session = await openSession(service, merchant, { extra: { customer: { name: 'John Doe' } } });
    const res = await submitPage(service, session, { number: '1', holder: '"><script>alert(1)</script>' });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('<script>alert(1)</script>');
    expect(res.text).toContain('&quot;&gt;&lt;script&gt;');
  });
});
