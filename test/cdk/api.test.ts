import { Template } from 'aws-cdk-lib/assertions';
import { CheckoutStack } from '../../lib/checkout-stack';
import { DEFAULT_ROUTE_THROTTLE } from '../../lib/constructs/checkout-api';
import { STAGES } from '../../lib/naming';
import { OPERATOR_ROLES } from '../../lib/operator-roles';
import { deployedRoutes, FALLBACK_ROUTE, FALLBACK_ROUTE_KEY, ROUTES as ALL_ROUTES, routeKey, type RouteDefinition } from '../../lib/routes';
import { ACCESS_MATRIX_JOBS, ACCESS_MATRIX_ROUTES, flatten, logicalId, resource, resourcesOfType, synthesize, testApp, type Resource, type Synthesized, stageRoutes } from './synth';

/** The routes the stack deploys: all but the local runner's sign-in. */
const ROUTES = deployedRoutes();

const onlyEntry = <T>(entries: [string, T][], what: string): [string, T] => {
  if (entries.length !== 1) throw new Error(`Expected exactly one ${what}, found ${entries.length}`);
  return entries[0]!;
};

const routeResource = ({ template }: Synthesized, route: RouteDefinition): [string, Resource] =>
  onlyEntry(
    Object.entries(resourcesOfType(template, 'AWS::ApiGatewayV2::Route')).filter(
      ([, r]) => r.Properties.RouteKey === routeKey(route),
    ),
    `route ${routeKey(route)}`,
  );

const fallbackRoute = ({ template }: Synthesized): [string, Resource] =>
  onlyEntry(
    Object.entries(resourcesOfType(template, 'AWS::ApiGatewayV2::Route')).filter(([, r]) => r.Properties.RouteKey === FALLBACK_ROUTE_KEY),
    'route $default',
  );

const theStage = ({ template }: Synthesized): [string, Resource] =>
  onlyEntry(Object.entries(resourcesOfType(template, 'AWS::ApiGatewayV2::Stage')), 'stage');

