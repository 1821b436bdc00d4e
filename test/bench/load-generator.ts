import * as http from 'node:http';
import { percentile } from './stats';
import { createSessionBody, type MerchantCredentials } from './requests';

/**
 * A small closed-loop load generator, run in its own process (see throughput.ts) so it does not
 * share an event loop with the server it measures. `concurrency` loops each keep one request in
 * flight over keep-alive connections; every request is a freshly signed create-session body
 * with a unique order number, whatever the target, so only the server differs between targets.
 */
export interface LoadPlan {
  readonly url: string;
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly merchant: MerchantCredentials;
}

export interface LoadResult {
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly elapsedMs: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

async function run(plan: LoadPlan): Promise<LoadResult> {
  const target = new URL(plan.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: plan.concurrency });
  let seq = 0;
  const post = (body: string) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        { agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
          res.once('error', reject);
        },
      );
      req.once('error', reject);
      req.end(body);
    });

  const phase = async (ms: number, record: boolean) => {
    const latencies: number[] = [];
    let non2xx = 0;
    let errors = 0;
    const start = performance.now();
    const stopAt = start + ms;
    const loop = async () => {
      while (performance.now() < stopAt) {
        const body = JSON.stringify(createSessionBody(plan.merchant, `load-${process.pid}-${++seq}`));
        const t = performance.now();
        try {
          const status = await post(body);
          if (status < 200 || status > 299) non2xx++;
        } catch {
          errors++;
        }
        if (record) latencies.push(performance.now() - t);
      }
    };
    await Promise.all(Array.from({ length: plan.concurrency }, loop));
    return { latencies, non2xx, errors, elapsedMs: performance.now() - start };
  };

  await phase(plan.warmupMs, false);
  const { latencies, non2xx, errors, elapsedMs } = await phase(plan.durationMs, true);
  agent.destroy();
  return {
    requests: latencies.length,
    non2xx,
    errors,
    elapsedMs,
    requestsPerSecond: latencies.length / (elapsedMs / 1000),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
  };
}

if (process.send) {
  process.once('message', (plan: LoadPlan) => {
    run(plan).then(
      (result) => process.send?.({ ok: true, result }, undefined, {}, () => process.exit(0)),
      (e: unknown) => process.send?.({ ok: false, error: String((e as Error)?.stack ?? e) }, undefined, {}, () => process.exit(1)),
    );
  });
}
