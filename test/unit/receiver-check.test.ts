import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { freePort, startTs } from '../support/processes';
import { signFields } from '../../lambdas/domain/hash';
import { signatureHeader } from '../../lambdas/domain/webhook-signature';
import { checkCallback } from '../../local/receiver-check';

/**
 * `npm run receiver` answers like a careful merchant endpoint: a callback that does not verify with
 * the secret or password it was given is refused (401, so the service retries and the mistake
 * shows), saying which one it expected; one that verifies gets the --status answer.
 */
const SECRET = 'whsec_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghi';
const PASSWORD = 'Pq7xZr-0123456789abcdefghijkl';
const NOW = new Date('2030-01-01T10:00:00.000Z');

function callback(password = PASSWORD): string {
  const f = { id: 'pay-1', order_number: 'order-1', order_amount: '10.00', order_currency: 'USD', order_description: 'Gift' };
  return new URLSearchParams({ ...f, type: 'sale', status: 'success', hash: signFields([f.id, f.order_number, f.order_amount, f.order_currency, f.order_description], password) }).toString();
}

/** The 401 goes to whoever posted: not even the first characters or the length of a credential. */
function expectNothingOf(credential: string, answer: string): void {
  for (const start of [credential.slice(0, 5), credential.slice(0, 8)]) expect(answer).not.toContain(start);
  expect(answer).not.toContain(String(credential.length));
}

describe('the callback receiver\'s answer', () => {
  it('answers the --status to a callback whose signature and hash verify', () => {
    const raw = callback();
    expect(checkCallback(raw, signatureHeader(raw, NOW, [SECRET]), { webhookSecret: SECRET, password: PASSWORD, status: 200 }, NOW)).toEqual({ answer: 200, signature: 'ok', hash: 'ok (order only)', problems: [] });
    expect(checkCallback(raw, signatureHeader(raw, NOW, [SECRET]), { webhookSecret: SECRET, status: 503 }, NOW).answer).toBe(503);
  });

  it('refuses (401) a callback signed with another webhook secret, naming no character of the one it holds', () => {
    const raw = callback();
    const verdict = checkCallback(raw, signatureHeader(raw, NOW, ['whsec_someone-elses-secret-000000000000000000000']), { webhookSecret: SECRET, status: 200 }, NOW);
    expect(verdict.answer).toBe(401);
    expect(verdict.signature).toBe('INVALID (mismatch)');
    expect(verdict.problems).toEqual([`the X-Checkout-Signature does not verify with the webhook secret this receiver was given (--webhook-secret): use the merchant's current one, npm run -s merchant -- show KEY`]);
    expectNothingOf(SECRET, verdict.problems.join(' '));
  });

  it('refuses a callback without a signature, and a stale one, when it was given a secret', () => {
    const raw = callback();
    expect(checkCallback(raw, undefined, { webhookSecret: SECRET, status: 200 }, NOW)).toMatchObject({ answer: 401, signature: 'INVALID (missing)' });
    const old = signatureHeader(raw, new Date(NOW.getTime() - 10 * 60_000), [SECRET]);
    expect(checkCallback(raw, old, { webhookSecret: SECRET, status: 200 }, NOW)).toMatchObject({ answer: 401, problems: [expect.stringContaining('older than 5 minutes')] });
  });

  it('refuses (401) a callback whose hash was made with another password, naming no character of the one it holds', () => {
    const verdict = checkCallback(callback('another-password'), undefined, { password: PASSWORD, status: 200 }, NOW);
    expect(verdict).toMatchObject({ answer: 401, hash: 'INVALID' });
    expect(verdict.problems).toEqual([`the hash does not verify with the password this receiver was given (--password): use the merchant's current signing password`]);
    expectNothingOf(PASSWORD, verdict.problems.join(' '));
  });

  it('checks nothing it was not given', () => {
    expect(checkCallback(callback('x'), undefined, { status: 200 }, NOW)).toEqual({ answer: 200, signature: 'unchecked', hash: 'unchecked', problems: [] });
  });
});

describe('where the receiver listens', () => {
  // Anyone who can reach it can post to it and read its answers: this machine only, unless asked.
  // Another address of this machine (when it has one) stands for "from elsewhere".
  const elsewhere = Object.values(networkInterfaces()).flat().find((a) => a && !a.internal && a.family === 'IPv4')?.address;
  it.each([
    [[], '127.0.0.1', false],
    [['--host', '0.0.0.0'], '0.0.0.0', true],
  ] as const)('with %j it listens on %s', async (args, host, reachableFromElsewhere) => {
    const port = await freePort();
    const receiver = startTs('local/callback-receiver.ts', {}, ['--port', String(port), ...args]);
    try {
      expect(await receiver.waitForLine(/^Receiving callbacks at /)).toBe(`Receiving callbacks at http://${host}:${port}/callbacks`);
      expect(await connects('127.0.0.1', port)).toBe(true);
      if (elsewhere) expect(await connects(elsewhere, port)).toBe(reachableFromElsewhere);
    } finally {
      await receiver.stop();
    }
  }, 30_000);
});

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.setTimeout(2_000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.end(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
