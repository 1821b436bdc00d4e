import { Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CheckoutStack } from '../../lib/checkout-stack';
import { CheckoutEdgeStack, EDGE_REGION, MANAGED_RULE_GROUPS, WAF_LIMITS } from '../../lib/edge-stack';
import { JOBS } from '../../lib/jobs';
import { STAGES, stackName, type Stage } from '../../lib/naming';
import { routeKey, ROUTES } from '../../lib/routes';
import type { DomainSettings, StageFile } from '../../lib/stage-settings';
import { STAGE_FILES } from '../../lib/stages';
import { callsAcquirer } from '../../lib/table-access';
import { ACQUIRER_WORK, acquirerWorkMs, jobEndMarginMs, MAX_ROUTE_TIMEOUT_SECONDS, OWN_WORK_MS } from '../../lib/time-budget';
import { JOB_END_MARGIN_MS } from '../../lambdas/use-cases/work-queue';
import { logicalId, PROD_ACQUIRER_CONTEXT, resourcesOfType, stageRoutes, synthesize, testApp } from './synth';

/**
 * The production stack's shape: timeouts that outlive the acquirer's, alarms for exactly the
 * routes a stage deploys, stage settings that refuse to undo a deployed stage silently, a staging
 * twin of prod, capacity kept for the API, bounded tracing, and CloudFront with WAF in front of a
 * custom domain. Stacks are built without bundling (test/cdk/synth.ts).
 */
const build = (stage: Stage, stageFile: StageFile, context: Record<string, unknown> = {}) => () =>
  new CheckoutStack(testApp({ context: { stage, ...(stage === 'dev' ? {} : PROD_ACQUIRER_CONTEXT), ...context, 'aws:cdk:bundling-stacks': [] } }), stackName(stage), { stage, stageFile });

const CERT = 'arn:aws:acm:eu-central-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666';
const EDGE_CERT = 'arn:aws:acm:us-east-1:123456789012:certificate/9f8e7d6c-1111-2222-3333-444455556666';
const EDGE_DOMAIN: DomainSettings = { name: 'pay.example.com', certificateArn: CERT, edge: { certificateArn: EDGE_CERT, originName: 'origin.pay.example.com' } };

