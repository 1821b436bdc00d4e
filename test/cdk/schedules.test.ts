import { JOBS, type JobDefinition } from '../../lib/jobs';
import { STAGES } from '../../lib/naming';
import { ACCESS_MATRIX_JOBS, ACCESS_MATRIX_ROUTES, flatten, logicalId, resource, resourcesOfType, synthesize, type Resource, type Synthesized } from './synth';

/** EventBridge's rate expression, in the largest whole unit (as CDK writes it). */
function rateExpression(minutes: number): string {
  const [value, unit] = minutes % (24 * 60) === 0 ? [minutes / (24 * 60), 'day'] : minutes % 60 === 0 ? [minutes / 60, 'hour'] : [minutes, 'minute'];
  return `rate(${value} ${unit}${value === 1 ? '' : 's'})`;
}

/** A tick older than the job's interval is superseded by the next one (within the 1 min to 6 h ages Lambda allows). */
const staleAfterSeconds = (job: JobDefinition) => Math.min(Math.max(60, job.everyMinutes * 60), 6 * 3600);

function ruleOf({ stack, template }: Synthesized, job: JobDefinition): Resource {
  const rule = stack.jobs.rules.get(job.id);
  if (!rule) throw new Error(`No rule for job ${job.id}`);
  return resource(template, logicalId(rule));
}

const functionId = ({ stack }: Synthesized, job: JobDefinition) => logicalId(stack.jobFunctions.get(job.id)!.function);
const queueId = ({ stack }: Synthesized) => logicalId(stack.jobs.deadLetterQueue);

const rulesOf = ({ stack }: Synthesized, job: JobDefinition) => stack.jobs.allRules.get(job.id) ?? [];
const rulesPerJob = (job: JobDefinition) => Math.ceil((job.workers ?? 1) / 5);

/** Every worker of the job gets one target on a rule at the job's rate, told its part of the shards. */
function expectScheduled(synthesized: Synthesized, job: JobDefinition): void {
  const workers = job.workers ?? 1;
  expect(ruleOf(synthesized, job)).toBe(resource(synthesized.template, logicalId(rulesOf(synthesized, job)[0]!)));
  const targets = rulesOf(synthesized, job).flatMap((rule) => {
    const { Properties } = resource(synthesized.template, logicalId(rule));
    expect(Properties.ScheduleExpression).toBe(rateExpression(job.everyMinutes));
    expect(Properties.State).toBe('ENABLED');
    expect(Properties.Targets.length).toBeLessThanOrEqual(5);
    return Properties.Targets as Record<string, unknown>[];
  });
  expect(targets).toHaveLength(workers);
  targets.forEach((target, worker) =>
    expect(target).toEqual({
      Id: expect.any(String),
      Arn: { 'Fn::GetAtt': [functionId(synthesized, job), 'Arn'] },
      RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: staleAfterSeconds(job) },
      DeadLetterConfig: { Arn: { 'Fn::GetAtt': [queueId(synthesized), 'Arn'] } },
      ...(workers > 1 ? { Input: JSON.stringify({ worker, workers }) } : {}),
    }),
  );
}

