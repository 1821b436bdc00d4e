import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CheckoutStack } from '../../lib/checkout-stack';
import { CheckoutEdgeStack, EDGE_REGION, originSecretName } from '../../lib/edge-stack';
import { STAGES, stackName } from '../../lib/naming';
import type { DomainSettings, StageFile } from '../../lib/stage-settings';
import { STAGE_FILES } from '../../lib/stages';
import { ORIGIN_SECRET_HEADER } from '../../lambdas/domain/origin-secret';
import { ORIGIN_SECRET_INJECT } from '../../lib/bundling';
import { logicalId, PROD_ACQUIRER_CONTEXT, resourcesOfType, synthesize, testApp } from './synth';

/**
 * The way around CloudFront and WAF closed (ADR 0027): the distribution adds a secret header read
 * from the API stack's secret (replicated to us-east-1), and every HTTP function, only those, is
 * given the secret and refuses requests without it. Stages without an edge carry none of it.
 */
const CERT = 'arn:aws:acm:eu-central-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';
const EDGE_CERT = 'arn:aws:acm:us-east-1:123456789012:certificate/9f8e7d6c-1111-2222-3333-444455556666';
const edgeDomain = (slot?: 'a' | 'b'): DomainSettings => ({
  name: 'pay.example.com',
  certificateArn: CERT,
  edge: { certificateArn: EDGE_CERT, originName: 'origin.pay.example.com', ...(slot ? { originSecretSlot: slot } : {}) },
});

function buildWithEdge(slot?: 'a' | 'b') {
  const app = testApp({ context: { stage: 'prod', ...PROD_ACQUIRER_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  const file: StageFile = { ...STAGE_FILES.prod, domain: edgeDomain(slot) };
  const stack = new CheckoutStack(app, stackName('prod'), { stage: 'prod', stageFile: file });
  const edge = new CheckoutEdgeStack(app, 'Checkout-prod-edge', { stage: 'prod', domain: { ...stack.settings.domain!, edge: stack.settings.domain!.edge! } });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { stack, edge, template: Template.fromStack(stack), edgeTemplate: Template.fromStack(edge) };
}

type Statement = { Action: string | string[]; Resource: unknown };
const statementsOf = (template: Template, roleLogicalId: string): Statement[] =>
  Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
    .filter((p) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleLogicalId }]))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
const readsSecret = (statements: Statement[], secretLogicalId: string) =>
  statements.some((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource) === JSON.stringify({ Ref: secretLogicalId }));