describe('route and job timeouts derive from the acquirer timeouts', () => {
  describe.each(STAGES)('on %s', (stage) => {
    test('every route that waits on the acquirer outlives its acquirer work, and every route answers inside API Gateway\'s 30 s', () => {
      const { stack, template } = synthesize(stage);
      const timeouts = stack.acquirerTimeouts;
      const checked: string[] = [];
      for (const route of stageRoutes(stage)) {
        const fn = stack.functions.get(route.id)!;
        const timeout = template.toJSON().Resources[logicalId(fn.function)].Properties.Timeout as number;
        expect(timeout).toBeLessThanOrEqual(MAX_ROUTE_TIMEOUT_SECONDS);
        if (!route.acquirerWork) continue;
        expect(timeout * 1000).toBeGreaterThanOrEqual(acquirerWorkMs(ACQUIRER_WORK[route.acquirerWork], timeouts) + OWN_WORK_MS);
        checked.push(route.id);
      }
      expect(checked).toEqual(expect.arrayContaining(['VoidPayment', 'RefundPayment', 'CapturePayment', 'CheckoutPay', 'CheckoutComplete', 'RecurringPayment', 'RetryPayment', 'AdminPaymentAction']));
    });

    test('every function is configured with the timeouts the routes were derived from', () => {
      const { stack, template } = synthesize(stage);
      for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) {
        expect(fn.Properties.Environment.Variables).toMatchObject({
          S2S_CARD_TIMEOUT_MS: String(stack.acquirerTimeouts.S2S_CARD_TIMEOUT_MS),
          S2S_CARD_FOLLOW_UP_WAIT_MS: String(stack.acquirerTimeouts.S2S_CARD_FOLLOW_UP_WAIT_MS),
        });
      }
    });
  });

  test('VoidPayment waits two gateway requests and the follow-up wait, no longer a 10 s default', () => {
    const { stack, template } = synthesize('prod');
    const t = stack.acquirerTimeouts;
    const timeout = template.toJSON().Resources[logicalId(stack.functions.get('VoidPayment')!.function)].Properties.Timeout as number;
    expect(timeout * 1000).toBeGreaterThanOrEqual(2 * t.S2S_CARD_TIMEOUT_MS + t.S2S_CARD_FOLLOW_UP_WAIT_MS);
  });

  test('every route that calls the acquirer declares its work; those that only record or sign do not call the gateway', () => {
    // Callbacks recorded (notify), a redirect signed, the sandbox's own pages: no request to a gateway.
    const noGatewayRequest = ['S2SCardNotify', 'S2SCardRedirect', 'SandboxChallengePage', 'SandboxChallengeAnswer'];
    const undeclared = ROUTES.filter((r) => (callsAcquirer(r.access.table) || r.access.acquirerCredentials) && !r.acquirerWork).map((r) => r.id);
    expect(undeclared.sort()).toEqual(noGatewayRequest.sort());
    expect(ROUTES.filter((r) => r.acquirerWork && r.timeoutSeconds !== undefined)).toEqual([]);
  });

  test('timeouts under which a follow-up could not answer inside API Gateway\'s limit stop the synth, naming the route', () => {
    const slow: StageFile = { ...STAGE_FILES.prod, acquirerTimeouts: { S2S_CARD_TIMEOUT_MS: 15_000, S2S_CARD_FOLLOW_UP_WAIT_MS: 5_000 } };
    expect(build('prod', slow)).toThrow(/Route VoidPayment would need 38 s .*API Gateway answers 503 after 30 s/);
  });

  test('the jobs that call the acquirer stop taking payments early enough for one follow-up to finish', () => {
    const { stack, template } = synthesize('prod');
    const config = { ...stack.acquirerTimeouts, ACQUIRER: 's2s-card' as const };
    const margin = jobEndMarginMs(config, JOB_END_MARGIN_MS);
    expect(margin).toBeGreaterThanOrEqual(acquirerWorkMs(ACQUIRER_WORK.followUp, config) + OWN_WORK_MS);
    const acquirerJobs = JOBS.filter((j) => callsAcquirer(j.access.table));
    expect(acquirerJobs.map((j) => j.id).sort()).toEqual(['CaptureAuthorizations', 'ReconcileAttempts']);
    for (const job of acquirerJobs) {
      const timeout = template.toJSON().Resources[logicalId(stack.jobFunctions.get(job.id)!.function)].Properties.Timeout as number;
      // At least half of each run drains the queue.
      expect(timeout * 1000 - margin).toBeGreaterThanOrEqual((timeout * 1000) / 2);
    }
    // The sandbox's calls are table writes: its jobs keep the plain margin.
    expect(jobEndMarginMs({ ...config, ACQUIRER: 'sandbox' }, JOB_END_MARGIN_MS)).toBe(JOB_END_MARGIN_MS);
  });
});

describe('monitoring watches the routes the stage deploys', () => {
  test.each(STAGES)('on %s every API route has its 5xx and latency alarms, and no alarm names an absent route', (stage) => {
    const { stack, monitoring } = synthesize(stage);
    const deployed = [...stack.api.routes.keys()].sort();
    expect(deployed).toEqual(stageRoutes(stage).map((r) => r.id).sort());
    for (const kind of ['Api5xxRate', 'ApiLatencyP99'] as const) {
      expect(stack.monitoring.alarms.filter((a) => a.kind === kind).map((a) => a.target).sort()).toEqual(deployed);
    }
    // The alarms' metrics name only deployed route keys.
    const keys = new Set(stageRoutes(stage).map(routeKey));
    const dimensions = Object.values(resourcesOfType(monitoring, 'AWS::CloudWatch::Alarm'))
      .flatMap((a) => (a.Properties.Metrics ?? [{ MetricStat: { Metric: { Dimensions: a.Properties.Dimensions ?? [] } } }]) as { MetricStat?: { Metric: { Dimensions?: { Name: string; Value: unknown }[] } } }[])
      .map((m) => m.MetricStat?.Metric.Dimensions ?? [])
      .filter((d) => d.some((x) => x.Name === 'Resource'))
      .map((d) => `${d.find((x) => x.Name === 'Method')!.Value} ${d.find((x) => x.Name === 'Resource')!.Value}`);
    expect(dimensions.length).toBeGreaterThan(0);
    for (const key of dimensions) expect(keys).toContain(key);
  });

  test('prod has alarms for the gateway\'s routes and none for the sandbox\'s', () => {
    const targets = synthesize('prod').stack.monitoring.alarms.map((a) => a.target);
    expect(targets).toEqual(expect.arrayContaining(['S2SCardNotify', 'S2SCardRedirect']));
    expect(targets.filter((t) => t.startsWith('Sandbox'))).toEqual([]);
  });
});

