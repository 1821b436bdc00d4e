import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { JobDefinition } from '../jobs';
import { CheckoutFunction, type FunctionSettings } from './checkout-function';

export interface ScheduledJobsProps {
  readonly jobs: readonly JobDefinition[];
  readonly settings: FunctionSettings;
  readonly removalPolicy: RemovalPolicy;
  /**
   * Reserve each job's concurrency at its workers per tick. The three jobs start 96 invocations
   * every minute; unreserved, a backlog that keeps them all running (and the stream dispatcher
   * with them) takes that much of the account's concurrency from the API's routes. Reserved, a job
   * can never run more than its workers at once and the API keeps the rest; a run still going at the
   * next tick shows as a throttle (the FunctionThrottles alarm) rather than an overlap.
   */
  readonly reserveConcurrency: boolean;
}

/**
 * How often EventBridge tries again to hand a tick to the function. Lambda accepts an asynchronous
 * invocation unless it is throttled or unavailable, so a few retries are plenty.
 */
export const SCHEDULE_DELIVERY_RETRIES = 2;
/** EventBridge's limit of targets per rule. */
const TARGETS_PER_RULE = 5;
/** Lambda's own retries of a failed run: none, the next tick does the same due work. */
export const JOB_RUN_RETRIES = 0;
/** EventBridge and Lambda accept event ages from one minute to six hours (Lambda's limit). */
const MIN_EVENT_AGE_MINUTES = 1;
const MAX_EVENT_AGE_MINUTES = 6 * 60;
/** Lambda's longest timeout. */
const MAX_TIMEOUT_SECONDS = 900;
/** SQS's longest retention: two weeks to look into a failure. */
const DEAD_LETTER_RETENTION = Duration.days(14);

/** A tick is stale once the next one is due: the next run examines the same work. */
export const staleAfter = (job: JobDefinition): Duration =>
  Duration.minutes(Math.min(Math.max(job.everyMinutes, MIN_EVENT_AGE_MINUTES), MAX_EVENT_AGE_MINUTES));

function assertSchedulable(job: JobDefinition): void {
  if (!Number.isInteger(job.everyMinutes) || job.everyMinutes < 1) {
    throw new Error(`Job ${job.id}: everyMinutes must be a whole number of at least 1, got ${job.everyMinutes}`);
  }
  // A run that outlives its interval overlaps the next one on every tick.
  const limit = Math.min(MAX_TIMEOUT_SECONDS, job.everyMinutes * 60);
  if (!Number.isInteger(job.timeoutSeconds) || job.timeoutSeconds < 1 || job.timeoutSeconds > limit) {
    throw new Error(`Job ${job.id}: timeoutSeconds must be a whole number from 1 to ${limit}, got ${job.timeoutSeconds}`);
  }
}

/**
 * The scheduled jobs of lib/jobs.ts: per job its own function (the same kind as a route's) and
 * an EventBridge rule that invokes it every `everyMinutes`. A tick EventBridge cannot deliver, and
 * a run that fails, end up in one dead-letter queue, so a job that keeps failing leaves a trail.
 */
export class ScheduledJobs extends Construct {
  readonly deadLetterQueue: sqs.Queue;
  /** Each job's function by job id. */
  readonly functions: ReadonlyMap<string, CheckoutFunction>;
  /** Each job's (first) schedule by job id. */
  readonly rules: ReadonlyMap<string, events.Rule>;
  /** Every schedule of each job (one per 5 workers) by job id. */
  readonly allRules: ReadonlyMap<string, readonly events.Rule[]>;

  constructor(scope: Construct, id: string, props: ScheduledJobsProps) {
    super(scope, id);

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DEAD_LETTER_RETENTION,
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself the dead-letter queue of the scheduled jobs: the EventBridge targets send ' +
        'undeliverable ticks to it and the job functions send failed runs to it (on-failure destination). ' +
        'A dead-letter queue of a dead-letter queue would only move the same records once more.',
    });

    const functions = new Map<string, CheckoutFunction>();
    const rules = new Map<string, events.Rule>();
    const allRules = new Map<string, events.Rule[]>();
    for (const job of props.jobs) {
      if (functions.has(job.id)) throw new Error(`Duplicate job id: ${job.id}`);
      assertSchedulable(job);

      const jobFunction = new CheckoutFunction(this, job.id, {
        settings: props.settings,
        purpose: `${job.id} job: ${job.description}`,
        entry: job.entry,
        access: job.access,
        timeoutSeconds: job.timeoutSeconds,
        ...(props.reserveConcurrency ? { reservedConcurrency: job.singleFlight ? 1 : (job.workers ?? 1) } : {}),
        asyncInvoke: {
          retryAttempts: JOB_RUN_RETRIES,
          maxEventAge: staleAfter(job),
          onFailure: new destinations.SqsDestination(this.deadLetterQueue),
        },
      });

      // One target per worker, each told its part of the shards; a rule holds at most 5 targets.
      const workers = job.workers ?? 1;
      const jobRules: events.Rule[] = [];
      for (let first = 0; first < workers; first += TARGETS_PER_RULE) {
        const part = first / TARGETS_PER_RULE;
        const count = Math.min(TARGETS_PER_RULE, workers - first);
        jobRules.push(
          new events.Rule(this, part === 0 ? `${job.id}Schedule` : `${job.id}Schedule${part + 1}`, {
            description: `${job.description} (${props.settings.stage})${workers > 1 ? `, workers ${first}-${first + count - 1} of ${workers}` : ''}`,
            schedule: events.Schedule.rate(Duration.minutes(job.everyMinutes)),
            targets: Array.from({ length: count }, (_, i) =>
              new targets.LambdaFunction(jobFunction.function, {
                retryAttempts: SCHEDULE_DELIVERY_RETRIES,
                maxEventAge: staleAfter(job),
                deadLetterQueue: this.deadLetterQueue,
                ...(workers > 1 ? { event: events.RuleTargetInput.fromObject({ worker: first + i, workers }) } : {}),
              }),
            ),
          }),
        );
      }

      functions.set(job.id, jobFunction);
      rules.set(job.id, jobRules[0]!);
      allRules.set(job.id, jobRules);
    }
    this.functions = functions;
    this.rules = rules;
    this.allRules = allRules;
  }
}
