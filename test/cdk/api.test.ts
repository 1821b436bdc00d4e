import { DEFAULT_ROUTE_THROTTLE } from '../../lib/constructs/checkout-api';
import { STAGES } from '../../lib/naming';
import { ROUTES, routeKey, type RouteDefinition } from '../../lib/routes';
import { ACCESS_MATRIX_ROUTES, flatten, logicalId, resource, resourcesOfType, synthesize, type Resource, type Synthesized } from './synth';

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

  test('leaves authentication to the functions (no gateway authorizer yet)', () => {
    for (const route of ROUTES) expect(routeResource(synthesized, route)[1].Properties.AuthorizationType).toBe('NONE');
    synthesized.template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
  });
});

describe('routes added to the table later', () => {
  test('each get a route, an integration to their own function and their own throttle', () => {
    const synthesized = synthesize('dev', { routes: ACCESS_MATRIX_ROUTES });
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
    }
  });
});
