import { Lazy, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { FALLBACK_ROUTE_KEY, routeKey, type FallbackRouteDefinition, type RouteDefinition } from '../routes';

export interface CheckoutApiProps {
  readonly apiName: string;
  /**
   * A custom domain (`pay.example.com`) with its ACM certificate in the stack's region: served with
   * TLS 1.2 at least, and the execute-api endpoint is turned off, so links and merchants'
   * integrations only ever name the domain and survive replacing the API.
   */
  readonly domain?: { readonly name: string; readonly certificateArn: string };
  /**
   * The name clients use when it is not `domain.name`: CloudFront's (lib/edge-stack.ts), in front
   * of the API's own domain. Links are built on it.
   */
  readonly publicName?: string;
  readonly logRetention: logs.RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * Applies to any route without its own settings (none today: every route, `$default` included,
 * has its own): a ceiling well below the account limit so one noisy client cannot use it up.
 */
export const DEFAULT_ROUTE_THROTTLE = { rateLimit: 50, burstLimit: 100 } as const;

/**
 * One JSON line per request. The route key (`GET /auth/{token}`) is logged rather than the path so
 * link tokens in paths never reach the logs.
 */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    requestTime: '$context.requestTime',
    sourceIp: '$context.identity.sourceIp',
    userAgent: '$context.identity.userAgent',
    routeKey: '$context.routeKey',
    protocol: '$context.protocol',
    status: '$context.status',
    responseLength: '$context.responseLength',
    responseLatencyMs: '$context.responseLatency',
    integrationLatencyMs: '$context.integrationLatency',
    integrationStatus: '$context.integrationStatus',
    integrationError: '$context.integrationErrorMessage',
    error: '$context.error.message',
  }),
);

/**
 * HttpLambdaIntegration scopes API Gateway's permission to any stage and method of the route's
 * path; `$default` has no path, which would let every route of the API invoke the function. This
 * one lets the `$default` route alone invoke it (source ARN `<api id>/<any stage>/$default`).
 */
class DefaultRouteLambdaIntegration extends HttpLambdaIntegration {
  constructor(
    private readonly integrationId: string,
    private readonly fn: lambda.IFunction,
  ) {
    super(integrationId, fn);
  }

  protected override completeBind(options: apigw.HttpRouteIntegrationBindOptions): void {
    this.fn.addPermission(`${this.integrationId}-Permission`, {
      scope: options.scope,
      principal: new iam.ServicePrincipal('apigateway.amazonaws.com'),
      sourceArn: Stack.of(options.route).formatArn({ service: 'execute-api', resource: options.route.httpApi.apiId, resourceName: `*/${FALLBACK_ROUTE_KEY}` }),
    });
  }
}

/**
 * The HTTP API, served at the host root by the `$default` stage. Each route gets its own Lambda
 * integration and its own throttle.
 */
