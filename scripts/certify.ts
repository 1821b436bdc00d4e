import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { expect } from 'expect';
import { createDocumentClient } from '../lambdas/adapters/dynamodb/client';
import { acceptNotification } from '../lambdas/adapters/s2s-card/notifications';
import { S2SRecords } from '../lambdas/adapters/s2s-card/records';
import { S2SCardAcquirer } from '../lambdas/adapters/s2s-card/s2s-card-acquirer';
import { singleAccountSettings } from '../lambdas/adapters/s2s-card/settings';
import type { AcquirerOutcome } from '../lambdas/ports/acquirer';
import { startLocalBackend } from '../local/backend';
import { startFakeGateway, type FakeGateway } from '../test/support/s2s-card-gateway';
import type { AcquirerHarness } from '../test/acquirers/acquirer-contract';

/**
 * `npm run certify -- --report FILE`: the acquirer contract suite (test/acquirers/acquirer-contract.ts)
 * run against a real S2S CARD sandbox (S2S_CARD_URL, S2S_CARD_CLIENT_KEY, S2S_CARD_PASSWORD), then a
 * report: each contract step passed, failed, or needing a customer in a browser (3-D Secure and bank
 * pages, which only a person can answer on the gateway's sandbox), and each open point of
 * docs/acquirers/s2s-card.md's "Decisions where the guide is unclear" answered by what this run saw
 * on the wire, or still open. `--fake-gateway` runs it against our own fake (test/support), whose
 * challenges it answers through the fake's API; `npm test` does that (test/integration/certify.test.ts).
 *
 * The connector keeps its records on a local engine; the gateway's callbacks are received on
 * 127.0.0.1:--notify-port (the sandbox account's Notification URL must reach it, e.g. through a tunnel;
 * without callbacks, partial refunds stay unanswered and the report says so).
 */

export const DECISIONS_DOC = 'docs/acquirers/s2s-card.md';
const USAGE = `usage: npm run certify -- --report FILE [--fake-gateway] [--notify-port PORT] [--timeout-ms MS]
  S2S_CARD_URL, S2S_CARD_CLIENT_KEY, S2S_CARD_PASSWORD: the gateway's sandbox (not with --fake-gateway)`;

/** One step of the contract as it ran. */
export interface StepResult {
  readonly name: string;
  readonly outcome: 'passed' | 'failed' | 'manual';
  readonly detail?: string;
}

/** One request to the gateway and its answer (no card number, no CVV, no hash). */
interface WireExchange {
  readonly action: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly answer?: Readonly<Record<string, unknown>>;
  readonly lost?: boolean;
}

/** A step that needs the customer's browser on the gateway's pages. */
class NeedsBrowser extends Error {
  constructor(what: string) {
    super(`needs a browser / manual: ${what}`);
    this.name = 'NeedsBrowser';
  }
}

/** The contract's test functions, collected instead of run by Jest. */
interface Collected {
  readonly tests: { name: string; fn: () => unknown }[];
  readonly before: (() => unknown)[];
  readonly after: (() => unknown)[];
}

const format = (title: string, args: readonly unknown[]) => {
  let i = 0;
  return title.replace(/%[sdp]/g, () => String(args[i++]));
};

/** describe / test / beforeAll / afterAll / expect as the contract file uses them, collecting into `into`. */
function installGlobals(into: Collected): () => void {
  const g = globalThis as Record<string, unknown>;
  const saved = Object.fromEntries(['describe', 'test', 'it', 'beforeAll', 'afterAll', 'expect'].map((k) => [k, g[k]]));
  const prefix: string[] = [];
  const test = (name: string, fn: () => unknown) => void into.tests.push({ name: [...prefix, name].join(' › '), fn });
  test.each = (rows: readonly (readonly unknown[])[]) => (name: string, fn: (...a: unknown[]) => unknown) => {
    for (const row of rows) test(format(name, row), () => fn(...row));
  };
  Object.assign(g, {
    describe: (name: string, body: () => void) => {
      prefix.push(name);
      try {
        body();
      } finally {
        prefix.pop();
      }
    },
    test,
    it: test,
    beforeAll: (fn: () => unknown) => void into.before.push(fn),
    afterAll: (fn: () => unknown) => void into.after.push(fn),
    expect,
  });
  return () => Object.assign(g, saved);
}

