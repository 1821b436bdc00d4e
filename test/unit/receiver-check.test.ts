import { signFields } from '../../lambdas/domain/hash';
import { signatureHeader } from '../../lambdas/domain/webhook-signature';
import { checkCallback, hint } from '../../local/receiver-check';

/**
 * `npm run receiver` answers like a careful merchant endpoint: a callback that does not verify with
 * the secret or password it was given is refused (401, so the service retries and the mistake
 * shows), saying which one it expected; one that verifies gets the --status answer.
 */
const SECRET = 'whsec_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghi';
const PASSWORD = 'merchant-password-0123456789ab';
const NOW = new Date('2030-01-01T10:00:00.000Z');

function callback(password = PASSWORD): string {
  const f = { id: 'pay-1', order_number: 'order-1', order_amount: '10.00', order_currency: 'USD', order_description: 'Gift' };
  return new URLSearchParams({ ...f, type: 'sale', status: 'success', hash: signFields([f.id, f.order_number, f.order_amount, f.order_currency, f.order_description], password) }).toString();
}

describe('the callback receiver\'s answer', () => {
  it('answers the --status to a callback whose signature and hash verify', () => {
    const raw = callback();
    expect(checkCallback(raw, signatureHeader(raw, NOW, [SECRET]), { webhookSecret: SECRET, password: PASSWORD, status: 200 }, NOW)).toEqual({ answer: 200, signature: 'ok', hash: 'ok (order only)', problems: [] });
    expect(checkCallback(raw, signatureHeader(raw, NOW, [SECRET]), { webhookSecret: SECRET, status: 503 }, NOW).answer).toBe(503);
  });

  it('refuses (401) a callback signed with another webhook secret, naming the one it expected by its start', () => {
    const raw = callback();
    const verdict = checkCallback(raw, signatureHeader(raw, NOW, ['whsec_someone-elses-secret-000000000000000000000']), { webhookSecret: SECRET, status: 200 }, NOW);
    expect(verdict.answer).toBe(401);
    expect(verdict.signature).toBe('INVALID (mismatch)');
    expect(verdict.problems).toEqual([`the X-Checkout-Signature does not verify with the webhook secret this receiver was given (--webhook-secret whsec_Ab… (${SECRET.length} characters)): use the merchant's current one, npm run -s merchant -- show KEY`]);
    expect(verdict.problems.join(' ')).not.toContain(SECRET);
  });

  it('refuses a callback without a signature, and a stale one, when it was given a secret', () => {
    const raw = callback();
    expect(checkCallback(raw, undefined, { webhookSecret: SECRET, status: 200 }, NOW)).toMatchObject({ answer: 401, signature: 'INVALID (missing)' });
    const old = signatureHeader(raw, new Date(NOW.getTime() - 10 * 60_000), [SECRET]);
    expect(checkCallback(raw, old, { webhookSecret: SECRET, status: 200 }, NOW)).toMatchObject({ answer: 401, problems: [expect.stringContaining('older than 5 minutes')] });
  });

  it('refuses (401) a callback whose hash was made with another password, naming the password it expected by its start', () => {
    const verdict = checkCallback(callback('another-password'), undefined, { password: PASSWORD, status: 200 }, NOW);
    expect(verdict).toMatchObject({ answer: 401, hash: 'INVALID' });
    expect(verdict.problems).toEqual([`the hash does not verify with the password this receiver was given (--password ${hint(PASSWORD)}): use the merchant's current signing password`]);
    expect(verdict.problems.join(' ')).not.toContain(PASSWORD);
  });

  it('checks nothing it was not given', () => {
    expect(checkCallback(callback('x'), undefined, { status: 200 }, NOW)).toEqual({ answer: 200, signature: 'unchecked', hash: 'unchecked', problems: [] });
  });
});
