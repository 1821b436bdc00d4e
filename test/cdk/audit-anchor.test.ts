import { DEFAULT_AUDIT_ANCHOR_RETENTION_DAYS } from '../../lib/constructs/audit-anchor';
import { AUDIT_ANCHOR_JOB_ID } from '../../lib/jobs';
import { STAGES } from '../../lib/naming';
import { logicalId, resource, synthesize } from './synth';

/**
 * The audit chain's anchors live outside the table, where no one can change them: a versioned S3
 * bucket with Object Lock in compliance mode (retention from context, per stage), TLS only, no public
 * access, deletes refused to everyone, puts that could replace an object refused, and only the export
 * job allowed to put, under the anchors' prefix, with the bucket in its environment. No AWS account
 * here: these assertions are the cloud's side; the export and verification run on the local store.
 */
const bucketsOf = (stage: (typeof STAGES)[number], context?: Record<string, unknown>) => {
  const s = synthesize(stage, context ? { context } : {});
  const id = logicalId(s.stack.auditAnchor!.bucket);
  return { s, id, bucket: resource(s.template, id) };
};

describe.each(STAGES)('the %s stage', (stage) => {
  it('keeps the anchors in a versioned Object Lock bucket in compliance mode, retained, expiring only after the retention', () => {
    const { bucket } = bucketsOf(stage);
    const days = DEFAULT_AUDIT_ANCHOR_RETENTION_DAYS[stage];
    expect(bucket.DeletionPolicy).toBe('Retain');
    expect(bucket.Properties).toMatchObject({
      VersioningConfiguration: { Status: 'Enabled' },
      ObjectLockEnabled: true,
      ObjectLockConfiguration: { ObjectLockEnabled: 'Enabled', Rule: { DefaultRetention: { Mode: 'COMPLIANCE', Days: days } } },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
    });
    const rules = bucket.Properties.LifecycleConfiguration.Rules as { ExpirationInDays: number; NoncurrentVersionExpiration: { NoncurrentDays: number } }[];
    for (const rule of rules) {
      expect(rule.ExpirationInDays).toBeGreaterThan(days);
      expect(rule.NoncurrentVersionExpiration.NoncurrentDays).toBeGreaterThan(days);
    }
  });

  it('refuses plain HTTP, every delete, and every put without If-None-Match, to everyone', () => {
    const { s, id } = bucketsOf(stage);
    const policies = Object.values(s.template.findResources('AWS::S3::BucketPolicy', { Properties: { Bucket: { Ref: id } } }));
    expect(policies).toHaveLength(1);
    const statements = policies[0]!.Properties.PolicyDocument.Statement as Record<string, unknown>[];
    const deny = (action: string) => statements.filter((st) => st.Effect === 'Deny' && st.Principal && [st.Action].flat().includes(action));
    expect(deny('s3:*')).toEqual([expect.objectContaining({ Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]);
    for (const action of ['s3:DeleteObject', 's3:DeleteObjectVersion']) expect(deny(action)).toEqual([expect.not.objectContaining({ Condition: expect.anything() })]);
    expect(deny('s3:PutObject')).toEqual([expect.objectContaining({ Principal: { AWS: '*' }, Condition: { Null: { 's3:if-none-match': 'true' } } })]);
    expect(statements.filter((st) => st.Effect === 'Allow')).toEqual([]);
  });

  it('lets only the export job put, and only under the anchors\' prefix; it alone knows the bucket', () => {
    const { s, id } = bucketsOf(stage);
    const exporter = s.stack.jobFunctions.get(AUDIT_ANCHOR_JOB_ID)!;
    const fn = resource(s.template, logicalId(exporter.function));
    expect(fn.Properties.Environment.Variables.AUDIT_ANCHOR_BUCKET).toEqual({ Ref: id });
    const grants = Object.entries(s.template.findResources('AWS::IAM::Policy')).flatMap(([policyId, p]) =>
      (p.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
        .filter((st) => [st.Action].flat().some((a) => a.startsWith('s3:')) && JSON.stringify(st.Resource).includes(id))
        .map((st) => ({ policyId, roles: p.Properties.Roles, st })),
    );
    expect(grants).toHaveLength(1);
    expect(grants[0]!.roles).toEqual([{ Ref: logicalId(exporter.role) }]);
    expect(grants[0]!.st).toMatchObject({ Action: 's3:PutObject', Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [id, 'Arn'] }, '/audit-anchors/*']] } });
    const others = Object.values(s.template.findResources('AWS::Lambda::Function')).filter((f) => f !== fn && f.Properties?.Environment?.Variables?.AUDIT_ANCHOR_BUCKET);
    expect(others).toEqual([]);
    s.template.hasOutput('AuditAnchorBucket', { Value: { Ref: id } });
  });
});

it('takes the retention from context, per stage or for all, and refuses nonsense', () => {
  expect(bucketsOf('dev', { auditAnchorRetentionDays: { dev: 30 } }).bucket.Properties.ObjectLockConfiguration.Rule.DefaultRetention.Days).toBe(30);
  expect(bucketsOf('prod', { auditAnchorRetentionDays: '400' }).bucket.Properties.ObjectLockConfiguration.Rule.DefaultRetention.Days).toBe(400);
  expect(() => synthesize('dev', { context: { auditAnchorRetentionDays: 0 } })).toThrow(/auditAnchorRetentionDays for dev must be a whole number of days/);
  expect(() => synthesize('dev', { context: { auditAnchorRetentionDays: 'ten' } })).toThrow(/auditAnchorRetentionDays/);
});

it('the export job runs hourly', () => {
  const { s } = bucketsOf('dev');
  const rule = resource(s.template, logicalId(s.stack.jobs.rules.get(AUDIT_ANCHOR_JOB_ID)!));
  expect(rule.Properties.ScheduleExpression).toBe('rate(1 hour)');
});
