import { startTestService, type TestService } from '../support/service';
import { openSession, submitPage } from '../support/payments';
import type { MerchantCredentials } from '../../lambdas/use-cases/manage-merchants';

/**
 * Without JavaScript the server is the only validator: a refused form comes back with what the
 * customer typed, except the card number and the security code, which are never echoed.
 */
describe('a refused form keeps what the customer typed', () => {
  let service: TestService;
  let merchant: MerchantCredentials;

  beforeAll(async () => {
    service = await startTestService();
    merchant = await service.createMerchant();
  });
  afterAll(() => service.close());

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
    expect(res.text).not.toContain('987');
  });

  it('escapes what it echoes', async () => {
    const session = await openSession(service, merchant, { extra: { customer: { name: 'John Doe' } } });
    const res = await submitPage(service, session, { number: '1', holder: '"><script>alert(1)</script>' });
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('<script>alert(1)</script>');
    expect(res.text).toContain('&quot;&gt;&lt;script&gt;');
  });
});
