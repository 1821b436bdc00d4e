import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { cardDigits, hashMatches, orderHash, saleHash, tokenSaleHash, transactionHash, walletHash, type HashParty } from '../../lambdas/adapters/s2s-card/hash';
import { readSandboxWalletToken } from '../../lambdas/adapters/sandbox-acquirer/wallet-token';
import { minorOfWireAmount, wireAmount } from '../../lambdas/adapters/s2s-card/transformers';

/**
 * A fake S2S CARD gateway over real HTTP, built from the CARD Guide's request and response tables
 * (docs/acquirers/s2s-card.md): one POST URL for every action, form-urlencoded requests, JSON
 * answers classified by `result`, every request's hash checked (Formulas 1, 1-token, 2 and 7), the
 * guide's test cards (expiry month of 2038 picks the outcome), 3-D Secure as a POST redirect to an
 * ACS page with PaReq/MD/TermUrl, a bank redirect as a GET, asynchronous CREDITVOID answered
 * ACCEPTED, callbacks to the account's Notification URL signed with Formula 2, and the error codes
 * of the guide (208001, 208003, 208004, 208005, 208006, 208009, 400). It keeps its own ledger, so a
 * test can compare what we recorded with what the gateway did (`ledgerOf`).
 *
 * By default it is well-behaved: every request answered at once, one callback per event, sent after
 * the answer. Adversity is opt-in, per switch (`adversity`, `delayNext`, `dropNext`, `loseAnswerNext`,
 * `restart`) and, where a switch is a chance, drawn from the gateway's seeded generator, so a seed
 * replays the same misbehaviour against the same sequence of requests:
 * - a dropped request is never carried out (the gateway never got it);
 * - a lost answer is carried out (the gateway did the work, the connection dies before the answer);
 * - a slow answer is carried out at once and answered late (past the client's timeout);
 * - callbacks may come before the answer, several times, late and out of order (a random delay each),
 *   held back and then delivered all at once (concurrently, for one payment too), or never; one sent
 *   while the receiver is down is lost (the gateway does not retry);
 * - a CREDITVOID is answered ACCEPTED and carried out at once, after a delay, or held `waiting`
 *   (GET_TRANS_DETAILS shows the item `waiting`) until `finishWaiting()`; its callback names the
 *   payment's `trans_id` only, never the refund.
 * A 3-D Secure or bank challenge nobody answers expires (DECLINED) after `challengeExpiryMs` of the
 * gateway's clock (the test's clock when it moves time).
 *
 * Like the real gateway it serves several merchant accounts at one URL, each with its own client key,
 * password and Notification URL (`accounts`, `addAccount`; the first is `clientKey`/`password` and
 * uses `notifyUrl`). A transaction belongs to the account whose client key made it: a request of
 * another account is hashed with that account's password and finds none of it (208001, like an
 * unknown trans_id or order; an unknown card or recurring token for a SALE), and its callbacks go to
 * its own account's URL, signed with that account's password when sent (so after `rotatePassword`,
 * with the new one). Order ids are unique per account. `ledgerOfAccount` lists one account's ledger.
 */
export interface GatewayTransaction {
  readonly transId: string;
  /** The account (client key) whose request created it. */
  readonly clientKey: string;
  readonly orderId: string;
  readonly action: 'SALE' | 'RECURRING_SALE';
  status: string;
  readonly auth: boolean;
  readonly currency: string;
  readonly amountMinor: number;
  readonly party: HashParty;
  readonly expMonth: number;
  readonly expYear: number;
  /** A wallet SALE's `digital_wallet` (its card digits are empty: no card was sent). */
  readonly digitalWallet?: string;
  readonly termUrl?: string;
  /** When the gateway created it (`YYYY-MM-DD hh:mm:ss`). */
  readonly date: string;
  capturedMinor: number;
  refundedMinor: number;
  /** What chargebacks took (the status is CHARGEBACK from the first). */
  chargedBackMinor?: number;
  declineReason?: string;
  recurringToken?: string;
  cardToken?: string;
  /**
   * Every money operation the gateway carried out on it, in order; a CREDITVOID answered ACCEPTED
   * and not carried out yet is `WAITING` in its place until its outcome.
   */
  readonly operations: { action: string; result: 'SUCCESS' | 'DECLINED' | 'WAITING'; amountMinor: number; date?: string }[];
}

/** What the gateway did for one of its transactions, as GET_TRANS_DETAILS lists it (amounts in minor units). */
export interface GatewayLedgerEntry {
  readonly transId: string;
  readonly orderId: string;
  /** Our payment the order belongs to (the order id before its `.<n>`). */
  readonly paymentId: string;
  /** The account (client key) the transaction belongs to. */
  readonly clientKey: string;
  readonly status: string;
  /** Sent with auth=Y (held for a CAPTURE). */
  readonly auth: boolean;
  readonly currency: string;
  readonly amountMinor: number;
  readonly capturedMinor: number;
  readonly refundedMinor: number;
  readonly chargedBackMinor: number;
  /** A wallet SALE's `digital_wallet` (GET_TRANS_DETAILS names it). */
  readonly digitalWallet?: string;
  readonly transactions: readonly { readonly type: 'sale' | 'auth' | 'capture' | 'void' | 'refund' | 'reversal' | 'chargeback'; readonly status: 'success' | 'waiting' | 'fail'; readonly amountMinor: number }[];
}

/** Per action (`SALE`, `CAPTURE`, `CREDITVOID`…): a chance between 0 and 1. */
export type ActionChances = Partial<Record<string, number>>;

