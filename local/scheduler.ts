import { randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { LOCAL_JOBS, type JobDefinition } from '../lib/jobs';
import { importEntry } from './entries';
import { inInvocation, lambdaContext } from './lambda-context';

type JobHandler = (event: ScheduledEvent, context: Context) => Promise<unknown>;

function scheduledEvent(job: JobDefinition): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'local',
    resources: [`arn:aws:events:local:000000000000:rule/${job.id}`],
    detail: {},
  };
}

/**
 * Fires the stack's scheduled jobs on their schedule, like EventBridge would: a run is skipped while
 * the previous one of the same job is still going.
 */
export function startScheduler(jobs: readonly JobDefinition[] = LOCAL_JOBS, scale = 1, timeoutScale = 1): { runNow(id: string): Promise<unknown>; stop(): void } {
  const running = new Set<string>();
  const handlers = new Map<string, JobHandler>();
  const run = async (job: JobDefinition) => {
    if (running.has(job.id)) return undefined;
    running.add(job.id);
    try {
      let handler = handlers.get(job.id);
      if (!handler) {
        handler = ((await importEntry(job.entry)) as { handler: JobHandler }).handler;
        handlers.set(job.id, handler);
      }
      const context = lambdaContext(job.id, job.timeoutSeconds * timeoutScale);
      return await inInvocation(context, () => handler(scheduledEvent(job), context));
    } catch (e) {
      console.error(`job ${job.id} failed: ${(e as Error).name}`);
      return undefined;
    } finally {
      running.delete(job.id);
    }
  };
  const timers = jobs.map((job) => setInterval(() => void run(job), (job.localEverySeconds !== undefined ? job.localEverySeconds * 1000 : job.everyMinutes * 60_000) * scale));
  // Each job also runs once at start: after a crash, what was left in flight and is due is finished
  // at once instead of an interval later.
  const first = jobs.map((job) => setTimeout(() => void run(job), 0));
  return {
    runNow: (id) => {
      const job = jobs.find((j) => j.id === id);
      if (!job) throw new Error(`no job ${id}`);
      return run(job);
    },
    stop: () => {
      timers.forEach(clearInterval);
      first.forEach(clearTimeout);
    },
  };
}