describe('stage settings refuse to undo a deployed stage silently', () => {
  const deployedProd: StageFile = {
    ...STAGE_FILES.prod,
    acquirer: { name: 's2s-card', url: PROD_ACQUIRER_CONTEXT.s2sCardUrl },
    domain: { name: 'pay.example.com', certificateArn: CERT },
    deployed: { domainName: 'pay.example.com', acquirer: 's2s-card' },
  };

  test('the repository has one reviewed file per stage: dev on the sandbox, staging and prod on the gateway', () => {
    expect(Object.keys(STAGE_FILES).sort()).toEqual([...STAGES].sort());
    expect(STAGE_FILES.dev.acquirer.name).toBe('sandbox');
    expect(STAGE_FILES.staging.acquirer.name).toBe('s2s-card');
    expect(STAGE_FILES.prod.acquirer.name).toBe('s2s-card');
  });

  test('the file alone builds the stage: domain and gateway URL need no -c', () => {
    const stack = new CheckoutStack(testApp({ context: { stage: 'prod', 'aws:cdk:bundling-stacks': [] } }), stackName('prod'), { stage: 'prod', stageFile: deployedProd });
    expect(stack.publicBaseUrl).toBe('https://pay.example.com');
    expect(stack.acquirer).toEqual({ name: 's2s-card', url: PROD_ACQUIRER_CONTEXT.s2sCardUrl });
  });

  test('a file that drops the recorded domain refuses, and says what would change and how to allow it', () => {
    const { domain: _dropped, ...withoutDomain } = deployedProd;
    expect(build('prod', withoutDomain)).toThrow(
      /Stage prod is deployed as lib\/stages\/prod.ts records \("deployed"\); this synth would drop the custom domain pay.example.com: execute-api on again.*-c allowSettingsChange=domain/,
    );
    expect(build('prod', withoutDomain, { allowSettingsChange: 'domain' })).not.toThrow();
  });

  test('a command line that contradicts the recorded domain or acquirer refuses', () => {
    expect(build('prod', deployedProd, { domainName: 'checkout.example.com', certificateArn: CERT })).toThrow(/move the custom domain from pay.example.com to checkout.example.com/);
    const staging: StageFile = { ...STAGE_FILES.staging, deployed: { acquirer: 's2s-card' } };
    expect(build('staging', staging, { acquirer: 'sandbox' })).toThrow(/change the acquirer from s2s-card to sandbox.*-c allowSettingsChange=acquirer/);
    expect(build('staging', staging, { acquirer: 'sandbox', allowSettingsChange: 'acquirer' })).not.toThrow();
    expect(build('prod', deployedProd, { s2sCardUrl: 'https://other.example.com/post' })).toThrow(/contradicts lib\/stages\/prod.ts/);
  });

  test('a kept name the record holds cannot be dropped, and only known changes can be allowed', () => {
    const kept: StageFile = { ...deployedProd, keepNames: { tableName: 'checkout-prod' }, deployed: { ...deployedProd.deployed, tableName: 'checkout-prod' } };
    expect(build('prod', kept)).not.toThrow();
    expect(build('prod', { ...kept, keepNames: {} })).toThrow(/stop keeping the name checkout-prod \(tableName\).*allowSettingsChange=names/);
    expect(build('prod', deployedProd, { allowSettingsChange: 'domain,everything' })).toThrow(/allowSettingsChange takes domain, acquirer, names/);
  });
});

describe('staging has prod\'s shape', () => {
  /** What differs by size only: prod's second Availability Zone (its NAT, address, subnets, routes). */
  const PER_ZONE = ['AWS::EC2::EIP', 'AWS::EC2::NatGateway', 'AWS::EC2::Subnet', 'AWS::EC2::RouteTable', 'AWS::EC2::SubnetRouteTableAssociation', 'AWS::EC2::Route'];
  const byType = (t: Template) => {
    const counts: Record<string, number> = {};
    for (const r of Object.values(t.toJSON().Resources as Record<string, { Type: string }>)) counts[r.Type] = (counts[r.Type] ?? 0) + 1;
    return counts;
  };
  const without = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([type]) => !PER_ZONE.includes(type)));

  test('the same resources by type (apart from the per-zone network), the same routes, the same jobs', () => {
    const staging = synthesize('staging');
    const prod = synthesize('prod');
    expect(without(byType(staging.template))).toEqual(without(byType(prod.template)));
    expect(byType(staging.monitoring)).toEqual(byType(prod.monitoring));
    for (const type of PER_ZONE) expect(byType(staging.template)[type]).toBeGreaterThan(0);
    expect([...staging.stack.api.routes.keys()].sort()).toEqual([...prod.stack.api.routes.keys()].sort());
    expect([...staging.stack.jobFunctions.keys()].sort()).toEqual([...prod.stack.jobFunctions.keys()].sort());
  });

  test('runs the S2S CARD connector behind its fixed egress, with the gateway\'s routes', () => {
    const { stack, template } = synthesize('staging');
    expect(stack.acquirer.name).toBe('s2s-card');
    template.resourceCountIs('AWS::EC2::NatGateway', 1);
    // The gateway's credentials, and the cursor key every stage has (test/cdk/cursor-secret.test.ts).
    template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    expect(stack.api.routes.has('S2SCardNotify')).toBe(true);
  });
});

