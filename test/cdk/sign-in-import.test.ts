import { JOBS, LOCAL_JOBS, SIGN_IN_IMPORT_JOB_ID } from '../../lib/jobs';
import { STAGES } from '../../lib/naming';
import { flatten, logicalId, resource, resourcesOfType, synthesize } from './synth';

/**
 * The operators' sign-ins on Cognito's pages reach the audit log (ADR 0019) through the
 * ImportSignIns job: on every cloud stage, every 5 minutes, told its user pool and allowed to read
 * that pool's users and sign-in events and nothing else of Cognito; never two runs at once where
 * the stage reserves its jobs' concurrency. The local runner has no such job: it records its
 * sign-ins as they happen.
 */
const job = JOBS.find((j) => j.id === SIGN_IN_IMPORT_JOB_ID)!;

test('is a cloud job the local runner neither runs nor lists', () => {
  expect(job).toMatchObject({ everyMinutes: 5, cloudOnly: true, singleFlight: true });
  expect(LOCAL_JOBS.map((j) => j.id)).not.toContain(SIGN_IN_IMPORT_JOB_ID);
  expect(LOCAL_JOBS).toHaveLength(JOBS.length - 1);
});

describe.each(STAGES)('on %s', (stage) => {
  const { stack, template } = synthesize(stage);
  const fn = stack.jobFunctions.get(SIGN_IN_IMPORT_JOB_ID)!;
  const properties = resource(template, logicalId(fn.function)).Properties;

  test('runs every 5 minutes, told the operators\' pool', () => {
    const rules = Object.values(resourcesOfType(template, 'AWS::Events::Rule')).filter((r) => (r.Properties.Targets as { Arn: unknown }[] | undefined)?.some((t) => flatten(t.Arn) === `\${${logicalId(fn.function)}.Arn}`));
    expect(rules.map((r) => r.Properties.ScheduleExpression)).toEqual(['rate(5 minutes)']);
    expect(properties.Environment.Variables.OPERATOR_POOL_ID).toEqual({ Ref: logicalId(stack.operators.userPool) });
  });

  test('reads that pool\'s users and sign-in events, and no other Cognito action or pool', () => {
    const roleId = logicalId(fn.role as never);
    const cognito = Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown; Effect: string }[])
      .filter((st) => [st.Action].flat().some((a) => a.startsWith('cognito-idp:')));
    const own = Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).filter((p) => (p.Properties.Roles as unknown[]).some((r) => flatten(r) === `\${${roleId}}`));
    expect(own.flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: unknown }[]).filter((st) => [st.Action].flat().some((a) => String(a).startsWith('cognito-idp:'))).map((st) => [st.Action].flat().sort())).toEqual([['cognito-idp:AdminListUserAuthEvents', 'cognito-idp:ListUsers']]);
    // No other function holds a Cognito permission.
    expect(cognito.map((st) => ({ effect: st.Effect, resource: flatten(st.Resource) }))).toEqual([{ effect: 'Allow', resource: `\${${logicalId(stack.operators.userPool)}.Arn}` }]);
  });

  test(stage === 'dev' ? 'reserves nothing on dev (a new account\'s quota could not)' : 'never runs beside itself: its reserved concurrency is 1', () => {
    expect(properties.ReservedConcurrentExecutions).toBe(stage === 'dev' ? undefined : 1);
  });
});
