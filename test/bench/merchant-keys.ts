import { randomUUID } from 'node:crypto';
import { validSessionBody } from '../support/fixtures';
import { recordCalls } from '../support/sdk-calls';
import type { TestService } from '../support/service';

/**
 * Requests with random merchant keys (ADR 0025): what a forger's flood costs. Every request is a
 * well-formed POST /api/v1/session whose merchant_key is no merchant's; each must be refused with
 * the wrong-hash answer, and none may reach Secrets Manager. Counted at the SDK (each command sent,
 * retries included) on one instance of the function, as one Lambda instance would see them.
 */
export const RANDOM_KEY_REQUESTS = 1000;
const CONCURRENCY = 16;

export const MERCHANT_KEYS_SECTION_START = '<!-- merchant-keys:start -->';
export const MERCHANT_KEYS_SECTION_END = '<!-- merchant-keys:end -->';

export interface RandomKeysResult {
  readonly requests: number;
  /** Answers other than the 400 wrong-hash refusal (must be 0). */
  readonly unexpectedAnswers: number;
  readonly secretsManagerCalls: number;
  /** DynamoDB commands by name, for the first pass (each key new to the instance). */
  readonly dynamoDbCalls: Record<string, number>;
  /** The same keys again within the minute: refused from the instance's memory. */
  readonly repeat: { readonly secretsManagerCalls: number; readonly dynamoDbCalls: number };
  readonly seconds: number;
}

const tally = (calls: readonly string[]): Record<string, number> => calls.reduce<Record<string, number>>((t, c) => ({ ...t, [c]: (t[c] ?? 0) + 1 }), {});

async function send(service: TestService, keys: readonly string[]): Promise<number> {
  let unexpected = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < keys.length) {
        const key = keys[next++]!;
        const res = await service.post(`/api/v1/session`, validSessionBody(key, { hash: 'a'.repeat(40) }));
        if (res.status !== 400) unexpected++;
      }
    }),
  );
  return unexpected;
}

export async function measureRandomMerchantKeys(service: TestService, requests = RANDOM_KEY_REQUESTS): Promise<RandomKeysResult> {
  const secrets = recordCalls(service.deps.secretsClient, 'bench-random-keys-secrets');
  const db = recordCalls(service.deps.db, 'bench-random-keys-dynamodb');
  const keys = Array.from({ length: requests }, () => randomUUID());
  const started = performance.now();
  const unexpected = await send(service, keys);
  const first = { secrets: secrets.calls.length, db: tally(db.calls) };
  secrets.reset();
  db.reset();
  const unexpectedAgain = await send(service, keys);
  const seconds = (performance.now() - started) / 1000;
  return {
    requests,
    unexpectedAnswers: unexpected + unexpectedAgain,
    secretsManagerCalls: first.secrets,
    dynamoDbCalls: first.db,
    repeat: { secretsManagerCalls: secrets.calls.length, dynamoDbCalls: db.calls.length },
    seconds,
  };
}

const fmt = (n: number) => n.toLocaleString('en');

/** The line `npm run bench` prints; the goal is 0 Secrets Manager calls. */
export const randomKeysLine = (r: RandomKeysResult): string =>
  `Secrets Manager calls for ${fmt(r.requests)} requests with random merchant keys: ${fmt(r.secretsManagerCalls)} (goal 0, ${r.secretsManagerCalls === 0 ? 'met' : 'NOT met'})`;

export function renderRandomKeysSection(r: RandomKeysResult): string[] {
  const db = Object.entries(r.dynamoDbCalls).map(([c, n]) => `${fmt(n)} ${c}`).join(', ') || 'none';
  return [
    '## Requests with random merchant keys',
    '',
    `Produced by \`npm run bench\` (alone: \`npm run bench -- --only merchant-keys\`). ${fmt(r.requests)} well-formed \`POST /api/v1/session\` requests, ${CONCURRENCY} at a time, each with a random`,
    '`merchant_key` that is no merchant\'s and a 40-character hash, against the local runner; then the same keys again. Calls counted at the',
    'AWS SDK (every command sent) on one instance, as one Lambda instance would make them (ADR 0025).',
    '',
    '| | first pass | same keys again |',
    '|---|---:|---:|',
    `| Secrets Manager calls | **${fmt(r.secretsManagerCalls)}** | ${fmt(r.repeat.secretsManagerCalls)} |`,
    `| DynamoDB calls | ${db} | ${fmt(r.repeat.dynamoDbCalls)} |`,
    `| answers other than the 400 wrong-hash refusal | ${fmt(r.unexpectedAnswers)} | |`,
    '',
    `${randomKeysLine(r)}. Each unknown key costs one consistent read of the merchant directory (one read unit, $0.25 per million on demand) once a`,
    `minute per instance, instead of a Secrets Manager call ($0.05 per 10,000) every time; both passes took ${r.seconds.toFixed(1)} s.`,
  ];
}

/** The report with this section replaced (or added at the end). */
export function spliceRandomKeysSection(report: string, section: readonly string[]): string {
  const block = [MERCHANT_KEYS_SECTION_START, ...section, MERCHANT_KEYS_SECTION_END].join('\n');
  const start = report.indexOf(MERCHANT_KEYS_SECTION_START);
  const end = report.indexOf(MERCHANT_KEYS_SECTION_END);
  if (start >= 0 && end > start) return `${report.slice(0, start)}${block}${report.slice(end + MERCHANT_KEYS_SECTION_END.length)}`;
  return `${report.trimEnd()}\n\n${block}\n`;
}