describe('capacity and cost at volume', () => {
  test.each(['staging', 'prod'] as const)('on %s the functions that call the gateway read secrets through a Secrets Manager endpoint in the VPC', (stage) => {
    const { stack, template } = synthesize(stage);
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', {
      VpcEndpointType: 'Interface',
      PrivateDnsEnabled: true,
      ServiceName: { 'Fn::Join': ['', ['com.amazonaws.', { Ref: 'AWS::Region' }, '.secretsmanager']] },
    });
    // HTTPS from the functions' security group only.
    template.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp',
      FromPort: 443,
      ToPort: 443,
      SourceSecurityGroupId: { 'Fn::GetAtt': [logicalId(stack.egress!.securityGroup), 'GroupId'] },
    });
    // No X-Ray endpoint (ADR 0027): one interface endpoint only.
    expect(Object.values(resourcesOfType(template, 'AWS::EC2::VPCEndpoint')).filter((e) => e.Properties.VpcEndpointType === 'Interface')).toHaveLength(1);
  });

  test.each(['staging', 'prod'] as const)('on %s each job reserves its workers\' concurrency, so a backlog cannot take the API\'s', (stage) => {
    const { stack, template } = synthesize(stage);
    let reserved = 0;
    for (const job of JOBS) {
      const fn = template.toJSON().Resources[logicalId(stack.jobFunctions.get(job.id)!.function)];
      // A single-flight job (never two runs at once) reserves one.
      expect(fn.Properties.ReservedConcurrentExecutions).toBe(job.singleFlight ? 1 : (job.workers ?? 1));
      reserved += fn.Properties.ReservedConcurrentExecutions as number;
    }
    // Lambda keeps 100 of an account's 1,000 unreserved: the jobs leave the API most of the rest.
    expect(reserved).toBeLessThanOrEqual(200);
    for (const fn of stack.functions.values()) expect(template.toJSON().Resources[logicalId(fn.function)].Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  test('dev reserves nothing (a new account\'s quota of 10 could not)', () => {
    const { template } = synthesize('dev');
    for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) expect(fn.Properties.ReservedConcurrentExecutions).toBeUndefined();
  });

  test.each(STAGES)('on %s one X-Ray sampling rule bounds the traces of the stage\'s functions', (stage) => {
    const { template } = synthesize(stage);
    template.resourceCountIs('AWS::XRay::SamplingRule', 1);
    template.hasResourceProperties('AWS::XRay::SamplingRule', {
      SamplingRule: { RuleName: stackName(stage), ServiceName: `${stackName(stage)}-*`, ReservoirSize: 1, FixedRate: STAGE_FILES[stage].traceFixedRate },
    });
    expect(STAGE_FILES[stage].traceFixedRate).toBeLessThanOrEqual(0.05);
  });
});

