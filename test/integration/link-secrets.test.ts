import { decodeLinkToken } from '../../lambdas/domain/checkout-link';
import { openSession, submitPage } from '../support/payments';
import { serviceForFile } from '../support/suites';

/**
 * A checkout link is a bearer credential: only the hash of its secret is stored. The sandbox's
 * challenge and bank pages used to be addressed by `<payment_id>.<attempt>` and to keep the link
 * token as their return URL, so anyone could open them and read the token. Now each page has an
 * unguessable key of its own, and the way back travels in the customer's browser only.
 */
const { service, merchants: [shop] } = serviceForFile({ merchants: [{}] });

/** Every form a link's secret can take in text. */
function secretForms(path: string): string[] {
  const token = path.split('/').pop()!;
  const secret = decodeLinkToken(token)!.secret;
  return [token, secret.toString('base64url'), secret.toString('base64'), secret.toString('hex')];
}

it('after 3-D Secure and bank redirect payments, no stored item holds a link token or secret; the attempt key opens no page', async () => {
  const forms: string[] = [];
  for (const [card, answer] of [['05/38', 'confirm'], ['12/38', 'confirm'], ['06/38', 'confirm']] as const) {
    const session = await openSession(service, shop);
    forms.push(...secretForms(session.path));
    const sent = await submitPage(service, session, { card });
    expect(sent.status).toBe(303);
    const challenge = new URL(String(sent.headers.location));
    // The guessable address of the attempt shows nothing.
    expect((await service.request({ path: `/sandbox/challenge/${session.paymentId}.1` })).status).toBe(404);
    const back = challenge.searchParams.get('return') ?? '';
    const answered = await fetch(new URL(challenge.pathname, service.baseUrl), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ code: '123456', decision: answer, return: back }).toString(),
    });
    await answered.text();
    expect([answered.status, answered.headers.get('location')]).toEqual([303, back]);
    await (await fetch(new URL(back, service.baseUrl), { redirect: 'manual' })).text();
  }
  const stored = JSON.stringify(await service.tableItems());
  for (const form of forms) expect(stored.includes(form) ? form : '').toBe('');
});

it('a return path to another payment\'s link is not followed', async () => {
  const mine = await openSession(service, shop);
  const other = await openSession(service, shop);
  const sent = await submitPage(service, mine, { card: '05/38' });
  const challenge = new URL(String(sent.headers.location));
  const elsewhere = `${other.path}/complete`;
  const shown = await fetch(new URL(`${challenge.pathname}?return=${encodeURIComponent(elsewhere)}`, service.baseUrl));
  expect(await shown.text()).not.toContain(elsewhere);
  const answered = await fetch(new URL(challenge.pathname, service.baseUrl), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ code: '123456', decision: 'confirm', return: elsewhere }).toString(),
  });
  expect(answered.status).toBe(200);
  expect(answered.headers.get('location')).toBeNull();
});
