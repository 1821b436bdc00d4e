import { verifyCallbackHash } from '../lambdas/domain/callback';
import { verifySignatureHeader } from '../lambdas/domain/webhook-signature';

/** Where `npm run receiver` listens unless --host says otherwise: this machine only. */
export const RECEIVER_DEFAULT_HOST = '127.0.0.1';

/** What `npm run receiver` was started with. */
export interface ReceiverOptions {
  readonly webhookSecret?: string;
  readonly password?: string;
  /** The status to answer a callback that verifies (--status). */
  readonly status: number;
}

export interface ReceiverVerdict {
  /** The HTTP status to answer: 401 when a check it was asked to make fails, else `status`. */
  readonly answer: number;
  readonly signature: string;
  readonly hash: string;
  /**
   * Why the callback was refused: which check failed and what to do. Sent in the 401 to whoever
   * posted, so it names no character of the secret or password (nor its length).
   */
  readonly problems: readonly string[];
}

/**
 * How the receiver answers one callback. A receiver acts like a merchant's endpoint should: a
 * callback whose signature (or, when only a password was given, whose hash) does not verify is
 * refused with 401, so the service retries it and the mistake shows; the reason says which check
 * failed (signature or hash) and where the current secret is shown, never any of the secret itself.
 */
export function checkCallback(raw: string, signatureHeader: string | undefined, options: ReceiverOptions, now: Date): ReceiverVerdict {
  const fields = Object.fromEntries(new URLSearchParams(raw));
  const problems: string[] = [];
  let signature = 'unchecked';
  if (options.webhookSecret !== undefined) {
    const checked = verifySignatureHeader(signatureHeader, raw, options.webhookSecret, now);
    signature = checked.ok ? 'ok' : `INVALID (${checked.why})`;
    if (!checked.ok) {
      problems.push(
        checked.why === 'stale'
          ? 'the X-Checkout-Signature is older than 5 minutes (a replay, or this machine\'s clock is off)'
          : `the X-Checkout-Signature does not verify with the webhook secret this receiver was given (--webhook-secret): use the merchant's current one, npm run -s merchant -- show KEY`,
      );
    }
  }
  let hash = 'unchecked';
  if (options.password !== undefined) {
    const ok = verifyCallbackHash(fields, options.password);
    hash = ok ? 'ok (order only)' : 'INVALID';
    if (!ok) problems.push(`the hash does not verify with the password this receiver was given (--password): use the merchant's current signing password`);
  }
  return { answer: problems.length ? 401 : options.status, signature, hash, problems };
}
