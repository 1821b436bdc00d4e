import { STAGES } from '../../lib/naming';
import { ROUTES } from '../../lib/routes';
import { JOBS } from '../../lib/jobs';
import { flatten, logicalId, resource, resourcesOfType, synthesize } from './synth';

/**
 * The portal's page cursors are sealed with a generated secret of the stack (never a key derived
 * from names anyone can read), which only the functions that seal and open cursors may read.
 */
const CURSOR_FUNCTIONS = ['AdminAudit', 'AdminAuditExport', 'AdminPayments', 'AdminPaymentsCount', 'AdminPaymentsExport'];

test('the routes that seal or open cursors are the four that declare it, and no job', () => {
  expect(ROUTES.filter((r) => r.access.cursorSecret).map((r) => r.id).sort()).toEqual(CURSOR_FUNCTIONS);
  expect(JOBS.filter((j) => (j.access as { cursorSecret?: true }).cursorSecret)).toEqual([]);
});

describe.each(STAGES)('on %s', (stage) => {
  test('the cursor key is a generated Secrets Manager secret of 64 characters, removed with the stack only where data is', () => {
    const { stack, template } = synthesize(stage);
    const secret = resource(template, logicalId(stack.cursorSecret));
    expect(secret.Type).toBe('AWS::SecretsManager::Secret');
    expect(secret.Properties.GenerateSecretString).toEqual({ PasswordLength: 64, ExcludePunctuation: true });
    expect(secret.Properties.SecretString).toBeUndefined();
    // Encrypted as the stack's other secrets (Secrets Manager's key for the account).
    expect(secret.Properties.KmsKeyId).toBeUndefined();
    expect(secret.DeletionPolicy).toBe(stage === 'prod' ? 'Retain' : 'Delete');
  });

  test('only the cursor functions are given its ARN and may read it; nothing may change it', () => {
    const { stack, template } = synthesize(stage);
    const secretRef = `\${${logicalId(stack.cursorSecret)}}`;
    const withArn = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function'))
      .filter(([, fn]) => fn.Properties.Environment?.Variables?.CURSOR_SECRET_ID !== undefined)
      .map(([id]) => id)
      .sort();
    expect(withArn).toEqual(CURSOR_FUNCTIONS.map((id) => logicalId(stack.functions.get(id)!.function)).sort());
    const readers = Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
      .filter((p) => (p.Properties.PolicyDocument.Statement as { Resource: unknown }[]).some((st) => [st.Resource].flat().some((r) => flatten(r) === secretRef)))
      .flatMap((p) => (p.Properties.Roles as unknown[]).map(flatten))
      .sort();
    expect(readers).toEqual(CURSOR_FUNCTIONS.map((id) => `\${${logicalId(stack.functions.get(id)!.role)}}`).sort());
    const actions = Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
      .flatMap((p) => p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
      .filter((st) => [st.Resource].flat().some((r) => flatten(r) === secretRef))
      .flatMap((st) => [st.Action].flat());
    expect([...new Set(actions)].sort()).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
  });
});