/** Operator routes carry the pool's JWT authorizer; every other route is open at the gateway. */
function expectAuthorization(synthesized: Synthesized, route: RouteDefinition): void {
  const { Properties } = routeResource(synthesized, route)[1];
  const authorizers = Object.keys(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Authorizer'));
  if (route.auth === 'operator') {
    expect(authorizers).toHaveLength(1);
    expect(Properties.AuthorizationType).toBe('JWT');
    expect(Properties.AuthorizerId).toEqual({ Ref: authorizers[0] });
    expect(Properties.AuthorizationScopes).toBeUndefined();
  } else {
    expect(Properties.AuthorizationType).toBe('NONE');
    expect(Properties.AuthorizerId).toBeUndefined();
  }
}

describe.each(STAGES)('the HTTP API (%s)', (stage) => {
  const ROUTES = stageRoutes(stage);
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synthesize(stage);
  });

  test('is one HTTP API', () => {
    synthesized.template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    synthesized.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
  });

  test('is served at the host root by an auto-deployed $default stage', () => {
    const [, stageResource] = theStage(synthesized);
    expect(stageResource.Properties.StageName).toBe('$default');
    expect(stageResource.Properties.AutoDeploy).toBe(true);
    synthesized.template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 0);
    synthesized.template.hasOutput('ApiUrl', { Value: { 'Fn::GetAtt': [logicalId(synthesized.stack.api.httpApi), 'ApiEndpoint'] } });
  });

  test('writes JSON access logs to a log group', () => {
    const { AccessLogSettings } = theStage(synthesized)[1].Properties;
    const destination = flatten(AccessLogSettings.DestinationArn);
    expect(destination).toBe(`\${${logicalId(synthesized.stack.api.accessLogGroup)}.Arn}`);
    const format = JSON.parse(AccessLogSettings.Format) as Record<string, string>;
    expect(format).toMatchObject({ requestId: '$context.requestId', routeKey: '$context.routeKey', status: '$context.status' });
    // Paths carry link tokens; the route key names the route without them.
    expect(Object.values(format)).not.toContain('$context.path');
  });

  test('has exactly one route per route table entry and the $default route, but none for the local runner\'s sign-in', () => {
    const keys = Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey);
    expect(keys.sort()).toEqual([...ROUTES.map(routeKey), FALLBACK_ROUTE_KEY].sort());
    expect(ALL_ROUTES.filter((r) => r.localOnly).map(routeKey)).toEqual(['POST /admin/api/session']);
    expect(keys).not.toContain('POST /admin/api/session');
  });

  test.each(ROUTES.map((r) => [routeKey(r), r] as const))('%s invokes its own function', (_key, route) => {
    const [, httpRoute] = routeResource(synthesized, route);
    const integrationId = flatten(httpRoute.Properties.Target).replace(/^integrations\/\$\{(.+)\}$/, '$1');
    const integration = resource(synthesized.template, integrationId).Properties;
    const functionId = logicalId(synthesized.stack.functions.get(route.id)!.function);
    expect(integration).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
    expect(integration.IntegrationUri).toEqual({ 'Fn::GetAtt': [functionId, 'Arn'] });
  });

  test('gives every route its own integration', () => {
    const targets = [...ROUTES.map((r) => flatten(routeResource(synthesized, r)[1].Properties.Target)), flatten(fallbackRoute(synthesized)[1].Properties.Target)];
    expect(new Set(targets).size).toBe(ROUTES.length + 1);
  });

  describe('the $default route (requests no route takes)', () => {
    test('invokes the fallback function, its own, with the 2.0 payload', () => {
      const [, httpRoute] = fallbackRoute(synthesized);
      const integrationId = flatten(httpRoute.Properties.Target).replace(/^integrations\/\$\{(.+)\}$/, '$1');
      const integration = resource(synthesized.template, integrationId).Properties;
      expect(integration).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      expect(integration.IntegrationUri).toEqual({ 'Fn::GetAtt': [logicalId(synthesized.stack.fallbackFunction.function), 'Arn'] });
      expect(resource(synthesized.template, logicalId(synthesized.stack.fallbackFunction.function)).Properties.Description).toBe(`$default: requests no route takes (${stage})`);
    });

    test('is open at the gateway: no authorizer, so an unknown path is 404 for anyone, under /admin too', () => {
      const { Properties } = fallbackRoute(synthesized)[1];
      expect(Properties.AuthorizationType).toBe('NONE');
      expect(Properties.AuthorizerId).toBeUndefined();
    });

    test('API Gateway may invoke its function from the $default route only', () => {
      const functionId = logicalId(synthesized.stack.fallbackFunction.function);
      const permissions = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Permission')).filter(
        (p) => flatten(p.Properties.FunctionName) === `\${${functionId}.Arn}`,
      );
      expect(permissions).toHaveLength(1);
      expect(permissions[0]!.Properties.Principal).toBe('apigateway.amazonaws.com');
      expect(flatten(permissions[0]!.Properties.SourceArn)).toBe(
        `arn:\${AWS::Partition}:execute-api:\${AWS::Region}:\${AWS::AccountId}:\${${logicalId(synthesized.stack.api.httpApi)}}/*/$default`,
      );
    });

    test('is throttled as FALLBACK_ROUTE says, and created before the stage that names it', () => {
      const [, stageResource] = theStage(synthesized);
      expect(stageResource.Properties.RouteSettings[FALLBACK_ROUTE_KEY]).toEqual({
        ThrottlingRateLimit: FALLBACK_ROUTE.throttle.rateLimit,
        ThrottlingBurstLimit: FALLBACK_ROUTE.throttle.burstLimit,
        DetailedMetricsEnabled: true,
      });
      expect(FALLBACK_ROUTE.throttle.rateLimit).toBeLessThanOrEqual(DEFAULT_ROUTE_THROTTLE.rateLimit);
      expect(stageResource.DependsOn).toContain(fallbackRoute(synthesized)[0]);
      expect(synthesized.stack.api.fallbackRoute).toBeDefined();
    });
  });

  test.each(ROUTES.map((r) => [routeKey(r), r] as const))('API Gateway may invoke the function of %s on that route only', (_key, route) => {
    const functionId = logicalId(synthesized.stack.functions.get(route.id)!.function);
    const permissions = Object.values(resourcesOfType(synthesized.template, 'AWS::Lambda::Permission')).filter(
      (p) => flatten(p.Properties.FunctionName) === `\${${functionId}.Arn}`,
    );
    expect(permissions).toHaveLength(1);
    const apiId = logicalId(synthesized.stack.api.httpApi);
    expect(permissions[0]!.Properties.Principal).toBe('apigateway.amazonaws.com');
    expect(flatten(permissions[0]!.Properties.SourceArn)).toBe(
      `arn:\${AWS::Partition}:execute-api:\${AWS::Region}:\${AWS::AccountId}:\${${apiId}}/*/*${route.path}`,
    );
  });

  test('throttles every route as the route table says, and anything else by the default; metrics per route (detailed)', () => {
    const { DefaultRouteSettings, RouteSettings } = theStage(synthesized)[1].Properties;
    expect(DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: DEFAULT_ROUTE_THROTTLE.rateLimit,
      ThrottlingBurstLimit: DEFAULT_ROUTE_THROTTLE.burstLimit,
      DetailedMetricsEnabled: true,
    });
    expect(RouteSettings).toEqual(
      Object.fromEntries(
        [...ROUTES.map((r) => [routeKey(r), r] as const), [FALLBACK_ROUTE_KEY, FALLBACK_ROUTE] as const].map(([key, r]) => [
          key,
          { ThrottlingRateLimit: r.throttle.rateLimit, ThrottlingBurstLimit: r.throttle.burstLimit, DetailedMetricsEnabled: true },
        ]),
      ),
    );
  });

  test('creates the stage after the routes its settings name', () => {
    const [, stageResource] = theStage(synthesized);
    for (const route of ROUTES) expect(stageResource.DependsOn).toContain(routeResource(synthesized, route)[0]);
  });

  test.each(ROUTES.map((r) => [routeKey(r), r] as const))('%s is behind the operator authorizer exactly when it declares auth: operator', (_key, route) => {
    expectAuthorization(synthesized, route);
  });

  test('the operator authorizer guards exactly the routes with auth: operator', () => {
    const guarded = Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route'))
      .filter((r) => r.Properties.AuthorizerId !== undefined)
      .map((r) => r.Properties.RouteKey as string);
    expect(guarded.sort()).toEqual(ROUTES.filter((r) => r.auth === 'operator').map(routeKey).sort());
  });

  test('catches the alias spelling of the recurring path with a parameter route to the recurring handler', () => {
    const alias = ROUTES.find((r) => routeKey(r) === 'POST /api/v1/payment/{alias}');
    expect(alias?.entry).toBe(ROUTES.find((r) => r.id === 'RecurringPayment')!.entry);
    routeResource(synthesized, alias!);
    // API Gateway prefers a literal segment over a parameter, so the explicit payment routes keep
    // their own functions (checked per route above).
  });

  test('every route key is plain ASCII API Gateway syntax (no percent-encoding), or $default', () => {
    for (const key of Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey)) {
      expect(key).toMatch(/^((GET|POST|PUT) (\/([A-Za-z0-9._-]+|\{[A-Za-z][A-Za-z0-9]*\}))+|\$default)$/);
    }
  });
});