describe('CloudFront and WAF in front of a custom domain', () => {
  const file: StageFile = { ...STAGE_FILES.prod, domain: EDGE_DOMAIN };
  const main = () => synthesize('prod');
  let edgeTemplate: Template;
  let edge: CheckoutEdgeStack;
  let stack: CheckoutStack;
  beforeAll(() => {
    const app = testApp({ context: { stage: 'prod', ...PROD_ACQUIRER_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
    stack = new CheckoutStack(app, stackName('prod'), { stage: 'prod', stageFile: file });
    edge = new CheckoutEdgeStack(app, 'Checkout-prod-edge', { stage: 'prod', domain: { ...stack.settings.domain!, edge: stack.settings.domain!.edge! } });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    edgeTemplate = Template.fromStack(edge);
  });

  test('the web ACL (CloudFront scope, us-east-1) limits each client IP and runs AWS\'s managed rule groups', () => {
    expect(edge.region).toBe(EDGE_REGION);
    const acl = Object.values(resourcesOfType(edgeTemplate, 'AWS::WAFv2::WebACL'));
    expect(acl).toHaveLength(1);
    const props = acl[0]!.Properties;
    expect(props.Scope).toBe('CLOUDFRONT');
    expect(props.DefaultAction).toEqual({ Allow: {} });
    const rules = props.Rules as { Name: string; Statement: Record<string, any>; Action?: unknown }[];
    const rate = rules.filter((r) => r.Statement.RateBasedStatement).map((r) => [r.Statement.RateBasedStatement.AggregateKeyType, r.Statement.RateBasedStatement.Limit]);
    expect(rate).toEqual([
      ['IP', WAF_LIMITS.shopperRequestsPerIp],
      ['IP', WAF_LIMITS.merchantApiRequestsPerIp],
    ]);
    const groups = rules.filter((r) => r.Statement.ManagedRuleGroupStatement).map((r) => r.Statement.ManagedRuleGroupStatement.Name);
    expect(groups.sort()).toEqual([...MANAGED_RULE_GROUPS].sort());
    expect(groups).toEqual(expect.arrayContaining(['AWSManagedRulesCommonRuleSet', 'AWSManagedRulesKnownBadInputsRuleSet', 'AWSManagedRulesAmazonIpReputationList']));
    // The gateway's callbacks are never rate limited per IP (a refusal counts towards it blocking our URL).
    expect(JSON.stringify(rules.find((r) => r.Name === 'ShopperRequestsPerIp'))).toContain('/acquirer/');
  });

  test('the distribution serves the domain with its us-east-1 certificate, under the web ACL, uncached, to the API\'s origin name', () => {
    edgeTemplate.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: {
        Aliases: ['pay.example.com'],
        ViewerCertificate: { AcmCertificateArn: EDGE_CERT, MinimumProtocolVersion: 'TLSv1.2_2021', SslSupportMethod: 'sni-only' },
        WebACLId: { 'Fn::GetAtt': [logicalId(edge.webAcl), 'Arn'] },
        Origins: [{ DomainName: 'origin.pay.example.com', CustomOriginConfig: { OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] } }],
        DefaultCacheBehavior: {
          // Managed-CachingDisabled and Managed-AllViewerExceptHostHeader (which carries CloudFront-Viewer-Address).
          CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad',
          OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac',
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
          ViewerProtocolPolicy: 'https-only',
        },
      },
    });
  });

  test('the API answers only on its origin name (execute-api off); links, the sign-in return and the client address follow CloudFront', () => {
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainName: 'origin.pay.example.com' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
    for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) {
      expect(fn.Properties.Environment.Variables).toMatchObject({ PUBLIC_BASE_URL: 'https://pay.example.com', CLIENT_ADDRESS_FROM: 'cloudfront' });
    }
    template.hasOutput('S2SCardNotificationUrl', { Value: 'https://pay.example.com/acquirer/s2s-card/notify' });
    // Without edge settings the API reads its own source address.
    for (const fn of Object.values(resourcesOfType(main().template, 'AWS::Lambda::Function'))) expect(fn.Properties.Environment.Variables.CLIENT_ADDRESS_FROM).toBeUndefined();
  });

  test('cdk-nag passes on the edge stack with only its two justified acknowledgments', () => {
    const { violations } = new AwsSolutionsChecks().validateScope(edge);
    expect(violations.map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join(',')}`)).toEqual([]);
    const acknowledged = edge.node.findAll().flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY).flatMap((m) => Object.keys(m.data as object).map((k) => k.replace(/^annotation::/i, ''))));
    expect(acknowledged.sort()).toEqual(['AwsSolutions-CFR1', 'AwsSolutions-CFR3']);
  });

  test('settings refuse a CloudFront certificate outside us-east-1 and an origin name equal to the domain', () => {
    expect(build('prod', { ...file, domain: { ...EDGE_DOMAIN, edge: { certificateArn: CERT, originName: 'origin.pay.example.com' } } })).toThrow(/CloudFront takes its certificate from us-east-1 only/);
    expect(build('prod', { ...file, domain: { ...EDGE_DOMAIN, edge: { certificateArn: EDGE_CERT, originName: 'pay.example.com' } } })).toThrow(/edge.originName must be a host name other than pay.example.com/);
  });
});
