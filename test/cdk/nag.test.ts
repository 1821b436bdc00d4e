import { Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { STAGES } from '../../lib/naming';
import { ACCESS_MATRIX_JOBS, ACCESS_MATRIX_ROUTES, synthesize, type Synthesized } from './synth';

/**
 * The only rules the stack may acknowledge, and why (the reasons themselves live next to the
 * resources they concern; docs/adr/0001-cdk-nag-v3.md explains the mechanism):
 * - APIG4: merchant routes check a request signature in the function, shopper-facing pages are
 *   public by design, and the admin portal page is how an operator reaches the sign-in pages.
 * - IAM5: `*` for X-Ray and Lambda's network interfaces in the egress VPC (no resource-level
 *   permissions), the merchant secret name prefix and the audit anchors' object prefix.
 * - S1: the audit anchor bucket keeps no server access log (a log bucket would not be write-once;
 *   every anchor is, and verify-audit reads every version).
 * - SMG4: the S2S CARD gateway issues its credentials; Secrets Manager cannot rotate them.
 * - SQS3: the queue without a dead-letter queue is the jobs' dead-letter queue.
 * Node.js 24 is the newest Lambda runtime, so L1 no longer needs an acknowledgment.
 */
const ACKNOWLEDGEABLE_RULES = [
  'AwsSolutions-APIG4',
  'AwsSolutions-IAM5',
  'AwsSolutions-S1',
  'AwsSolutions-SMG4',
  'AwsSolutions-SQS3',
];

interface Acknowledgment {
  readonly constructPath: string;
  readonly id: string;
  readonly reason: string;
}

/**
 * The stack's own acknowledgments. aws-cdk-lib's VPC acknowledges two CloudFormation schema
 * warnings of its own (literal AZs, the flow log's option casing): those are CDK's, not ours.
 */
function acknowledgmentsIn(root: IConstruct): Acknowledgment[] {
  return ownAcknowledgments(root).filter((a) => !a.id.startsWith('CloudFormation-Validate::'));
}

function ownAcknowledgments(root: IConstruct): Acknowledgment[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          constructPath: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

/** What cdk-nag would report if nothing were acknowledged. */
function unacknowledgedFindings({ stack }: Synthesized) {
  const pack = new AwsSolutionsChecks();
  // cdk-nag has no public switch for this; its private check is replaced on this one instance.
  Object.assign(pack, { isAcknowledged: () => false });
  return pack.validateScope(stack).violations;
}

const cases: [string, () => Synthesized][] = [
  ...STAGES.map((stage): [string, () => Synthesized] => [stage, () => synthesize(stage)]),
  ['dev, every kind of access', () => synthesize('dev', { routes: ACCESS_MATRIX_ROUTES, jobs: ACCESS_MATRIX_JOBS })],
];

describe.each(cases)('AwsSolutions checks (%s)', (_name, synth) => {
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synth();
  });

  test('report no unacknowledged error or warning', () => {
    const { violations } = synthesized.nag.validateScope(synthesized.stack);
    const summary = violations.map((v) => `${v.severity} ${v.ruleName} at ${v.violatingResources.map((r) => r.constructPath).join(', ')}`);
    expect(summary).toEqual([]);
  });

  test('leave no error or warning annotation on the stack', () => {
    const annotations = Annotations.fromStack(synthesized.stack);
    expect(annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    expect(annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'))).toEqual([]);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
  });

  test('acknowledge only the documented rules, each with a specific reason', () => {
    const acknowledgments = acknowledgmentsIn(synthesized.stack);
    expect(acknowledgments.length).toBeGreaterThan(0);
    for (const { id, reason } of acknowledgments) {
      expect(ACKNOWLEDGEABLE_RULES).toContain(id.replace(/\[.*\]$/, ''));
      expect(reason.length).toBeGreaterThanOrEqual(60);
    }
  });

  test('acknowledge only findings that exist (no stale or too-broad acknowledgment)', () => {
    const findings = unacknowledgedFindings(synthesized);
    const stale = acknowledgmentsIn(synthesized.stack).filter(
      (ack) =>
        !findings.some(
          (finding) =>
            finding.ruleName === ack.id &&
            finding.violatingResources.some(
              (r) => r.constructPath === ack.constructPath || r.constructPath?.startsWith(`${ack.constructPath}/`),
            ),
        ),
    );
    expect(stale).toEqual([]);
  });
});