describe('routes added to the table later', () => {
  test('each get a route, an integration to their own function, their own throttle and their declared auth', () => {
    const synthesized = synthesize('dev', { routes: ACCESS_MATRIX_ROUTES, jobs: ACCESS_MATRIX_JOBS });
    const [, stageResource] = theStage(synthesized);
    for (const route of ACCESS_MATRIX_ROUTES) {
      const [, httpRoute] = routeResource(synthesized, route);
      const integrationId = flatten(httpRoute.Properties.Target).replace(/^integrations\/\$\{(.+)\}$/, '$1');
      expect(resource(synthesized.template, integrationId).Properties.IntegrationUri).toEqual({
        'Fn::GetAtt': [logicalId(synthesized.stack.functions.get(route.id)!.function), 'Arn'],
      });
      expect(stageResource.Properties.RouteSettings[routeKey(route)]).toEqual({
        ThrottlingRateLimit: route.throttle.rateLimit,
        ThrottlingBurstLimit: route.throttle.burstLimit,
        DetailedMetricsEnabled: true,
      });
      expectAuthorization(synthesized, route);
    }
  });
});

describe.each(STAGES)('operators of the admin portal (%s)', (stage) => {
  const retained = stage === 'prod';
  let synthesized: Synthesized;
  beforeAll(() => {
    synthesized = synthesize(stage);
  });
  const pool = () => resource(synthesized.template, logicalId(synthesized.stack.operators.userPool));
  const client = () => resource(synthesized.template, logicalId(synthesized.stack.operators.client));
  const apiUrl = () => ({ 'Fn::GetAtt': [logicalId(synthesized.stack.api.httpApi), 'ApiEndpoint'] });

  test("are one user pool with one app client and Cognito's sign-in pages", () => {
    synthesized.template.resourceCountIs('AWS::Cognito::UserPool', 1);
    synthesized.template.resourceCountIs('AWS::Cognito::UserPoolClient', 1);
    synthesized.template.resourceCountIs('AWS::Cognito::UserPoolDomain', 1);
    synthesized.template.resourceCountIs('AWS::Cognito::IdentityPool', 0);
  });

  test('are added by an administrator only and sign in with a user name', () => {
    const props = pool().Properties;
    expect(props.AdminCreateUserConfig).toEqual({ AllowAdminCreateUserOnly: true });
    expect(props.UsernameAttributes).toBeUndefined();
    expect(props.AliasAttributes).toBeUndefined();
    expect(props.UsernameConfiguration).toEqual({ CaseSensitive: false });
  });

  test('need a password of at least 12 characters of every class', () => {
    expect(pool().Properties.Policies.PasswordPolicy).toMatchObject({
      MinimumLength: 12,
      RequireLowercase: true,
      RequireUppercase: true,
      RequireNumbers: true,
      RequireSymbols: true,
    });
  });

  test('must use TOTP as a second factor (PCI DSS 8.4.2), never SMS', () => {
    const props = pool().Properties;
    expect(props.MfaConfiguration).toBe('ON');
    expect(props.EnabledMfas).toEqual(['SOFTWARE_TOKEN_MFA']);
    expect(props.SmsConfiguration).toBeUndefined();
  });

  test('recover their account by email only', () => {
    const props = pool().Properties;
    expect(props.AccountRecoverySetting).toEqual({ RecoveryMechanisms: [{ Name: 'verified_email', Priority: 1 }] });
    expect(props.Schema).toContainEqual({ Name: 'email', Required: true, Mutable: true });
  });

  test('are on the Plus plan with threat protection enforced: compromised credentials and high-risk sign-ins are blocked', () => {
    const props = pool().Properties;
    expect(props.UserPoolTier).toBe('PLUS');
    expect(props.UserPoolAddOns).toEqual({ AdvancedSecurityMode: 'ENFORCED' });
    const attachments = Object.values(resourcesOfType(synthesized.template, 'AWS::Cognito::UserPoolRiskConfigurationAttachment'));
    expect(attachments.map((a) => a.Properties)).toEqual([
      {
        UserPoolId: { Ref: logicalId(synthesized.stack.operators.userPool) },
        ClientId: 'ALL',
        CompromisedCredentialsRiskConfiguration: { Actions: { EventAction: 'BLOCK' }, EventFilter: ['SIGN_IN', 'PASSWORD_CHANGE'] },
        AccountTakeoverRiskConfiguration: {
          Actions: {
            LowAction: { EventAction: 'MFA_REQUIRED', Notify: false },
            MediumAction: { EventAction: 'MFA_REQUIRED', Notify: false },
            HighAction: { EventAction: 'BLOCK', Notify: false },
          },
        },
      },
    ]);
  });

  test('have one group per role, the strongest taking precedence', () => {
    const groups = Object.values(resourcesOfType(synthesized.template, 'AWS::Cognito::UserPoolGroup')).map((g) => [g.Properties.GroupName, g.Properties.Precedence, g.Properties.UserPoolId]);
    const poolRef = { Ref: logicalId(synthesized.stack.operators.userPool) };
    expect(groups.sort()).toEqual([...OPERATOR_ROLES].sort().map((role) => [role, { admin: 0, operator: 1, viewer: 2 }[role], poolRef]));
  });

  test(retained ? 'are retained and protected from deletion' : 'are destroyed with the stack', () => {
    const p = pool();
    expect(p.DeletionPolicy).toBe(retained ? 'Retain' : 'Delete');
    expect(p.UpdateReplacePolicy).toBe(retained ? 'Retain' : 'Delete');
    expect(p.Properties.DeletionProtection).toBe(retained ? 'ACTIVE' : 'INACTIVE');
  });

  test("sign in on Cognito's pages at a domain of this account and stage", () => {
    const [domain] = Object.values(resourcesOfType(synthesized.template, 'AWS::Cognito::UserPoolDomain'));
    expect(domain!.Properties).toEqual({
      UserPoolId: { Ref: logicalId(synthesized.stack.operators.userPool) },
      Domain: { 'Fn::Join': ['', [`checkout-${stage}-`, { Ref: 'AWS::AccountId' }]] },
      ManagedLoginVersion: 1,
    });
    synthesized.template.hasOutput('OperatorSignInUrl', {
      Value: { 'Fn::Join': ['', ['https://', { Ref: logicalId(synthesized.stack.operators.domain) }, '.auth.', { Ref: 'AWS::Region' }, '.amazoncognito.com']] },
    });
  });

  test('through a public app client: authorization code (PKCE in the portal) back to the portal only, SRP, no password sent to Cognito, one-hour tokens', () => {
    const portal = { 'Fn::Join': ['', [apiUrl(), '/admin']] };
    expect(client().Properties).toEqual({
      UserPoolId: { Ref: logicalId(synthesized.stack.operators.userPool) },
      ClientName: 'admin-portal',
      ExplicitAuthFlows: ['ALLOW_USER_SRP_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      GenerateSecret: false,
      AllowedOAuthFlows: ['code'],
      AllowedOAuthFlowsUserPoolClient: true,
      AllowedOAuthScopes: ['openid'],
      CallbackURLs: [portal],
      LogoutURLs: [portal],
      SupportedIdentityProviders: ['COGNITO'],
      PreventUserExistenceErrors: 'ENABLED',
      EnableTokenRevocation: true,
      IdTokenValidity: 60,
      AccessTokenValidity: 60,
      RefreshTokenValidity: 60,
      TokenValidityUnits: { IdToken: 'minutes', AccessToken: 'minutes', RefreshToken: 'minutes' },
    });
  });

  test('have no sign-in route of ours: nothing to throttle for everyone at once, and Cognito locks per user', () => {
    const keys = Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey as string);
    expect(keys.filter((k) => k.startsWith('POST /admin/api/session'))).toEqual([]);
    const { RouteSettings } = theStage(synthesized)[1].Properties;
    expect(Object.values(RouteSettings as Record<string, { ThrottlingRateLimit: number }>).map((r) => r.ThrottlingRateLimit)).not.toContain(5);
    expect([...synthesized.stack.functions.keys()]).not.toContain('AdminSignIn');
  });

  test("have their ID token verified by one JWT authorizer: the pool's issuer, the client's audience", () => {
    const authorizers = Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Authorizer'));
    expect(authorizers).toHaveLength(1);
    expect(authorizers[0]!.Properties).toEqual({
      ApiId: { Ref: logicalId(synthesized.stack.api.httpApi) },
      Name: 'operators',
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: {
        Issuer: {
          'Fn::Join': ['', ['https://cognito-idp.', { Ref: 'AWS::Region' }, '.amazonaws.com/', { Ref: logicalId(synthesized.stack.operators.userPool) }]],
        },
        Audience: [{ Ref: logicalId(synthesized.stack.operators.client) }],
      },
    });
  });

  test('need no IAM role of their own (no SMS, no triggers)', () => {
    const roles = Object.keys(resourcesOfType(synthesized.template, 'AWS::IAM::Role'));
    expect(roles.filter((id) => id.startsWith('Operators'))).toEqual([]);
  });
});

describe('a custom domain (publicBaseUrl)', () => {
  test("is where Cognito sends operators back, and what the portal tells it, never the API's own address", () => {
    const app = testApp({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new CheckoutStack(app, 'CustomDomain', { stage: 'dev', publicBaseUrl: 'https://pay.example.com' });
    const template = Template.fromStack(stack);
    const client = resource(template, logicalId(stack.operators.client)).Properties;
    expect([client.CallbackURLs, client.LogoutURLs]).toEqual([['https://pay.example.com/admin'], ['https://pay.example.com/admin']]);
    template.hasOutput('AdminPortalUrl', { Value: 'https://pay.example.com/admin' });
  });
});