/** The gateway's misbehaviour; every switch off by default. Settable at any time (per test, per seed). */
export interface GatewayAdversity {
  /** The chance a request is dropped unanswered and never carried out. */
  drop: ActionChances;
  /** The chance a request is carried out and its answer lost (the connection closed instead). */
  loseAnswer: ActionChances;
  /** The chance a request is carried out at once and answered only after `slowMs`. */
  slow: ActionChances;
  slowMs: number;
  callbacks: {
    /** The chance a callback is never sent. */
    lose: number;
    /** The chance a callback is sent once more (drawn again after each extra copy, at most three). */
    repeat: number;
    /** The chance a callback is delivered (and answered) before the request's answer is sent. */
    beforeAnswer: number;
    /** Each callback waits a random 0..jitterMs first, so callbacks overtake each other. */
    jitterMs: number;
    /** Callbacks wait in a queue until `deliverCallbacks()`, which sends them all at once in a random order. */
    hold: boolean;
  };
  /** When an accepted CREDITVOID is carried out: at once, after this many ms, or when `finishWaiting()` is called. */
  creditVoid: 'immediate' | 'held' | number;
}

export const wellBehaved = (): GatewayAdversity => ({
  drop: {},
  loseAnswer: {},
  slow: {},
  slowMs: 0,
  callbacks: { lose: 0, repeat: 0, beforeAnswer: 0, jitterMs: 0, hold: false },
  creditVoid: 'immediate',
});

export interface Callback {
  readonly fields: Record<string, string>;
  readonly answer: string;
}

export interface FakeGateway {
  /** The URL requests are POSTed to (S2S_CARD_URL). */
  readonly url: string;
  readonly origin: string;
  /** The first account's client key and (current) password. */
  readonly clientKey: string;
  readonly password: string;
  /** Where callbacks go (the first account's Notification URL, and any account's without one of its own); settable after start. */
  notifyUrl: string | undefined;
  /** Opens one more account (a random client key and password unless given). Throws if the client key is taken. */
  addAccount(account?: { clientKey?: string; password?: string; notifyUrl?: string }): { readonly clientKey: string; readonly password: string };
  /** Every account's client key, the first account's first. */
  accounts(): readonly string[];
  /** From now on the account's requests must be hashed, and its callbacks are signed, with `password`; the old one fails 204001. */
  rotatePassword(clientKey: string, password: string): void;
  /** The account's own Notification URL (undefined: `notifyUrl`). */
  setNotifyUrl(clientKey: string, notifyUrl: string | undefined): void;
  /** Every transaction of one account, as `ledgerOf` gives each. Throws for an unknown account. */
  ledgerOfAccount(clientKey: string): GatewayLedgerEntry[];
  /** The client key of the account a trans_id or order id belongs to (an order id several accounts used: the first such account). */
  accountOf(transIdOrOrderId: string): string | undefined;
  readonly transactions: Map<string, GatewayTransaction>;
  /** Every request's action and fields, card number and CVV removed. */
  readonly requests: { action: string; fields: Record<string, string> }[];
  readonly callbacks: Callback[];
  /** The next request of this action is carried out but answered only after `ms` (a client timeout). */
  delayNext(action: string, ms: number): void;
  /** The next request of this action is dropped unanswered without being carried out (never received). */
  dropNext(action: string): void;
  /** The next request of this action is carried out, and its answer lost (the connection closed). */
  loseAnswerNext(action: string): void;
  /** Callbacks are not sent while this is false. */
  sendCallbacks: boolean;
  /** The gateway's misbehaviour (all off by default). */
  adversity: GatewayAdversity;
  /** Sends every held callback now, all at once, in a random order. Resolves when each was answered or failed. */
  deliverCallbacks(): Promise<void>;
  /** Carries out every CREDITVOID still waiting (and sends its callback). */
  finishWaiting(): void;
  /** Stops listening (connections cut, nothing carried out meanwhile) and listens again on the same port after `downMs`; the ledger is kept. */
  restart(downMs?: number): Promise<void>;
  /** Requests cut off, dropped, lost or slowed by adversity, and callbacks lost, repeated or held, by kind (a wallet SALE's and its payment's callbacks as `wallet SALE dropped`, `wallet callback lost`…). */
  readonly faults: Record<string, number>;
  /** Every transaction of one of our payments (order ids `<payment>.<n>`), as GET_TRANS_DETAILS reports each. */
  ledgerOf(paymentId: string): GatewayLedgerEntry[];
  /** Every payment id the gateway has an order for (of any account). */
  paymentIds(): string[];
  /** Seeds the generator adversity draws from again (one run of a model, replayable). */
  reseed(seed: number): void;
  /** The customer's answer on the ACS or bank page, without a browser. */
  answerChallenge(transId: string, confirm: boolean): Promise<void>;
  /** The transaction of an order id: of that account, or without `clientKey` of the first account that has it. */
  byOrder(orderId: string, clientKey?: string): GatewayTransaction | undefined;
  /**
   * A cardholder's bank charges a SETTLED (or already charged back) transaction back: `amountMinor`
   * of it, or all that is left after refunds (those still waiting included) and earlier chargebacks;
   * the status becomes CHARGEBACK, GET_TRANS_DETAILS lists a `chargeback` item, and the CHARGEBACK
   * callback goes out (amount, chargeback_date, bank_date, reason_code). Refused with 208010 when
   * more than is left, 208005 when nothing is settled.
   */
  chargeback(transId: string, amountMinor?: number, reasonCode?: string): { readonly ok: true; readonly amountMinor: number } | { readonly error: number };
  close(): Promise<void>;
}

