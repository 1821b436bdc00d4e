import { request } from 'node:http';
import { runCallbackJob } from '../../lambdas/use-cases/deliver-callbacks';
import type { CallbackReceiver, ReceivedCallback } from '../support/callback-receiver';
import type { HttpAnswer } from '../support/http';
import { TEST_PAN, type PageForm, type Session } from '../support/payments';
import type { TestService } from '../support/service';

/**
 * What the conformance suites share: where a documented example comes from, the callbacks as a
 * receiver written for the platform sees them, and the customer's steps on the page over HTTP.
 */

/** Every fixture names the document and the section its example comes from. */
export interface DocumentedSource {
  readonly document: string;
  readonly section: string;
}

/** The guide's placeholder merchant key in every example. */
export const DOCUMENTED_MERCHANT_KEY = 'xxxxx-xxxxx-xxxxx';

/** An example request made ours: our merchant's key, no hash (the caller signs it for its path). */
export function withOurMerchant<T extends Record<string, unknown>>(example: T, merchantKey: string): Omit<T, 'hash'> & { merchant_key: string } {
  const { hash: _placeholder, ...rest } = example;
  return { ...rest, merchant_key: merchantKey };
}

/** Delivers every callback that is due (each run sends a payment's due callbacks in order). */
export async function relay(service: TestService): Promise<void> {
  for (let run = 0; run < 5; run++) {
    const report = await runCallbackJob(service.deps);
    if (report.payments === 0) return;
  }
}

export const callbacksOf = (receiver: CallbackReceiver, paymentId: string): ReceivedCallback[] =>
  receiver.received.filter((c) => c.fields.id === paymentId);

/** The part of a callback the platform's integrations branch on. */
export interface Outcome {
  readonly type: string;
  readonly status: string;
  readonly order_status: string;
  readonly reason?: string;
}

export const outcomeOf = (cb: ReceivedCallback): Outcome => ({
  type: cb.fields.type ?? '',
  status: cb.fields.status ?? '',
  order_status: cb.fields.order_status ?? '',
  reason: cb.fields.reason,
});

/** An outcome as the tables of protocol.md §7 write it: `type/status/order_status`, and the reason when there is one. */
export const outcome = (sequence: string, reason?: string): Outcome => {
  const [type = '', status = '', order_status = ''] = sequence.split('/');
  return { type, status, order_status, reason };
};

/**
 * The customer's form post on the page from a given loopback address (Linux routes all of
 * 127.0.0.0/8 to lo), so a test can tell one customer's IP from another's.
 */
export function submitPageFrom(service: TestService, session: Pick<Session, 'path'>, form: PageForm, localAddress: string): Promise<HttpAnswer> {
  const body = new URLSearchParams({
    card_number: form.number ?? TEST_PAN,
    card_expiry: form.card ?? '01/38',
    card_cvv: form.cvv ?? '123',
    card_holder: form.holder ?? 'John Doe',
    ...form.fields,
  }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(session.path, service.baseUrl),
      { method: 'POST', localAddress, agent: false, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), json: undefined }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Answers the sandbox's challenge or bank page the checkout sent the customer to (the page's
 * answer to the form post: a 303 to it) and follows the way back to the checkout, as the
 * browser would. `confirm` with the code 123456 passes 05/38; 06/38 declines whatever the code;
 * `cancel` declines.
 */
export async function answerChallenge(service: TestService, sentThere: HttpAnswer, decision: 'confirm' | 'cancel' = 'confirm'): Promise<HttpAnswer> {
  const challenge = new URL(String(sentThere.headers.location ?? ''), service.baseUrl);
  if (!challenge.pathname.startsWith('/sandbox/challenge/')) throw new Error(`not sent to a challenge: ${sentThere.status} ${String(sentThere.headers.location)}`);
  const answered = await service.request({
    path: `${challenge.pathname}${challenge.search}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ code: '123456', decision, return: challenge.searchParams.get('return') ?? '' }).toString(),
  });
  const back = new URL(String(answered.headers.location ?? ''), challenge);
  if (back.origin !== service.baseUrl) throw new Error(`the challenge did not lead back to the checkout: ${answered.status} ${back.href}`);
  return service.request({ method: 'GET', path: `${back.pathname}${back.search}` });
}
