import { SecretValue, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { CfnOutput } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { stackName, type Stage } from './naming';
import type { DomainSettings } from './stage-settings';
import { ORIGIN_SECRET_HEADER } from '../lambdas/domain/origin-secret';

/** CloudFront's web ACLs and certificates live in us-east-1, whatever the service's region. */
export const EDGE_REGION = 'us-east-1';
export const edgeStackName = (stage: string) => `${stackName(stage)}-edge`;
/**
 * The secret CloudFront's origin header is read from: created by the API's stack (with a replica in
 * us-east-1), read here by name, since the two stacks hold no references to each other.
 */
export const originSecretName = (stage: string) => `${stackName(stage)}/origin-verify`;

/**
 * Requests per client IP in WAF's five-minute window. A customer's checkout takes a handful of
 * requests (page, pay, 3-D Secure return, status polls); 300 is one a second for five minutes,
 * beyond any shopper and far below what one address needs to hurt. A merchant's server sends its
 * API calls from few addresses at up to the route throttle (100 a second, lib/routes.ts), so the
 * merchant API has its own, higher limit; the gateway's callbacks (/acquirer/…/notify) count under
 * neither: a refused callback counts towards the gateway blocking our Notification URL.
 */
export const WAF_LIMITS = {
  shopperRequestsPerIp: 300,
  merchantApiRequestsPerIp: 30_000,
  windowSeconds: 300,
} as const;

/** AWS's managed rule groups in front of the API, in the order WAF evaluates them. */
export const MANAGED_RULE_GROUPS = ['AWSManagedRulesAmazonIpReputationList', 'AWSManagedRulesCommonRuleSet', 'AWSManagedRulesKnownBadInputsRuleSet'] as const;

export interface CheckoutEdgeStackProps extends StackProps {
  readonly stage: Stage;
  /** The stage's domain, with its `edge` settings (lib/stage-settings.ts). */
  readonly domain: DomainSettings & { readonly edge: NonNullable<DomainSettings['edge']> };
}

const startsWith = (path: string): wafv2.CfnWebACL.StatementProperty => ({
  byteMatchStatement: { fieldToMatch: { uriPath: {} }, positionalConstraint: 'STARTS_WITH', searchString: path, textTransformations: [{ priority: 0, type: 'NONE' }] },
});
const not = (statement: wafv2.CfnWebACL.StatementProperty): wafv2.CfnWebACL.StatementProperty => ({ notStatement: { statement } });
const visibility = (name: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({ cloudWatchMetricsEnabled: true, metricName: name, sampledRequestsEnabled: true });

/**
 * The stage's public front door when it has a custom domain with `edge` settings: a CloudFront
 * distribution serving the domain, with an AWS WAF web ACL (rate limits per client IP, AWS's
 * managed rule groups), forwarding every request uncached to the API's own custom domain
 * (`edge.originName`). HTTP APIs cannot carry a web ACL themselves, hence CloudFront. The client's
 * address reaches the functions as CloudFront-Viewer-Address (the managed origin request policy
 * forwards it; lambdas/middleware/client-address.ts reads it when CLIENT_ADDRESS_FROM=cloudfront).
 */
export class CheckoutEdgeStack extends Stack {
  readonly webAcl: wafv2.CfnWebACL;
  readonly distribution: cloudfront.Distribution;

  constructor(scope: Construct, id: string, { stage, domain, ...props }: CheckoutEdgeStackProps) {
    super(scope, id, { description: `Hosted checkout (${stage}): CloudFront and WAF for ${domain.name}`, ...props, env: { ...props.env, region: EDGE_REGION } });
    const name = edgeStackName(stage);
    const managed = (group: (typeof MANAGED_RULE_GROUPS)[number], priority: number, overrides: string[] = []): wafv2.CfnWebACL.RuleProperty => ({
      name: group,
      priority,
      overrideAction: { none: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name: group,
          ...(overrides.length ? { ruleActionOverrides: overrides.map((rule) => ({ name: rule, actionToUse: { count: {} } })) } : {}),
        },
      },
      visibilityConfig: visibility(`${name}-${group}`),
    });
    const rateRule = (ruleName: string, priority: number, limit: number, scopeDown: wafv2.CfnWebACL.StatementProperty): wafv2.CfnWebACL.RuleProperty => ({
      name: ruleName,
      priority,
      action: { block: { customResponse: { responseCode: 429 } } },
      statement: { rateBasedStatement: { aggregateKeyType: 'IP', limit, evaluationWindowSec: WAF_LIMITS.windowSeconds, scopeDownStatement: scopeDown } },
      visibilityConfig: visibility(`${name}-${ruleName}`),
    });
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name,
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(name),
      rules: [
        // Known bad addresses first: they cost no rate counting.
        managed('AWSManagedRulesAmazonIpReputationList', 0),
        rateRule('ShopperRequestsPerIp', 1, WAF_LIMITS.shopperRequestsPerIp, { andStatement: { statements: [not(startsWith('/api/')), not(startsWith('/acquirer/'))] } }),
        rateRule('MerchantApiRequestsPerIp', 2, WAF_LIMITS.merchantApiRequestsPerIp, startsWith('/api/')),
        // Merchants' servers and the gateway may send no User-Agent: counted, not blocked.
        managed('AWSManagedRulesCommonRuleSet', 3, ['NoUserAgent_HEADER']),
        managed('AWSManagedRulesKnownBadInputsRuleSet', 4),
      ],
    });

    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `${name}: ${domain.name} to ${domain.edge.originName}`,
      domainNames: [domain.name],
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', domain.edge.certificateArn),
      minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      webAclId: this.webAcl.attrArn,
      defaultBehavior: {
        origin: new origins.HttpOrigin(domain.edge.originName, {
          // The functions refuse a request without it (lambdas/middleware/origin-guard.ts): the origin
          // name cannot be called past the web ACL. A dynamic reference, resolved by CloudFormation at
          // deploy from the replica in this region: the value is in no template. The slot comes from
          // the stage file, so a rotation changes the template and the deploy sends the new value.
          customHeaders: {
            [ORIGIN_SECRET_HEADER]: SecretValue.secretsManager(originSecretName(stage), { jsonField: domain.edge.originSecretSlot ?? 'a' }).unsafeUnwrap(),
          },
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
          // API Gateway's own limit is 30 s; CloudFront's default read timeout is as long.
        }),
        // Pages and answers are per payment and signed: nothing is cached, everything forwarded.
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        // Every viewer header but Host (the origin is addressed by its own name), and CloudFront's
        // viewer headers, CloudFront-Viewer-Address among them: the client's IP for the functions.
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        // A redirect would turn a merchant's POST into a GET: plain HTTP is refused instead.
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        compress: true,
      },
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR1',
      reason: 'Merchants sell to customers in any country; restricting by geography is the merchant\'s and the gateway\'s decision (its risk checks), not the hosted page\'s.',
    });
    Validations.of(this.distribution).acknowledge({
      id: 'AwsSolutions-CFR3',
      reason:
        "Every request CloudFront forwards is in the API's access log (route, status, latency; lib/constructs/checkout-api.ts), and the web ACL keeps " +
        'metrics and sampled requests of what it blocks. A CloudFront log bucket would hold the same requests again, with link tokens in their paths.',
    });

    new CfnOutput(this, 'DistributionDomainName', {
      value: this.distribution.distributionDomainName,
      description: `Point ${domain.name} here (CNAME, or an alias A/AAAA record to CloudFront's hosted zone Z2FDTNDATAQYW2)`,
    });
    new CfnOutput(this, 'WebAclArn', { value: this.webAcl.attrArn });
  }
}