const TEST_YEAR = 2038;
const str = (v: string | undefined) => v ?? '';
const json = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const error = (code: number, message: string, errors?: { error_code: number; error_message: string }[]) => ({ result: 'ERROR', error_code: code, error_message: message, ...(errors ? { errors } : {}) });
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const transDate = () => new Date().toISOString().replace('T', ' ').slice(0, 19);
const maskOf = (digits: string) => `${digits.slice(0, 6)}****${digits.slice(6)}`;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** xorshift32: a small deterministic generator, so a seed replays the same misbehaviour. */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** One merchant account at the gateway. */
export interface GatewayAccount {
  readonly clientKey: string;
  readonly password: string;
  /** Its Notification URL; without one its callbacks go to the gateway's `notifyUrl`. */
  readonly notifyUrl?: string;
}

export interface FakeGatewayOptions {
  /** The first account's (random when not given). */
  clientKey?: string;
  password?: string;
  notifyUrl?: string;
  /** More accounts, open from the start. */
  accounts?: readonly GatewayAccount[];
  /** Seeds the generator the chances of `adversity` are drawn from. */
  seed?: number;
  adversity?: Partial<GatewayAdversity>;
  /** The gateway's clock (challenge expiry); the wall clock by default. */
  now?: () => number;
  /** How long an unanswered 3-D Secure or bank challenge stays open. */
  challengeExpiryMs?: number;
  /** Listen on this port (a restarted gateway keeps its address). */
  port?: number;
}