describe('a stage behind CloudFront', () => {
  let built: ReturnType<typeof buildWithEdge>;
  beforeAll(() => {
    built = buildWithEdge();
  });

  test('CloudFront adds x-origin-verify to every request it forwards, from slot a of the replicated secret (a dynamic reference: no value in the template)', () => {
    const origins = built.edgeTemplate.toJSON().Resources[logicalId(built.edge.distribution)].Properties.DistributionConfig.Origins as Record<string, any>[];
    expect(origins).toHaveLength(1);
    expect(origins[0]!.DomainName).toBe('origin.pay.example.com');
    expect(origins[0]!.OriginCustomHeaders).toEqual([{ HeaderName: ORIGIN_SECRET_HEADER, HeaderValue: `{{resolve:secretsmanager:${originSecretName('prod')}:SecretString:a::}}` }]);
  });

  test('switching the stage file\'s slot changes the template, so the edge stack\'s deploy sends the other value', () => {
    const origins = buildWithEdge('b').edgeTemplate.toJSON().Resources;
    const distribution = Object.values(origins).find((r: any) => r.Type === 'AWS::CloudFront::Distribution') as Record<string, any>;
    expect(distribution.Properties.DistributionConfig.Origins[0].OriginCustomHeaders[0].HeaderValue).toBe(`{{resolve:secretsmanager:${originSecretName('prod')}:SecretString:b::}}`);
  });

  test('the API stack creates the secret under the name the edge stack reads, generated into slot a, replicated to us-east-1 unless it is there already', () => {
    const secret = built.template.toJSON().Resources[logicalId(built.stack.originSecret!)] as Record<string, any>;
    expect(secret.Type).toBe('AWS::SecretsManager::Secret');
    expect(secret.Properties.Name).toBe(originSecretName('prod'));
    expect(secret.Properties.GenerateSecretString).toMatchObject({ SecretStringTemplate: JSON.stringify({ b: '' }), GenerateStringKey: 'a', PasswordLength: 64, ExcludePunctuation: true });
    const condition = secret.Properties.ReplicaRegions['Fn::If'];
    expect(condition[1]).toEqual([{ Region: EDGE_REGION }]);
    expect(condition[2]).toEqual({ Ref: 'AWS::NoValue' });
    expect(built.template.toJSON().Conditions[condition[0]]).toEqual({ 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'AWS::Region' }, EDGE_REGION] }] });
  });

  test('every HTTP function (each route and $default) is told the secret and may read it; no job or the stream dispatcher is', () => {
    const { stack, template } = built;
    const secretId = logicalId(stack.originSecret!);
    const resources = template.toJSON().Resources as Record<string, any>;
    const http = [...stack.functions.values(), stack.fallbackFunction];
    expect(http.length).toBeGreaterThan(30);
    for (const fn of http) {
      expect(resources[logicalId(fn.function)].Properties.Environment.Variables.ORIGIN_SECRET_ID).toEqual({ Ref: secretId });
      expect(readsSecret(statementsOf(template, logicalId(fn.role)), secretId)).toBe(true);
    }
    const others = [...stack.jobFunctions.values(), ...(stack.callbackDelivery ? [stack.callbackDelivery.dispatcher] : [])];
    expect(others.length).toBeGreaterThan(2);
    for (const fn of others) {
      expect(resources[logicalId(fn.function)].Properties.Environment.Variables.ORIGIN_SECRET_ID).toBeUndefined();
      expect(readsSecret(statementsOf(template, logicalId(fn.role)), secretId)).toBe(false);
    }
  });

  test('cdk-nag passes on the API stack (the secret\'s rotation acknowledged with its reason) and the edge stack keeps its two acknowledgments', () => {
    for (const scope of [built.stack, built.edge]) {
      const { violations } = new AwsSolutionsChecks().validateScope(scope);
      expect(violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(',')}`)).toEqual([]);
    }
    const onSecret = built.stack.originSecret!.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).flatMap((m) => Object.entries(m.data as Record<string, string>));
    expect(onSecret.map(([id]) => id.replace(/^annotation::/i, ''))).toEqual(['AwsSolutions-SMG4']);
    expect(onSecret[0]![1]).toMatch(/Rotating secrets/);
  });

  test('every route\'s function bundles the origin check\'s secret reader (esbuild inject); the $default function has it in its entry', () => {
    expect(built.stack.functions.size).toBeGreaterThan(30);
    for (const fn of built.stack.functions.values()) expect(fn.inject).toEqual([ORIGIN_SECRET_INJECT]);
    expect(built.stack.fallbackFunction.inject).toEqual([]);
  });

  test('the settings refuse a slot other than a or b', () => {
    const file: StageFile = { ...STAGE_FILES.prod, domain: { ...edgeDomain(), edge: { ...edgeDomain().edge!, originSecretSlot: 'c' as never } } };
    const app = testApp({ context: { stage: 'prod', ...PROD_ACQUIRER_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
    expect(() => new CheckoutStack(app, stackName('prod'), { stage: 'prod', stageFile: file })).toThrow(/edge.originSecretSlot must be a or b, got "c"/);
  });
});

describe.each(STAGES)('%s as its stage file has it (no edge)', (stage) => {
  test('has no origin secret and no function is told of one', () => {
    const { stack, template } = synthesize(stage);
    expect(STAGE_FILES[stage].domain?.edge).toBeUndefined();
    expect(stack.originSecret).toBeUndefined();
    expect(JSON.stringify(template.toJSON())).not.toContain('origin-verify');
    for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) expect(fn.Properties.Environment.Variables.ORIGIN_SECRET_ID).toBeUndefined();
    // Nor does any bundle carry the reader: a route that reads no secret of its own has no Secrets Manager client.
    for (const fn of stack.functions.values()) expect(fn.inject).toEqual([]);
  });
});
