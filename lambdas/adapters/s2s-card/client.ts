/**
 * The S2S CARD wire: one URL for every action, a form-urlencoded POST, a JSON object back (errors
 * included; the gateway documents no HTTP status codes, so the answer is classified by `result`).
 */
export interface S2SCardCredentials {
  readonly clientKey: string;
  readonly password: string;
}

/** One account at the gateway: where its requests go and what signs them. */
export interface S2SGatewayAccount {
  /** Our id of it (`stage` for the stage's own account). */
  readonly accountId: string;
  /** The full URL requests are POSTed to (`https://<PAYMENT_URL>/post`). */
  readonly url: string;
  readonly clientKey: string;
  readonly password: string;
  /** ISO codes it takes; every currency when absent (the stage's account). */
  readonly currencies?: readonly string[];
}

export interface S2SCardSettings {
  /** How long one request may take before its outcome counts as unknown. */
  readonly timeoutMs: number;
  /**
   * An account by our id (the stage's own when none is given), read when needed (the table and
   * Secrets Manager on AWS, the environment for the stage's locally) and cached; `fresh` reads its
   * password past the cache (a callback whose hash did not match, after a rotation).
   */
  readonly account: (accountId?: string, fresh?: boolean) => Promise<S2SGatewayAccount>;
}

/** Where one request goes: an account's URL, with the connector's timeout. */
export interface S2SCardTarget {
  readonly url: string;
  readonly timeoutMs: number;
}

/** A wire answer: string fields, plus the nested objects some actions return. */
export type WireAnswer = Readonly<Record<string, unknown>>;

/** The request may or may not have reached the gateway: its outcome is unknown until asked. */
export class S2SCardUnavailable extends Error {
  override readonly name = 'S2SCardUnavailable';
}

/** Field values are strings; `parameters[...]`-style names are sent as given. */
export async function postAction(settings: S2SCardTarget, fields: Readonly<Record<string, string>>): Promise<WireAnswer> {
  let response: Response;
  try {
    response = await fetch(settings.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(fields).toString(),
      signal: AbortSignal.timeout(settings.timeoutMs),
      redirect: 'error',
    });
  } catch (e) {
    // Never the request's fields in the message: they hold card data.
    throw new S2SCardUnavailable(`${fields.action ?? 'request'}: no answer from the gateway (${(e as Error).name})`);
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new S2SCardUnavailable(`${fields.action ?? 'request'}: the gateway answered HTTP ${response.status} without JSON`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body) || typeof (body as WireAnswer).result !== 'string') {
    throw new S2SCardUnavailable(`${fields.action ?? 'request'}: the gateway answered HTTP ${response.status} without a result`);
  }
  return body as WireAnswer;
}