export class CheckoutApi extends Construct {
  readonly httpApi: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly accessLogGroup: logs.LogGroup;
  /** The custom domain, when one is configured. */
  readonly domainName?: apigw.DomainName;
  private readonly domainHost?: string;
  /** Routes by route id. */
  readonly routes = new Map<string, apigw.HttpRoute>();
  /** The `$default` route, once added (addFallbackRoute). */
  fallbackRoute?: apigw.HttpRoute;
  private readonly routeSettings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number; DetailedMetricsEnabled: boolean }> = {};

  constructor(scope: Construct, id: string, props: CheckoutApiProps) {
    super(scope, id);

    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });

    // The default stage is created here rather than by HttpApi, which cannot set access logging on it.
    this.httpApi = new apigw.HttpApi(this, 'HttpApi', { apiName: props.apiName, createDefaultStage: false, disableExecuteApiEndpoint: props.domain !== undefined });
    this.stage = this.httpApi.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: DEFAULT_ROUTE_THROTTLE,
      // Route-level metrics (5xx, latency per route), which the per-route alarms watch.
      detailedMetricsEnabled: true,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(this.accessLogGroup),
        format: ACCESS_LOG_FORMAT,
      },
    });
    if (props.domain) {
      this.domainHost = props.publicName ?? props.domain.name;
      this.domainName = new apigw.DomainName(this, 'Domain', {
        domainName: props.domain.name,
        certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
        securityPolicy: apigw.SecurityPolicy.TLS_1_2,
      });
      new apigw.ApiMapping(this, 'Mapping', { api: this.httpApi, domainName: this.domainName, stage: this.stage });
    }
    // Route-level throttling has no L2 property; routes added later still land here (Lazy).
    (this.stage.node.defaultChild as apigw.CfnStage).routeSettings = Lazy.any({
      produce: () => (Object.keys(this.routeSettings).length > 0 ? this.routeSettings : undefined),
    });
  }

  /** The API's base URL, without a trailing slash: clients append route paths as they are. The custom domain's when there is one. */
  get url(): string {
    // The configured name as written: links need no reference to the domain resource.
    return this.domainHost ? `https://${this.domainHost}` : this.httpApi.apiEndpoint;
  }

  /**
   * With an `authorizer` the gateway verifies the caller's token before the function runs; without
   * one the route is open at the gateway and the function authenticates.
   */
  addRoute(route: RouteDefinition, handler: lambda.IFunction, authorizer?: apigw.IHttpRouteAuthorizer): apigw.HttpRoute {
    const [httpRoute] = this.httpApi.addRoutes({
      path: route.path,
      methods: [apigw.HttpMethod[route.method]],
      integration: new HttpLambdaIntegration(`${route.id}Integration`, handler),
      authorizer,
    });
    if (!httpRoute) throw new Error(`No route was created for ${routeKey(route)}`);

    this.routeSettings[routeKey(route)] = {
      ThrottlingRateLimit: route.throttle.rateLimit,
      ThrottlingBurstLimit: route.throttle.burstLimit,
      // A route's settings replace the stage's defaults: its per-route metrics (alarms) are asked for again.
      DetailedMetricsEnabled: true,
    };
    // Stage route settings may only name routes that already exist.
    this.stage.node.addDependency(httpRoute);

    if (!authorizer) {
      Validations.of(httpRoute).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Authorization happens in the function: merchant API routes verify the request signature made with ' +
          "the merchant's signing password, and the pages a shopper's browser opens (hosted checkout, sandbox " +
          'challenge) are public by design, addressed by unguessable tokens in the path. The admin portal page ' +
          "is how an operator reaches Cognito's sign-in pages for a token, so it cannot require one; every admin " +
          'API route (auth: operator) has the JWT authorizer and names the role it needs.',
      });
    }
    this.routes.set(route.id, httpRoute);
    return httpRoute;
  }

  /**
   * The `$default` route: every request no other route takes goes to `handler` (the error envelope's
   * 404 or 405) instead of API Gateway's own `{"message":"Not Found"}`. Never behind an authorizer:
   * an unknown path is 404 for anyone, under /admin too.
   */
  addFallbackRoute(fallback: FallbackRouteDefinition, handler: lambda.IFunction): apigw.HttpRoute {
    if (this.fallbackRoute) throw new Error('The API has its $default route already');
    const httpRoute = new apigw.HttpRoute(this.httpApi, 'DefaultRoute', {
      httpApi: this.httpApi,
      routeKey: apigw.HttpRouteKey.DEFAULT,
      integration: new DefaultRouteLambdaIntegration(`${fallback.id}Integration`, handler),
    });
    this.routeSettings[FALLBACK_ROUTE_KEY] = {
      ThrottlingRateLimit: fallback.throttle.rateLimit,
      ThrottlingBurstLimit: fallback.throttle.burstLimit,
      DetailedMetricsEnabled: true,
    };
    this.stage.node.addDependency(httpRoute);
    Validations.of(httpRoute).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'The $default route answers requests no other route takes (an unknown path or method) with a 404 or 405 error envelope. ' +
        'Its function reads no table and no secret and says only what the route table says, so an unknown path answers the ' +
        'same for everyone; an authorizer would turn a mistyped admin path into a 401 instead.',
    });
    this.fallbackRoute = httpRoute;
    return httpRoute;
  }
}