describe.each(STAGES)('scheduled jobs (%s)', (stage) => {
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synthesize(stage);
  });

  test('have one EventBridge rule per job, and no other but the receipts\' bounce and complaint rule', () => {
    synthesized.template.resourceCountIs('AWS::Events::Rule', JOBS.reduce((n, j) => n + rulesPerJob(j), 0) + 1);
    expect(synthesized.stack.receiptMail?.feedbackRule).toBeDefined();
    expect([...synthesized.stack.jobs.rules.keys()].sort()).toEqual(JOBS.map((j) => j.id).sort());
  });

  describe.each(JOBS.map((j) => [j.id, j] as const))('%s', (_id, job) => {
    test(`runs every ${job.everyMinutes} min, invoking its own function, with bounded retries and a dead-letter queue`, () => {
      expectScheduled(synthesized, job);
    });

    test('may be invoked by its own rule only', () => {
      const permissions = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Permission')).filter(
        (p) => flatten(p.Properties.FunctionName) === `\${${functionId(synthesized, job)}.Arn}`,
      );
      expect(permissions.map((p) => [p.Properties.Principal, flatten(p.Properties.SourceArn)]).sort()).toEqual(
        rulesOf(synthesized, job).map((rule) => ['events.amazonaws.com', `\${${logicalId(rule)}.Arn}`]).sort(),
      );
    });

    test('does not retry a failed run and sends it to the dead-letter queue', () => {
      const configs = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::EventInvokeConfig')).filter(
        (c) => flatten(c.Properties.FunctionName) === `\${${functionId(synthesized, job)}}`,
      );
      expect(configs.map((c) => c.Properties)).toEqual([
        {
          FunctionName: { Ref: functionId(synthesized, job) },
          Qualifier: '$LATEST',
          MaximumRetryAttempts: 0,
          MaximumEventAgeInSeconds: staleAfterSeconds(job),
          DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId(synthesized), 'Arn'] } } },
        },
      ]);
    });
  });

  test('share one dead-letter queue, encrypted and kept 14 days (the only other queue is the callback stream\'s, test/cdk/callbacks.test.ts)', () => {
    synthesized.template.resourceCountIs('AWS::SQS::Queue', 2);
    const queue = resource(synthesized.template, queueId(synthesized));
    expect(queue.Properties).toEqual({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    expect(queue.DeletionPolicy).toBe(stage === 'prod' ? 'Retain' : 'Delete');
  });

  test('the dead-letter queue refuses plain HTTP and takes messages from EventBridge only for the job rules and the receipts\' feedback rule', () => {
    const [policy, ...others] = Object.values(resourcesOfType(synthesized.template, 'AWS::SQS::QueuePolicy')).filter((p) =>
      (p.Properties.Queues as unknown[]).some((q) => flatten(q) === `\${${queueId(synthesized)}}`),
    );
    expect(others).toEqual([]);
    expect(policy!.Properties.Queues).toEqual([{ Ref: queueId(synthesized) }]);
    const statements = policy!.Properties.PolicyDocument.Statement as Record<string, any>[];
    const queueArn = { 'Fn::GetAtt': [queueId(synthesized), 'Arn'] };
    expect(statements).toContainEqual({
      Effect: 'Deny',
      Principal: { AWS: '*' },
      Action: 'sqs:*',
      Resource: queueArn,
      Condition: { Bool: { 'aws:SecureTransport': 'false' } },
    });
    const allowed = statements.filter((s) => s.Effect === 'Allow');
    for (const s of allowed) {
      expect(s).toMatchObject({ Principal: { Service: 'events.amazonaws.com' }, Action: 'sqs:SendMessage', Resource: queueArn });
    }
    const sources = allowed.map((s) => flatten(s.Condition.ArnEquals['aws:SourceArn'])).sort();
    const rules = [...JOBS.flatMap((j) => rulesOf(synthesized, j)), synthesized.stack.receiptMail!.feedbackRule];
    expect(sources).toEqual(rules.map((rule) => `\${${logicalId(rule)}.Arn}`).sort());
  });
});

describe('jobs added to lib/jobs.ts later', () => {
  test('each get a rule at their own rate invoking their own function', () => {
    const synthesized = synthesize('dev', { routes: ACCESS_MATRIX_ROUTES, jobs: ACCESS_MATRIX_JOBS });
    synthesized.template.resourceCountIs('AWS::Events::Rule', ACCESS_MATRIX_JOBS.length);
    for (const job of ACCESS_MATRIX_JOBS) expectScheduled(synthesized, job);
  });

  test.each([
    ['runs less often than every minute', { everyMinutes: 0.5 }, /everyMinutes must be a whole number of at least 1/],
    ['could outlive its interval', { everyMinutes: 1, timeoutSeconds: 61 }, /timeoutSeconds must be a whole number from 1 to 60/],
    ['exceeds the Lambda timeout', { everyMinutes: 60, timeoutSeconds: 901 }, /timeoutSeconds must be a whole number from 1 to 900/],
  ])('are refused at synth when one %s', (_what, override, message) => {
    expect(() => synthesize('dev', { routes: [], jobs: [{ ...JOBS[0]!, ...override }] })).toThrow(message);
  });

  test('are refused at synth when two share an id', () => {
    expect(() => synthesize('dev', { routes: [], jobs: [JOBS[0]!, JOBS[0]!] })).toThrow(`Duplicate job id: ${JOBS[0]!.id}`);
  });
});