/** Runs each collected step in order, with a time limit; a step that throws NeedsBrowser is manual. */
async function runCollected(collected: Collected, stepTimeoutMs: number): Promise<StepResult[]> {
  for (const fn of collected.before) await fn();
  const results: StepResult[] = [];
  try {
    for (const t of collected.tests) {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(t.fn),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no result within ${stepTimeoutMs} ms`)), stepTimeoutMs);
          }),
        ]);
        results.push({ name: t.name, outcome: 'passed' });
      } catch (e) {
        const message = (e as Error).message.replace(/\u001b\[[0-9;]*m/g, '').split('\n').filter(Boolean).slice(0, 6).join(' ');
        results.push(e instanceof NeedsBrowser ? { name: t.name, outcome: 'manual', detail: message } : { name: t.name, outcome: 'failed', detail: message });
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    for (const fn of collected.after) await fn();
  }
  return results;
}

const SECRET_FIELDS = new Set(['card_number', 'card_cvv2', 'hash', 'password']);

/**
 * Wraps fetch for requests to the gateway: records each exchange, and drops the answer to the next
 * request of an action when asked (the gateway did the work; our side never hears: a lost answer).
 */
function wireTap(gatewayUrl: string): { exchanges: WireExchange[]; loseNextAnswer(action: string): void; restore(): void } {
  const exchanges: WireExchange[] = [];
  const losing = new Set<string>();
  const original = globalThis.fetch;
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url !== gatewayUrl || typeof init?.body !== 'string') return original(input, init);
    const fields = Object.fromEntries([...new URLSearchParams(init.body)].filter(([k]) => !SECRET_FIELDS.has(k)));
    const action = fields.action ?? '';
    const response = await original(input, init);
    const text = await response.text();
    let answer: Record<string, unknown> | undefined;
    try {
      answer = JSON.parse(text) as Record<string, unknown>;
    } catch {
      answer = { unparsed: text.slice(0, 200) };
    }
    if (losing.delete(action)) {
      exchanges.push({ action, fields, answer, lost: true });
      throw new DOMException('The answer was dropped by the certification run (a lost answer)', 'TimeoutError');
    }
    exchanges.push({ action, fields, answer });
    return new Response(text, { status: response.status, headers: response.headers });
  }) as typeof fetch;
  return { exchanges, loseNextAnswer: (action) => void losing.add(action), restore: () => void (globalThis.fetch = original) };
}

export interface Decision {
  readonly point: string;
  readonly decision: string;
  readonly status: 'answered' | 'open';
  readonly observation: string;
}

/** The rows of the doc's "Decisions where the guide is unclear" table: point and decision. */
export function decisionRows(markdown: string): { point: string; decision: string }[] {
  const section = markdown.split(/^## Decisions where the guide is unclear$/m)[1]?.split(/^## /m)[0] ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| point') && !/^\|[-| ]+\|$/.test(l))
    .map((l) => l.split('|').map((c) => c.trim()))
    .map((cells) => ({ point: cells[1]!, decision: cells[3]! }));
}

interface Evidence {
  readonly exchanges: readonly WireExchange[];
  readonly callbacks: readonly { fields: Record<string, string>; answer: string }[];
  readonly probes: Readonly<Record<string, AcquirerOutcome | { kind: 'error'; reason: string }>>;
  readonly steps: readonly StepResult[];
  readonly fake: boolean;
}

const answered = (observation: string): Pick<Decision, 'status' | 'observation'> => ({ status: 'answered', observation });
const open = (observation: string): Pick<Decision, 'status' | 'observation'> => ({ status: 'open', observation });
const describeOutcome = (o: Evidence['probes'][string] | undefined) => (!o ? 'not tried' : o.kind === 'declined' || o.kind === 'error' ? `${o.kind}: ${(o as { reason?: string }).reason ?? ''}` : o.kind);

/** What this run saw about each open point, keyed by a word of its name; points without an observer stay open. */
const OBSERVERS: readonly [RegExp, (e: Evidence) => Pick<Decision, 'status' | 'observation'>][] = [
  [/^Idempotency of an authorization/, (e) => {
    const sales = e.exchanges.filter((x) => x.action === 'SALE');
    const orders = new Set(sales.map((x) => x.fields.order_id));
    return open(`our side: ${sales.length} SALE requests for ${orders.size} orders, replays answered from records or by lookup; what the gateway does with a reused order_id was not tried (the connector never resends one)`);
  }],
  [/^Hash of GET_TRANS_STATUS_BY_ORDER/, (e) => {
    const lookups = e.exchanges.filter((x) => x.action === 'GET_TRANS_STATUS_BY_ORDER');
    if (!lookups.length) return open('no lookup by order was sent in this run');
    const refused = lookups.filter((x) => x.answer?.result === 'ERROR');
    return refused.length === lookups.length
      ? answered(`the decision is wrong: all ${lookups.length} lookups by order were refused (${String(refused[0]!.answer?.error_message ?? '')})`)
      : answered(`Formula 7 accepted: ${lookups.length - refused.length} of ${lookups.length} lookups by order answered with the transaction`);
  }],
  [/^Follow-ups have no idempotency key/, (e) => {
    const captures = e.exchanges.filter((x) => x.action === 'CAPTURE');
    const perTrans = new Map<string, WireExchange[]>();
    for (const c of captures) perTrans.set(c.fields.trans_id ?? '', [...(perTrans.get(c.fields.trans_id ?? '') ?? []), c]);
    const second = [...perTrans.values()].find((l) => l.length > 1)?.[1];
    return second
      ? answered(`a second CAPTURE of one trans_id was answered ${String(second.answer?.result)}${second.answer?.error_message ? ` (${String(second.answer.error_message)})` : ''}; the connector's intent records keep our own replays from sending again`)
      : open('no follow-up was sent twice for one payment in this run');
  }],
  [/^A follow-up whose answer was lost/, (e) => {
    const statuses = [...new Set(e.exchanges.filter((x) => /^GET_TRANS_(STATUS|DETAILS)/.test(x.action)).map((x) => String(x.answer?.status ?? '')).filter(Boolean))];
    return statuses.length ? answered(`statuses the gateway reported in this run: ${statuses.join(', ')}`) : open('no status lookup after a follow-up in this run');
  }],
  [/^Matching a CREDITVOID callback/, (e) => {
    const cb = e.callbacks.filter((c) => c.fields.action === 'CREDITVOID');
    return cb.length
      ? answered(`${cb.length} CREDITVOID callbacks, fields: ${Object.keys(cb[0]!.fields).sort().join(', ')}; answered ${[...new Set(cb.map((c) => c.answer))].join('/')}`)
      : open('no CREDITVOID callback reached the receiver (is the account\'s Notification URL pointed at it?)');
  }],
  [/^`term_url_3ds`/, (e) =>
    e.fake
      ? answered('the browser is sent to term_url_3ds with nothing in it')
      : open('needs a browser / manual: complete a 3-D Secure test card on the sandbox and look at what arrives at /auth/{token}/complete')],
  [/^POST redirects/, (e) => {
    const redirect = e.exchanges.find((x) => x.answer?.result === 'REDIRECT');
    if (!redirect) return open('no REDIRECT answer in this run');
    const params = redirect.answer?.redirect_params;
    return answered(`REDIRECT answered with redirect_method ${String(redirect.answer?.redirect_method)} and redirect_params ${params && typeof params === 'object' ? `{${Object.keys(params).join(', ')}}` : JSON.stringify(params)}`);
  }],
  [/^Zero-decimal amounts/, (e) => {
    const sent = e.exchanges.find((x) => x.action === 'SALE' && x.fields.order_currency === 'JPY');
    return sent ? answered(`a JPY sale sent as order_amount ${sent.fields.order_amount}: ${describeOutcome(e.probes.jpy)}`) : open('the JPY probe did not run');
  }],
  [/^Card digits in hashes/, (e) => {
    const ok = e.callbacks.filter((c) => c.answer === 'OK');
    return ok.length ? answered(`${ok.length} callbacks verified with Formula 2 from the kept first six and last four digits`) : open('no callback was verified in this run');
  }],
  [/^IPv6 payer addresses/, (e) => (e.probes.ipv6 ? answered(`a SALE with payer_ip 2001:db8::7: ${describeOutcome(e.probes.ipv6)}`) : open('the IPv6 probe did not run'))],
  [/^VOID callback hash/, (e) => {
    const cb = e.callbacks.filter((c) => c.fields.action === 'VOID');
    return cb.length ? answered(`${cb.length} VOID callbacks; Formula 2 ${cb.every((c) => c.answer === 'OK') ? 'verified every one' : 'failed on some'}`) : open('no VOID callback reached the receiver');
  }],
  [/^Payer address fields/, (e) => (e.probes.noAddress ? answered(`a SALE without billing address: ${describeOutcome(e.probes.noAddress)}`) : open('the probe did not run'))],
];

