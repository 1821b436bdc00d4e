import { Template } from 'aws-cdk-lib/assertions';
import { assertLocalEsbuild } from '../../lib/bundling';
import { CheckoutStack } from '../../lib/checkout-stack';
import { stackName, type Stage } from '../../lib/naming';
import { routeKey } from '../../lib/routes';
import { logicalId, resourcesOfType, synthesize, testApp } from './synth';

/**
 * The shapes a stage can take: prod refuses to exist without a real acquirer, the S2S CARD connector
 * brings its routes, secret and fixed egress and drops the sandbox's pages, and a custom domain
 * replaces the execute-api endpoint. Stacks are built without bundling (test/cdk/synth.ts).
 */
const build = (stage: Stage, context: Record<string, unknown>) => () =>
  new CheckoutStack(testApp({ context: { stage, ...context, 'aws:cdk:bundling-stacks': [] } }), stackName(stage), { stage });

const routeKeys = (template: Template) => Object.values(resourcesOfType(template, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey as string);
const GATEWAY = { acquirer: 's2s-card', s2sCardUrl: 'https://gateway.example.com/post' };
const DOMAIN = { domainName: 'pay.example.com', certificateArn: 'arn:aws:acm:eu-central-1:123456789012:certificate/0a1b2c3d-1111-2222-3333-444455556666' };

describe('prod needs a real acquirer', () => {
  test('without the gateway URL (lib/stages/prod.ts leaves it to the command line) the synth stops with a message that says what to pass', () => {
    expect(build('prod', {})).toThrow(/Stage prod runs on the S2S CARD gateway and needs its URL: write acquirer.url in lib\/stages\/prod.ts or pass -c s2sCardUrl=https:\/\//);
  });

  test('the sandbox is refused on prod, and an unknown acquirer anywhere', () => {
    expect(build('prod', { acquirer: 'sandbox' })).toThrow(/prod never runs on the sandbox/);
    expect(build('dev', { acquirer: 'stripe' })).toThrow(/Unknown acquirer "stripe": pass -c acquirer=sandbox\|s2s-card/);
  });

  test("the S2S CARD connector needs the gateway's https URL", () => {
    expect(build('prod', { acquirer: 's2s-card' })).toThrow(/needs its URL: write acquirer.url in lib\/stages\/prod.ts or pass -c s2sCardUrl=https:\/\//);
    expect(build('prod', { acquirer: 's2s-card', s2sCardUrl: 'http://gateway.example.com/post' })).toThrow(/over https/);
    expect(build('prod', GATEWAY)).not.toThrow();
  });
});

describe('prod with the S2S CARD connector', () => {
  const synthesized = () => synthesize('prod', { context: GATEWAY });

  test('has no /sandbox route, and the connector\'s callback and redirect routes', () => {
    const keys = routeKeys(synthesized().template);
    expect(keys.filter((k) => k.includes('/sandbox'))).toEqual([]);
    expect(keys).toEqual(expect.arrayContaining(['POST /acquirer/s2s-card/notify', 'GET /acquirer/s2s-card/redirect']));
  });

  test('runs every function on nodejs24.x, without --enable-source-maps, configured for the gateway', () => {
    const functions = Object.values(resourcesOfType(synthesized().template, 'AWS::Lambda::Function'));
    expect(functions.length).toBeGreaterThan(30);
    for (const fn of functions) {
      expect(fn.Properties.Runtime).toBe('nodejs24.x');
      const env = fn.Properties.Environment.Variables as Record<string, unknown>;
      expect(env.NODE_OPTIONS).toBeUndefined();
      expect(env).toMatchObject({ ACQUIRER: 's2s-card', S2S_CARD_URL: 'https://gateway.example.com/post', STAGE: 'prod' });
    }
  });

  test('keeps the gateway credentials in one Secrets Manager secret, read only by the functions that talk to the gateway', () => {
    const { stack, template } = synthesized();
    // Besides the cursor key every stage has (test/cdk/cursor-secret.test.ts).
    template.resourceCountIs('AWS::SecretsManager::Secret', 2);
    const secretId = logicalId(stack.acquirerSecret!);
    const readers = [...stack.functions.entries(), ...stack.jobFunctions.entries()]
      .filter(([, fn]) =>
        Object.values(resourcesOfType(template, 'AWS::IAM::Policy'))
          .filter((p) => JSON.stringify(p.Properties.Roles).includes(logicalId(fn.role)))
          .some((p) => JSON.stringify(p.Properties.PolicyDocument).includes(secretId)),
      )
      .map(([id]) => id)
      .sort();
    expect(readers).toEqual(
      ['AdminCaptureBulk', 'AdminPaymentAction', 'CapturePayment', 'CheckoutComplete', 'CheckoutPay', 'RecurringPayment', 'RecurringPaymentCyrillic', 'RefundPayment', 'RetryPayment', 'S2SCardNotify', 'S2SCardRedirect', 'VoidPayment', 'CaptureAuthorizations', 'ReconcileAttempts']
        .filter((id) => stack.functions.has(id) || stack.jobFunctions.has(id))
        .sort(),
    );
    expect(readers).toContain('S2SCardNotify');
    expect(readers).not.toContain('CheckoutPage');
    expect(readers).not.toContain('CreateSession');
  });

  test('leaves through NAT gateways on two Elastic IPs it outputs, for the gateway to whitelist', () => {
    const { template } = synthesized();
    template.resourceCountIs('AWS::EC2::EIP', 2);
    template.resourceCountIs('AWS::EC2::NatGateway', 2);
    template.hasResourceProperties('AWS::EC2::VPCEndpoint', { VpcEndpointType: 'Gateway' });
    for (const eip of Object.values(resourcesOfType(template, 'AWS::EC2::EIP'))) expect(eip.DeletionPolicy).toBe('Retain');
    template.hasOutput('S2SCardEgressIps', {});
  });

  test('names neither the table nor the user pool: a failed first deploy never blocks the next', () => {
    const { template } = synthesized();
    for (const table of Object.values(resourcesOfType(template, 'AWS::DynamoDB::Table'))) expect(table.Properties.TableName).toBeUndefined();
    for (const pool of Object.values(resourcesOfType(template, 'AWS::Cognito::UserPool'))) expect(pool.Properties.UserPoolName).toBeUndefined();
    template.hasOutput('TableName', {});
    template.hasOutput('UserPoolId', {});
  });
});

describe('a stage deployed before names were generated', () => {
  test('keeps its table and user pool by naming them in context', () => {
    const template = Template.fromStack(build('prod', { ...GATEWAY, tableName: 'checkout-prod', userPoolName: 'Checkout-prod-operators' })());
    template.hasResourceProperties('AWS::DynamoDB::Table', { TableName: 'checkout-prod' });
    template.hasResourceProperties('AWS::Cognito::UserPool', { UserPoolName: 'Checkout-prod-operators' });
  });
});

describe('dev on the sandbox', () => {
  test('serves the sandbox pages, has no gateway secret and no VPC', () => {
    const { stack, template } = synthesize('dev');
    expect(routeKeys(template)).toEqual(expect.arrayContaining(['GET /sandbox/challenge/{key}', 'POST /sandbox/challenge/{key}']));
    expect(routeKeys(template).filter((k) => k.includes('/acquirer/'))).toEqual([]);
    template.resourceCountIs('AWS::EC2::VPC', 0);
    // Only the cursor key every stage has (test/cdk/cursor-secret.test.ts).
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    expect(stack.acquirerSecret).toBeUndefined();
  });
});

describe('a custom domain', () => {
  const synthesized = () => synthesize('prod', { context: { ...GATEWAY, ...DOMAIN } });

  test('serves the API on the domain with TLS 1.2 and turns the execute-api endpoint off', () => {
    const { stack, template } = synthesized();
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: 'pay.example.com',
      DomainNameConfigurations: [{ CertificateArn: DOMAIN.certificateArn, EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' }],
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', { ApiId: { Ref: logicalId(stack.api.httpApi) } });
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
  });

  test('every function builds its links on the domain, and the output names the DNS target', () => {
    const { stack, template } = synthesized();
    for (const fn of Object.values(resourcesOfType(template, 'AWS::Lambda::Function'))) {
      expect(fn.Properties.Environment.Variables.PUBLIC_BASE_URL).toBe('https://pay.example.com');
    }
    template.hasOutput('DomainTarget', { Value: { 'Fn::GetAtt': [logicalId(stack.api.domainName!), 'RegionalDomainName'] } });
    template.hasOutput('S2SCardNotificationUrl', { Value: 'https://pay.example.com/acquirer/s2s-card/notify' });
    template.hasOutput('ApiUrl', { Value: 'https://pay.example.com' });
  });

  test('needs both the name and the certificate, well formed', () => {
    expect(build('dev', { domainName: 'pay.example.com' })).toThrow(/certificateArn/);
    expect(build('dev', { certificateArn: DOMAIN.certificateArn })).toThrow(/domainName must be a host name/);
    expect(build('dev', { ...DOMAIN, domainName: 'https://pay.example.com' })).toThrow(/domainName must be a host name/);
  });

  test('without one the API keeps its execute-api endpoint', () => {
    synthesize('dev').template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: false });
    expect(routeKey({ method: 'GET', path: '/x' })).toBe('GET /x');
  });
});

describe('bundling', () => {
  test('the synth stops when the local esbuild is missing, instead of bundling in Docker', () => {
    expect(() =>
      assertLocalEsbuild(() => {
        throw Object.assign(new Error('Cannot find module'), { code: 'MODULE_NOT_FOUND' });
      }),
    ).toThrow(/esbuild is not installed in this project \(run `npm ci`\)/);
    expect(() => assertLocalEsbuild()).not.toThrow();
  });
});
