import { DEFAULT_ROUTE_THROTTLE } from '../../lib/constructs/checkout-api';
import { STAGES } from '../../lib/naming';
import { ROUTES, routeKey, type RouteDefinition } from '../../lib/routes';
import { ACCESS_MATRIX_JOBS, ACCESS_MATRIX_ROUTES, flatten, logicalId, resource, resourcesOfType, synthesize, type Resource, type Synthesized } from './synth';

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

  test('has exactly one route per route table entry', () => {
    const keys = Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey);
    expect(keys.sort()).toEqual(ROUTES.map(routeKey).sort());
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
    const targets = ROUTES.map((r) => flatten(routeResource(synthesized, r)[1].Properties.Target));
    expect(new Set(targets).size).toBe(ROUTES.length);
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

  test('throttles every route as the route table says, and anything else by the default', () => {
    const { DefaultRouteSettings, RouteSettings } = theStage(synthesized)[1].Properties;
    expect(DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: DEFAULT_ROUTE_THROTTLE.rateLimit,
      ThrottlingBurstLimit: DEFAULT_ROUTE_THROTTLE.burstLimit,
    });
    expect(RouteSettings).toEqual(
      Object.fromEntries(
        ROUTES.map((r) => [routeKey(r), { ThrottlingRateLimit: r.throttle.rateLimit, ThrottlingBurstLimit: r.throttle.burstLimit }]),
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

  test('every route key is plain ASCII API Gateway syntax (no percent-encoding)', () => {
    for (const key of Object.values(resourcesOfType(synthesized.template, 'AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey)) {
      expect(key).toMatch(/^(GET|POST|PUT) (\/([A-Za-z0-9._-]+|\{[A-Za-z][A-Za-z0-9]*\}))+$/);
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

  test('are one user pool with one app client', () => {
    synthesized.template.resourceCountIs('AWS::Cognito::UserPool', 1);
    synthesized.template.resourceCountIs('AWS::Cognito::UserPoolClient', 1);
    synthesized.template.resourceCountIs('AWS::Cognito::UserPoolDomain', 0);
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

  test('may add TOTP as a second factor (never SMS)', () => {
    const props = pool().Properties;
    expect(props.MfaConfiguration).toBe('OPTIONAL');
    expect(props.EnabledMfas).toEqual(['SOFTWARE_TOKEN_MFA']);
    expect(props.SmsConfiguration).toBeUndefined();
  });

  test('recover their account by email only', () => {
    const props = pool().Properties;
    expect(props.AccountRecoverySetting).toEqual({ RecoveryMechanisms: [{ Name: 'verified_email', Priority: 1 }] });
    expect(props.Schema).toContainEqual({ Name: 'email', Required: true, Mutable: true });
  });

  test('are on the Essentials plan, without threat protection (see the COG8 acknowledgment)', () => {
    const props = pool().Properties;
    expect(props.UserPoolTier).toBe('ESSENTIALS');
    expect(props.UserPoolAddOns).toBeUndefined();
  });

  test(retained ? 'are retained and protected from deletion' : 'are destroyed with the stack', () => {
    const p = pool();
    expect(p.DeletionPolicy).toBe(retained ? 'Retain' : 'Delete');
    expect(p.UpdateReplacePolicy).toBe(retained ? 'Retain' : 'Delete');
    expect(p.Properties.DeletionProtection).toBe(retained ? 'ACTIVE' : 'INACTIVE');
  });

  test('sign in through an app client with USER_PASSWORD_AUTH, no secret, and one-hour tokens', () => {
    expect(client().Properties).toEqual({
      UserPoolId: { Ref: logicalId(synthesized.stack.operators.userPool) },
      ClientName: 'admin-portal',
      ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      GenerateSecret: false,
      AllowedOAuthFlowsUserPoolClient: false,
      SupportedIdentityProviders: ['COGNITO'],
      PreventUserExistenceErrors: 'ENABLED',
      EnableTokenRevocation: true,
      IdTokenValidity: 60,
      AccessTokenValidity: 60,
      RefreshTokenValidity: 60,
      TokenValidityUnits: { IdToken: 'minutes', AccessToken: 'minutes', RefreshToken: 'minutes' },
    });
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