export function observeDecisions(rows: readonly { point: string; decision: string }[], evidence: Evidence): Decision[] {
  return rows.map((row) => {
    const observer = OBSERVERS.find(([pattern]) => pattern.test(row.point));
    const seen = observer ? observer[1](evidence) : open('no run can observe this: a decision of ours or the account\'s set-up, to settle with the gateway');
    return { ...row, ...seen, ...(evidence.fake && seen.status === 'answered' ? { observation: `${seen.observation} [fake gateway: describes our fake, not the gateway]` } : {}) };
  });
}

export interface CertifyOptions {
  readonly target: { readonly url: string; readonly clientKey: string; readonly password: string } | 'fake';
  readonly notifyPort?: number;
  readonly timeoutMs?: number;
}

export interface Certification {
  readonly target: string;
  readonly steps: readonly StepResult[];
  readonly decisions: readonly Decision[];
}

/** Runs the contract and the probes against the target; the report's content. */
export async function certify(options: CertifyOptions): Promise<Certification> {
  const backend = await startLocalBackend();
  const client = createDocumentClient({ endpoint: backend.dynamodbEndpoint });
  const records = new S2SRecords(client, backend.tableName);
  let fake: FakeGateway | undefined;
  let receiver: Server | undefined;
  let tap: ReturnType<typeof wireTap> | undefined;
  try {
    fake = options.target === 'fake' ? await startFakeGateway() : undefined;
    const target = fake ? { url: fake.url, clientKey: fake.clientKey, password: fake.password } : (options.target as Exclude<CertifyOptions['target'], 'fake'>);
    const timeoutMs = options.timeoutMs ?? 15_000;
    const acquirer = new S2SCardAcquirer(singleAccountSettings(target, timeoutMs), records, { followUpWaitMs: 5_000 });
    const callbacks: { fields: Record<string, string>; answer: string }[] = [];
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const fields = Object.fromEntries(new URLSearchParams(body));
        void acceptNotification(acquirer, records, fields).then(
          (r) => {
            const { hash: _h, ...shown } = fields;
            callbacks.push({ fields: shown, answer: r.answer });
            res.end(r.answer);
          },
          () => res.end('ERROR'),
        );
      });
    });
    await new Promise<void>((done) => receiver!.listen(options.notifyPort ?? 0, '127.0.0.1', () => done()));
    if (fake) fake.notifyUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/acquirer/s2s-card/notify`;
    tap = wireTap(target.url);

    const harness: AcquirerHarness = {
      acquirer,
      answerChallenge: async (_key, action, confirm) => {
        if (!fake) throw new NeedsBrowser(`${confirm ? 'confirm' : 'refuse'} the ${action.flow} page at ${action.url} as the customer`);
        await fake.answerChallenge(action.acquirerRef, confirm);
      },
      loseNextAnswer: async (request) => {
        tap!.loseNextAnswer('SALE');
        return request;
      },
      closesChallenges: false,
    };
    const collected: Collected = { tests: [], before: [], after: [] };
    // The contract's steps call the globals when they run, not only when they are declared.
    const restore = installGlobals(collected);
    let steps: StepResult[];
    try {
      const { acquirerContract } = (await import('../test/acquirers/acquirer-contract')) as typeof import('../test/acquirers/acquirer-contract');
      acquirerContract('the S2S CARD connector', () => harness);
      steps = await runCollected(collected, timeoutMs * 3 + 10_000);
    } finally {
      restore();
    }

    // Probes of the open points the contract does not touch.
    const { cardRequest } = await import('../test/acquirers/acquirer-contract');
    const probe = async (request: Parameters<typeof acquirer.authorize>[0]) => acquirer.authorize(request).catch((e: unknown) => ({ kind: 'error' as const, reason: (e as Error).message }));
    const probes = {
      jpy: await probe(cardRequest(1, { currency: 'JPY', amountMinor: 1000 })),
      ipv6: await probe(cardRequest(1, { browser: { ip: '2001:db8::7' } })),
      noAddress: await probe(cardRequest(1, { payer: { email: 'jane.roe@example.com', name: 'Jane Roe' } })),
    };
    // Callbacks of the last requests may still be on their way.
    await new Promise((r) => setTimeout(r, fake ? 300 : 5_000));
    const doc = readFileSync(resolve(__dirname, '..', DECISIONS_DOC), 'utf8');
    const decisions = observeDecisions(decisionRows(doc), { exchanges: tap.exchanges, callbacks, probes, steps, fake: Boolean(fake) });
    return { target: fake ? 'our fake gateway (test/support/s2s-card-gateway.ts)' : target.url, steps, decisions };
  } finally {
    tap?.restore();
    await new Promise<void>((done) => (receiver ? receiver.close(() => done()) : done()));
    await fake?.close();
    client.destroy();
    await backend.close();
  }
}

export function renderCertification(c: Certification, now: Date): string {
  const count = (o: StepResult['outcome']) => c.steps.filter((s) => s.outcome === o).length;
  const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [
    '# S2S CARD certification run',
    '',
    `Target: ${c.target}. Run at ${now.toISOString()} by \`npm run certify\` (scripts/certify.ts).`,
    '',
    `Contract (test/acquirers/acquirer-contract.ts): ${count('passed')} passed, ${count('failed')} failed, ${count('manual')} need a browser / manual.`,
    '',
    '| step | outcome | detail |',
    '|---|---|---|',
    ...c.steps.map((s) => `| ${cell(s.name)} | ${s.outcome === 'manual' ? 'needs a browser / manual' : s.outcome} | ${cell(s.detail ?? '')} |`),
    '',
    `## Open points of ${DECISIONS_DOC} ("Decisions where the guide is unclear")`,
    '',
    `${c.decisions.filter((d) => d.status === 'answered').length} answered by an observation, ${c.decisions.filter((d) => d.status === 'open').length} still open.`,
    '',
    '| point | our decision | status | observation |',
    '|---|---|---|---|',
    ...c.decisions.map((d) => `| ${cell(d.point)} | ${cell(d.decision)} | ${d.status} | ${cell(d.observation)} |`),
    '',
  ].join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({ args: [...argv], options: { report: { type: 'string' }, 'fake-gateway': { type: 'boolean' }, 'notify-port': { type: 'string' }, 'timeout-ms': { type: 'string' }, help: { type: 'boolean' } }, strict: true }).values;
  } catch (e) {
    console.error(`certify: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.report) {
    console.error(`certify: --report FILE is needed\n${USAGE}`);
    return 2;
  }
  const { S2S_CARD_URL: url, S2S_CARD_CLIENT_KEY: clientKey, S2S_CARD_PASSWORD: password } = process.env;
  if (!values['fake-gateway'] && (!url || !clientKey || !password)) {
    console.error(`certify: S2S_CARD_URL, S2S_CARD_CLIENT_KEY and S2S_CARD_PASSWORD must name the gateway's sandbox (or pass --fake-gateway)\n${USAGE}`);
    return 2;
  }
  const port = values['notify-port'] === undefined ? undefined : Number(values['notify-port']);
  const timeoutMs = values['timeout-ms'] === undefined ? undefined : Number(values['timeout-ms']);
  const result = await certify({ target: values['fake-gateway'] ? 'fake' : { url: url!, clientKey: clientKey!, password: password! }, ...(port !== undefined ? { notifyPort: port } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
  writeFileSync(values.report, renderCertification(result, new Date()));
  const failed = result.steps.filter((s) => s.outcome === 'failed');
  const manual = result.steps.filter((s) => s.outcome === 'manual');
  console.log(`certify: ${result.steps.length - failed.length - manual.length} passed, ${failed.length} failed, ${manual.length} need a browser / manual; ${result.decisions.filter((d) => d.status === 'answered').length} of ${result.decisions.length} open points answered; report in ${values.report}`);
  return failed.length ? 1 : 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error('certify crashed:', e);
      process.exit(1);
    },
  );
}