export async function startFakeGateway(options: FakeGatewayOptions = {}): Promise<FakeGateway> {
  type Account = { readonly clientKey: string; password: string; notifyUrl?: string };
  /** By client key, in the order they were opened; the password and URL change in place. */
  const accounts = new Map<string, Account>();
  const openAccount = (account: { clientKey?: string; password?: string; notifyUrl?: string } = {}) => {
    const clientKey = account.clientKey ?? randomUUID();
    if (accounts.has(clientKey)) throw new Error(`fake gateway: account ${clientKey} exists already`);
    const opened: Account = { clientKey, password: account.password ?? randomBytes(16).toString('hex'), notifyUrl: account.notifyUrl };
    accounts.set(clientKey, opened);
    return opened;
  };
  const accountNamed = (clientKey: string) => {
    const account = accounts.get(clientKey);
    if (!account) throw new Error(`fake gateway: no account ${clientKey}`);
    return account;
  };
  const first = openAccount({ clientKey: options.clientKey, password: options.password });
  for (const account of options.accounts ?? []) openAccount(account);
  const transactions = new Map<string, GatewayTransaction>();
  /** Per account: order id → trans_id (an order id is unique within its account only). */
  const orders = new Map<string, Map<string, string>>();
  const orderOf = (clientKey: string, orderId: string) => transactions.get(orders.get(clientKey)?.get(orderId) ?? '');
  const requests: FakeGateway['requests'] = [];
  const callbacks: Callback[] = [];
  const delays = new Map<string, number>();
  const drops = new Set<string>();
  const lostAnswers = new Set<string>();
  const sockets = new Set<Socket>();
  let random = generator(options.seed ?? 1);
  const chance = (p: number | undefined) => (p ?? 0) > 0 && random() < p!;
  const now = options.now ?? (() => Date.now());
  const challengeExpiryMs = options.challengeExpiryMs ?? 30 * 60_000;
  const faults: Record<string, number> = {};
  const count = (kind: string) => void (faults[kind] = (faults[kind] ?? 0) + 1);
  /** Callbacks waiting for `deliverCallbacks()` (adversity.callbacks.hold). */
  const heldCallbacks: (() => Promise<void>)[] = [];
  /** Callbacks a request delivers before its answer. */
  let beforeAnswer: Promise<void>[] | undefined;
  /** CREDITVOIDs accepted and not carried out yet. */
  const waiting: { t: GatewayTransaction; run: () => void }[] = [];
  let origin = '';

  const gateway: FakeGateway = {
    url: '',
    origin: '',
    clientKey: first.clientKey,
    get password() {
      return first.password;
    },
    notifyUrl: options.notifyUrl,
    addAccount: (account) => {
      const { clientKey, password } = openAccount(account);
      return { clientKey, password };
    },
    accounts: () => [...accounts.keys()],
    rotatePassword: (clientKey, password) => void (accountNamed(clientKey).password = password),
    setNotifyUrl: (clientKey, notifyUrl) => void (accountNamed(clientKey).notifyUrl = notifyUrl),
    ledgerOfAccount: (clientKey) => {
      accountNamed(clientKey);
      return [...transactions.values()].filter((t) => t.clientKey === clientKey).map(ledgerEntry);
    },
    accountOf: (id) => (transactions.get(id) ?? gateway.byOrder(id))?.clientKey,
    transactions,
    requests,
    callbacks,
    sendCallbacks: true,
    adversity: { ...wellBehaved(), ...options.adversity },
    faults,
    delayNext: (action, ms) => void delays.set(action, ms),
    dropNext: (action) => void drops.add(action),
    loseAnswerNext: (action) => void lostAnswers.add(action),
    deliverCallbacks: async () => {
      const batch = heldCallbacks.splice(0);
      // Fisher-Yates with the seeded generator: out of order, and all at once.
      for (let i = batch.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [batch[i], batch[j]] = [batch[j]!, batch[i]!];
      }
      await Promise.all(batch.map((send) => send()));
    },
    finishWaiting: () => {
      for (const w of waiting.splice(0)) w.run();
    },
    restart: async (downMs = 0) => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    },
    ledgerOf: (paymentId) => {
      const prefix = `${paymentId.toLowerCase()}.`;
      return [...transactions.values()].filter((t) => t.orderId.toLowerCase().startsWith(prefix)).map(ledgerEntry);
    },
    paymentIds: () => [...new Set([...transactions.values()].map((t) => t.orderId.split('.')[0]!))],
    reseed: (seed) => void (random = generator(seed)),
    answerChallenge: async (transId, confirm) => {
      expireChallenges();
      finishChallenge(transId, confirm);
    },
    byOrder: (orderId, clientKey) => {
      if (clientKey !== undefined) return orderOf(clientKey, orderId);
      for (const key of accounts.keys()) {
        const t = orderOf(key, orderId);
        if (t) return t;
      }
      return undefined;
    },
    chargeback: (transId, amountMinor, reasonCode = '4837') => {
      const t = transactions.get(transId);
      if (!t || (t.status !== 'SETTLED' && t.status !== 'CHARGEBACK')) return { error: 208005 };
      const reserved = t.operations.filter((o) => o.result === 'WAITING').reduce((n, o) => n + o.amountMinor, 0);
      const left = t.capturedMinor - t.refundedMinor - reserved - (t.chargedBackMinor ?? 0);
      const amount = amountMinor ?? left;
      if (amount <= 0 || amount > left) return { error: 208010 };
      const date = transDate();
      t.operations.push({ action: 'CHARGEBACK', result: 'SUCCESS', amountMinor: amount, date });
      t.chargedBackMinor = (t.chargedBackMinor ?? 0) + amount;
      t.status = 'CHARGEBACK';
      notify(t, 'CHARGEBACK', 'SUCCESS', { amount: wireAmount(amount, t.currency), chargeback_date: date.slice(0, 10), bank_date: date.slice(0, 10), reason_code: reasonCode });
      return { ok: true, amountMinor: amount };
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  /**
   * The callback of a transaction's latest event, signed with Formula 2: after the answer by default;
   * with adversity before it, late, repeated, held for `deliverCallbacks()`, or never. One that
   * cannot be delivered (the receiver down) is recorded and never retried.
   */
  function notify(t: GatewayTransaction, action: string, result: string, extra: Record<string, string> = {}) {
    const account = accountNamed(t.clientKey);
    const urlOf = () => account.notifyUrl ?? gateway.notifyUrl;
    const target = urlOf();
    if (!target || !gateway.sendCallbacks) return;
    const fields: Record<string, string> = {
      action,
      result,
      status: t.status,
      order_id: t.orderId,
      trans_id: t.transId,
      hash: transactionHash(account.password, t.party, t.transId),
      trans_date: transDate(),
      amount: wireAmount(t.amountMinor, t.currency),
      currency: t.currency,
      ...(t.digitalWallet ? { digital_wallet: t.digitalWallet } : { card: maskOf(t.party.digits), card_expiration_date: `${String(t.expMonth).padStart(2, '0')}/${t.expYear}` }),
      ...(t.declineReason && result === 'DECLINED' ? { decline_reason: t.declineReason } : {}),
      ...(t.recurringToken ? { recurring_token: t.recurringToken } : {}),
      ...(t.cardToken ? { card_token: t.cardToken } : {}),
      ...extra,
    };
    // Signed when sent: one held across a password change carries the new password's hash.
    const signed = (): Record<string, string> => ({ ...fields, hash: transactionHash(account.password, t.party, t.transId) });
    const cb = gateway.adversity.callbacks;
    // Callbacks of a wallet payment are counted apart (`wallet callback lost`…).
    const counted = (kind: string) => count(t.digitalWallet ? `wallet ${kind}` : kind);
    if (chance(cb.lose)) {
      counted('callback lost');
      callbacks.push({ fields, answer: 'lost by the gateway' });
      return;
    }
    let copies = 1;
    while (copies < 4 && chance(cb.repeat)) copies++;
    if (copies > 1) counted('callback repeated');
    const post = async () => {
      if (cb.jitterMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * cb.jitterMs)));
      const sent = signed();
      await fetch(urlOf() ?? target, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(sent).toString(), signal: AbortSignal.timeout(10_000) })
        .then((r) => r.text())
        .then((answer) => void callbacks.push({ fields: sent, answer }))
        .catch((e: Error) => void callbacks.push({ fields: sent, answer: `unreachable: ${e.message}` }));
    };
    for (let i = 0; i < copies; i++) {
      if (cb.hold) {
        counted('callback held');
        heldCallbacks.push(post);
      } else if (beforeAnswer && chance(cb.beforeAnswer)) {
        counted('callback before the answer');
        beforeAnswer.push(post());
      } else {
        setImmediate(() => void post());
      }
    }
  }

  /** What a card does (the guide's test cards; any other card is approved). */
  type Plan = { kind: 'approve' } | { kind: 'decline' } | { kind: 'challenge'; flow: '3DS' | 'REDIRECT'; then: 'approve' | 'decline' };
  function planOf(expMonth: number, expYear: number): Plan {
    if (expYear === TEST_YEAR + 1 && expMonth === 12) return { kind: 'challenge', flow: 'REDIRECT', then: 'decline' };
    if (expYear !== TEST_YEAR) return { kind: 'approve' };
    if (expMonth === 2) return { kind: 'decline' };
    if (expMonth === 5) return { kind: 'challenge', flow: '3DS', then: 'approve' };
    if (expMonth === 6) return { kind: 'challenge', flow: '3DS', then: 'decline' };
    if (expMonth === 12) return { kind: 'challenge', flow: 'REDIRECT', then: 'approve' };
    return { kind: 'approve' };
  }

  const issueTokens = (t: GatewayTransaction, fields: Record<string, string>) => {
    if (fields.req_token === 'Y') t.cardToken = randomBytes(32).toString('hex');
    // Recurring works with the guide's one recurring test card only.
    if (fields.recurring_init === 'Y' && t.expYear === TEST_YEAR && t.expMonth === 1) t.recurringToken = randomUUID();
  };

  const approve = (t: GatewayTransaction) => {
    t.status = t.auth ? 'PENDING' : 'SETTLED';
    t.capturedMinor = t.auth ? 0 : t.amountMinor;
  };

  const saleAnswer = (t: GatewayTransaction, result: string) => ({
    action: t.action,
    result,
    status: t.status,
    order_id: t.orderId,
    trans_id: t.transId,
    trans_date: transDate(),
    descriptor: 'FAKE GATEWAY',
    amount: wireAmount(t.amountMinor, t.currency),
    currency: t.currency,
    ...(t.declineReason ? { decline_reason: t.declineReason } : {}),
    ...(t.recurringToken ? { recurring_token: t.recurringToken } : {}),
    ...(t.cardToken ? { card_token: t.cardToken } : {}),
  });

  const pendingChallenges = new Map<string, { then: 'approve' | 'decline'; fields: Record<string, string>; until: number }>();

  /** A challenge nobody answered in time is declined, as the ACS gives up (looked at on every request). */
  function expireChallenges() {
    const at = now();
    for (const [transId, pending] of pendingChallenges) {
      if (pending.until > at) continue;
      pendingChallenges.delete(transId);
      const t = transactions.get(transId);
      if (!t) continue;
      t.status = 'DECLINED';
      t.declineReason = 'The customer did not complete the authentication in time.';
      notify(t, t.action, 'DECLINED');
    }
  }

  function finishChallenge(transId: string, confirm: boolean): GatewayTransaction | undefined {
    const t = transactions.get(transId);
    const pending = pendingChallenges.get(transId);
    if (!t || !pending) return t;
    pendingChallenges.delete(transId);
    if (confirm && pending.then === 'approve') {
      approve(t);
      issueTokens(t, pending.fields);
      notify(t, t.action, 'SUCCESS');
    } else {
      t.status = 'DECLINED';
      t.declineReason = t.expMonth === 12 ? 'Payment was not confirmed at the bank.' : '3-D Secure authentication failed.';
      notify(t, t.action, 'DECLINED');
    }
    return t;
  }

  function sale(account: Account, fields: Record<string, string>): unknown {
    const action = fields.action as 'SALE' | 'RECURRING_SALE';
    const problems: { error_code: number; error_message: string }[] = [];
    if (!fields.order_id) problems.push({ error_code: 100000, error_message: 'order_id: This value should not be blank.' });
    if (!fields.order_description) problems.push({ error_code: 100000, error_message: 'order_description: This value should not be blank.' });
    let first: GatewayTransaction | undefined;
    let card: { digits: string; expMonth: number; expYear: number } | undefined;
    /** A wallet token's PAN type: only the card's own number (PAN_ONLY) gets 3-D Secure from the gateway. */
    let walletPan: 'dpan' | 'fpan' | undefined;
    let undecryptable = false;
    let email = str(fields.payer_email);
    let currency = str(fields.order_currency);
    if (action === 'RECURRING_SALE') {
      first = transactions.get(str(fields.recurring_first_trans_id));
      if (first?.clientKey !== account.clientKey) first = undefined;
      if (!first || !first.recurringToken || first.recurringToken !== fields.recurring_token) return error(100000, 'Request data is invalid.', [{ error_code: 100000, error_message: 'recurring_token: The recurring token is not valid.' }]);
      card = { digits: first.party.digits, expMonth: first.expMonth, expYear: first.expYear };
      email = first.party.email;
      currency = first.currency;
    } else if (fields.card_token) {
      const source = [...transactions.values()].find((t) => t.cardToken === fields.card_token && t.clientKey === account.clientKey);
      if (!source) return error(205005, 'Card token is invalid or not found.');
      card = { digits: source.party.digits, expMonth: source.expMonth, expYear: source.expYear };
    } else if (fields.digital_wallet !== undefined) {
      // The wallet SALE: the gateway decrypts the token (this fake reads the sandbox's test tokens).
      if (fields.digital_wallet !== 'googlepay' && fields.digital_wallet !== 'applepay') problems.push({ error_code: 100000, error_message: 'digital_wallet: The value you selected is not a valid choice.' });
      if (fields.card_number || fields.card_cvv2) problems.push({ error_code: 100000, error_message: 'card_number: This value should be blank.' });
      if (!email) problems.push({ error_code: 100000, error_message: 'payer_email: This value should not be blank.' });
      if (!fields.term_url_3ds) problems.push({ error_code: 100000, error_message: 'term_url_3ds: This value should not be blank.' });
      if (!fields.payment_token) problems.push({ error_code: 100000, error_message: 'payment_token: This value should not be blank.' });
      const token = fields.payment_token ? readSandboxWalletToken({ wallet: fields.digital_wallet as 'googlepay', paymentToken: fields.payment_token }) : undefined;
      if (!problems.length) {
        // A token it cannot decrypt makes a transaction that is declined (below), as a gateway's does.
        card = { digits: '', expMonth: token?.facts.expMonth ?? 0, expYear: token?.facts.expYear ?? 0 };
        walletPan = token?.panType ?? 'dpan';
        undecryptable = !token;
      }
    } else {
      if (!/^\d{12,19}$/.test(str(fields.card_number))) problems.push({ error_code: 100000, error_message: 'card_number: This value should not be blank.' });
      if (!/^(0[1-9]|1[0-2])$/.test(str(fields.card_exp_month))) problems.push({ error_code: 100000, error_message: 'card_exp_month: This value is not valid.' });
      if (!/^\d{4}$/.test(str(fields.card_exp_year))) problems.push({ error_code: 100000, error_message: 'card_exp_year: This value is not valid.' });
      if (!/^\d{3,4}$/.test(str(fields.card_cvv2))) problems.push({ error_code: 100000, error_message: 'card_cvv2: This value is not valid.' });
      if (!email) problems.push({ error_code: 100000, error_message: 'payer_email: This value should not be blank.' });
      if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(str(fields.payer_ip))) problems.push({ error_code: 100000, error_message: 'payer_ip: This value is not a valid IP address.' });
      if (!fields.term_url_3ds) problems.push({ error_code: 100000, error_message: 'term_url_3ds: This value should not be blank.' });
      if (!problems.length) card = { digits: cardDigits(fields.card_number!), expMonth: Number(fields.card_exp_month), expYear: Number(fields.card_exp_year) };
    }
    const amountMinor = minorOfWireAmount(fields.order_amount, currency || 'USD');
    if (!amountMinor) problems.push({ error_code: 100000, error_message: 'order_amount: This value should be greater than 0.' });
    if (problems.length || !card) return error(100000, 'Request data is invalid.', problems);
    const party = { email, digits: card.digits };
    const expected = walletPan
      ? walletHash(account.password, email)
      : fields.card_token && action === 'SALE' ? tokenSaleHash(account.password, email, fields.card_token) : saleHash(account.password, party);
    if (!hashMatches(fields.hash, expected)) return error(204001, 'Hash is not valid.');
    if (orderOf(account.clientKey, fields.order_id!)) return error(400, 'Duplicate request.');

    const t: GatewayTransaction = {
      transId: randomUUID(),
      clientKey: account.clientKey,
      orderId: fields.order_id!,
      action,
      status: 'PREPARE',
      auth: fields.auth === 'Y',
      currency,
      amountMinor: amountMinor!,
      party,
      expMonth: card.expMonth,
      expYear: card.expYear,
      ...(walletPan ? { digitalWallet: fields.digital_wallet } : {}),
      termUrl: fields.term_url_3ds,
      date: transDate(),
      capturedMinor: 0,
      refundedMinor: 0,
      operations: [],
    };
    transactions.set(t.transId, t);
    if (!orders.has(t.clientKey)) orders.set(t.clientKey, new Map());
    orders.get(t.clientKey)!.set(t.orderId, t.transId);
    let plan: Plan = action === 'RECURRING_SALE' ? { kind: 'approve' } : planOf(card.expMonth, card.expYear);
    // A device's number with its cryptogram was authenticated on the device: no 3-D Secure (the
    // guide: with PAN_ONLY, passing 3-D Secure is the acquirer's responsibility).
    if (walletPan === 'dpan' && plan.kind === 'challenge' && plan.flow === '3DS') plan = plan.then === 'approve' ? { kind: 'approve' } : { kind: 'decline' };
    if (undecryptable) plan = { kind: 'decline' };
    if (plan.kind === 'approve') {
      approve(t);
      if (action === 'SALE') issueTokens(t, fields);
      notify(t, action, 'SUCCESS');
      return saleAnswer(t, 'SUCCESS');
    }
    if (plan.kind === 'decline') {
      t.status = 'DECLINED';
      t.declineReason = undecryptable ? 'The payment token could not be decrypted.' : 'Declined by processing.';
      notify(t, action, 'DECLINED');
      return saleAnswer(t, 'DECLINED');
    }
    t.status = plan.flow;
    pendingChallenges.set(t.transId, { then: plan.then, fields, until: now() + challengeExpiryMs });
    notify(t, action, 'REDIRECT');
    const redirect =
      plan.flow === '3DS'
        ? { redirect_url: `${origin}/acs/${t.transId}`, redirect_method: 'POST', redirect_params: { PaReq: randomBytes(24).toString('base64'), MD: t.transId, TermUrl: `${origin}/verify/3ds/${t.transId}` } }
        : { redirect_url: `${origin}/bank/${t.transId}?session=${randomBytes(8).toString('hex')}`, redirect_method: 'GET', redirect_params: [] };
    return { ...saleAnswer(t, 'REDIRECT'), ...redirect };
  }

  /** A transaction of the requesting account; another account's is not found, as an unknown one. */
  function byTransId(account: Account, fields: Record<string, string>): GatewayTransaction | { error: unknown } {
    const t = transactions.get(str(fields.trans_id));
    if (!t || t.clientKey !== account.clientKey) return { error: error(208001, 'Payment not found.') };
    if (!hashMatches(fields.hash, transactionHash(account.password, t.party, t.transId))) return { error: error(204001, 'Hash is not valid.') };
    return t;
  }

  function followUp(account: Account, fields: Record<string, string>): unknown {
    const found = byTransId(account, fields);
    if ('error' in found) return found.error;
    const t = found;
    const amount = fields.amount === undefined ? undefined : minorOfWireAmount(fields.amount, t.currency);
    if (fields.amount !== undefined && !amount) return error(100000, 'Request data is invalid.', [{ error_code: 100000, error_message: 'amount: This value should be greater than 0.' }]);
    const answer = (result: 'SUCCESS' | 'DECLINED', extra: Record<string, string> = {}) => ({ action: fields.action, result, status: t.status, order_id: t.orderId, trans_id: t.transId, amount: wireAmount(amount ?? t.amountMinor, t.currency), currency: t.currency, ...extra });
    const waitingOn = waiting.filter((w) => w.t === t).length;
    switch (fields.action) {
      case 'CAPTURE': {
        if (t.status !== 'PENDING' || waitingOn) return error(208003, 'Capture is allowed only for a PENDING payment.');
        const captured = amount ?? t.amountMinor;
        if (captured > t.amountMinor) return error(208004, 'Capture amount exceeds the authorized amount.');
        if (t.expYear === TEST_YEAR && t.expMonth === 3) {
          t.operations.push({ action: 'CAPTURE', result: 'DECLINED', amountMinor: captured, date: transDate() });
          notify(t, 'CAPTURE', 'DECLINED', { decline_reason: 'Capture declined by processing.' });
          return answer('DECLINED', { decline_reason: 'Capture declined by processing.' });
        }
        t.status = 'SETTLED';
        t.capturedMinor = captured;
        t.operations.push({ action: 'CAPTURE', result: 'SUCCESS', amountMinor: captured, date: transDate() });
        notify(t, 'CAPTURE', 'SUCCESS');
        return answer('SUCCESS');
      }
      case 'VOID': {
        if (t.status !== 'SETTLED' || t.refundedMinor > 0 || waitingOn) return error(208005, 'Void is allowed only for a SETTLED payment without refunds.');
        t.status = 'VOID';
        t.operations.push({ action: 'VOID', result: 'SUCCESS', amountMinor: t.capturedMinor, date: transDate() });
        notify(t, 'VOID', 'SUCCESS');
        return answer('SUCCESS');
      }
      case 'CREDITVOID': {
        // Accepted now, carried out now or later; what is accepted is reserved, so refunds in waiting
        // can never together exceed what was captured.
        const reserved = t.operations.filter((o) => o.result === 'WAITING').reduce((n, o) => n + o.amountMinor, 0);
        let op: GatewayTransaction['operations'][number];
        if (t.status === 'PENDING') {
          if (waitingOn) return error(208005, 'A reversal of this payment is already in progress.');
          if (amount !== undefined && amount !== t.amountMinor) return error(208009, 'Partial reversal is not allowed.');
          op = { action: 'REVERSAL', result: 'WAITING', amountMinor: t.amountMinor, date: transDate() };
        } else if (t.status === 'SETTLED') {
          const left = t.capturedMinor - t.refundedMinor - reserved;
          const refund = amount ?? left;
          if (refund <= 0 || refund > left) return error(208006, 'Refund amount exceeds the payment amount.');
          op = { action: 'REFUND', result: 'WAITING', amountMinor: refund, date: transDate() };
        } else {
          return error(208005, 'Refund is allowed only for a SETTLED or PENDING payment.');
        }
        t.operations.push(op);
        const run = () => {
          op.result = 'SUCCESS';
          op.date = transDate();
          if (op.action === 'REVERSAL') t.status = 'REVERSAL';
          else {
            t.refundedMinor += op.amountMinor;
            // A refund accepted before a chargeback and carried out after it leaves the status CHARGEBACK.
            if (t.refundedMinor === t.capturedMinor && t.status === 'SETTLED') t.status = 'REFUND';
          }
          // The callback names the payment (its trans_id), with the amount of this CREDITVOID.
          notify(t, 'CREDITVOID', 'SUCCESS', { amount: wireAmount(op.amountMinor, t.currency), creditvoid_date: transDate() });
        };
        const when = gateway.adversity.creditVoid;
        if (when === 'immediate') run();
        else {
          const entry = { t, run };
          waiting.push(entry);
          if (typeof when === 'number') {
            setTimeout(() => {
              const i = waiting.indexOf(entry);
              if (i >= 0) waiting.splice(i, 1)[0]!.run();
            }, when);
          }
        }
        return { action: 'CREDITVOID', result: 'ACCEPTED', order_id: t.orderId, trans_id: t.transId };
      }
      default:
        return error(204006, 'Action is not supported.');
    }
  }

  function status(t: GatewayTransaction, action: string) {
    return {
      action,
      result: 'SUCCESS',
      status: t.status,
      order_id: t.orderId,
      trans_id: t.transId,
      ...(t.status === 'DECLINED' && t.declineReason ? { decline_reason: t.declineReason } : {}),
      ...(t.recurringToken ? { recurring_token: t.recurringToken } : {}),
      ...(t.cardToken ? { card_token: t.cardToken } : {}),
      ...(t.digitalWallet ? { digital_wallet: t.digitalWallet } : {}),
    };
  }

  /**
   * GET_TRANS_DETAILS: the status answer plus the payer, amount, masked card and `transactions[]`,
   * the payment's whole history (the guide: lowercase `success|waiting|fail`; items carry date,
   * type and amount, no id of their own).
   */
  function details(t: GatewayTransaction) {
    const first = t.status === 'PREPARE' || t.status === '3DS' || t.status === 'REDIRECT' ? 'waiting' : t.status === 'DECLINED' && !t.operations.length ? 'fail' : 'success';
    const types: Record<string, string> = { CAPTURE: 'capture', VOID: 'void', REFUND: 'refund', REVERSAL: 'reversal' };
    return {
      ...status(t, 'GET_TRANS_DETAILS'),
      name: 'FAKE PAYER',
      mail: t.party.email,
      ip: '127.0.0.1',
      amount: wireAmount(t.amountMinor, t.currency),
      currency: t.currency,
      ...(t.digitalWallet ? {} : { card: maskOf(t.party.digits) }),
      transactions: [
        { date: t.date, type: t.auth ? 'auth' : 'sale', status: first, amount: wireAmount(t.amountMinor, t.currency) },
        ...t.operations.map((o) => ({ date: o.date ?? t.date, type: types[o.action] ?? o.action.toLowerCase(), status: o.result === 'SUCCESS' ? 'success' : o.result === 'WAITING' ? 'waiting' : 'fail', amount: wireAmount(o.amountMinor, t.currency) })),
      ],
    };
  }

  /** The ledger of one transaction: GET_TRANS_DETAILS, with amounts in minor units. */
  function ledgerEntry(t: GatewayTransaction): GatewayLedgerEntry {
    expireChallenges();
    const d = details(t);
    return {
      transId: t.transId,
      orderId: t.orderId,
      paymentId: t.orderId.split('.')[0]!,
      clientKey: t.clientKey,
      status: t.status,
      auth: t.auth,
      currency: t.currency,
      amountMinor: t.amountMinor,
      capturedMinor: t.capturedMinor,
      refundedMinor: t.refundedMinor,
      chargedBackMinor: t.chargedBackMinor ?? 0,
      ...(t.digitalWallet ? { digitalWallet: t.digitalWallet } : {}),
      transactions: d.transactions.map((i) => ({ type: i.type as GatewayLedgerEntry['transactions'][number]['type'], status: i.status as 'success' | 'waiting' | 'fail', amountMinor: minorOfWireAmount(i.amount, t.currency) ?? 0 })),
    };
  }

  function handle(fields: Record<string, string>): unknown {
    const account = accounts.get(str(fields.client_key));
    if (!account) return error(204002, 'Enabled merchant mappings or MIDs not found.');
    switch (fields.action) {
      case 'SALE':
      case 'RECURRING_SALE':
        return sale(account, fields);
      case 'CAPTURE':
      case 'VOID':
      case 'CREDITVOID':
        return followUp(account, fields);
      case 'GET_TRANS_STATUS': {
        const found = byTransId(account, fields);
        return 'error' in found ? found.error : status(found, 'GET_TRANS_STATUS');
      }
      case 'GET_TRANS_DETAILS': {
        const found = byTransId(account, fields);
        return 'error' in found ? found.error : details(found);
      }
      case 'GET_TRANS_STATUS_BY_ORDER': {
        const t = orderOf(account.clientKey, str(fields.order_id));
        if (!t) return error(208001, 'Payment not found.');
        if (!hashMatches(fields.hash, orderHash(account.password, t.party, t.orderId))) return error(204001, 'Hash is not valid.');
        return status(t, 'GET_TRANS_STATUS_BY_ORDER');
      }
      default:
        return error(204006, 'Action is not supported.');
    }
  }

  /** The ACS (3-D Secure) or bank page: a form whose answer goes back to the gateway. */
  function challengePage(res: ServerResponse, transId: string, flow: '3ds' | 'bank') {
    const t = transactions.get(transId);
    if (!t || !pendingChallenges.has(transId)) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('No such challenge.');
      return;
    }
    const title = flow === '3ds' ? 'Fake ACS: 3-D Secure' : 'Fake bank: confirm the payment';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>${esc(title)}</title></head><body><h1 id="challenge">${esc(title)}</h1>
<form method="post" action="/verify/${flow}/${esc(transId)}"><button name="answer" value="confirm" id="confirm">Confirm</button><button name="answer" value="cancel" id="cancel">Cancel</button></form></body></html>`);
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', origin);
      const body = await readBody(req);
      const form = Object.fromEntries(new URLSearchParams(body));
      if (req.method === 'POST' && url.pathname === '/post') {
        const action = str(form.action);
        const { card_number: _n, card_cvv2: _c, ...safe } = form;
        requests.push({ action, fields: safe });
        const adversity = gateway.adversity;
        // A wallet SALE is a SALE to every switch (its chances are SALE's); it is counted apart.
        const kind = action === 'SALE' && form.digital_wallet !== undefined ? 'wallet SALE' : action;
        if (drops.delete(action) || chance(adversity.drop[action])) {
          count(`${kind} dropped`);
          req.socket.destroy();
          return;
        }
        const lose = lostAnswers.delete(action) || chance(adversity.loseAnswer[action]);
        const asked = delays.get(action);
        delays.delete(action);
        const slowed = asked === undefined && chance(adversity.slow[action]);
        if (slowed) count(`${kind} slow`);
        const delay = asked ?? (slowed ? adversity.slowMs : 0);
        expireChallenges();
        beforeAnswer = [];
        let answer: unknown;
        let early: Promise<void>[];
        try {
          answer = handle(form);
        } finally {
          early = beforeAnswer;
          beforeAnswer = undefined;
        }
        await Promise.all(early);
        if (lose) {
          // Carried out; the answer never reaches the caller.
          count(`${kind} answer lost`);
          req.socket.destroy();
          return;
        }
        if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
        if (!res.destroyed) json(res, answer);
        return;
      }
      const acs = /^\/acs\/([\w-]+)$/.exec(url.pathname);
      if (acs && req.method === 'POST') return challengePage(res, acs[1]!, '3ds');
      const bank = /^\/bank\/([\w-]+)$/.exec(url.pathname);
      if (bank && req.method === 'GET') return challengePage(res, bank[1]!, 'bank');
      const verify = /^\/verify\/(3ds|bank)\/([\w-]+)$/.exec(url.pathname);
      if (verify && req.method === 'POST') {
        const t = finishChallenge(verify[2]!, form.answer === 'confirm');
        if (!t?.termUrl) {
          res.writeHead(404);
          res.end();
          return;
        }
        // Back to the merchant's term_url_3ds; what arrives there carries no outcome.
        res.writeHead(303, { location: t.termUrl });
        res.end();
        return;
      }
      res.writeHead(404);
      res.end();
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  Object.assign(gateway, { url: `${origin}/post`, origin });
  return gateway;
}
