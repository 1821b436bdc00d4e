import * as xray from 'aws-cdk-lib/aws-xray';
import { Construct } from 'constructs';

export interface TracingProps {
  /** The stage's stack name (`Checkout-prod`): its functions' names begin with it. */
  readonly name: string;
  /** The share of requests traced beyond the reservoir (lib/stages/<stage>.ts traceFixedRate). */
  readonly fixedRate: number;
}

/**
 * Traces kept in proportion, not one per invocation. X-Ray charges per trace recorded ($5 a
 * million): at 100 checkouts a second (six invocations each) tracing every invocation would cost
 * about $7,800 a month; one trace a second of reservoir plus the stage's fixed rate bounds it
 * (prod 1 %: about 2 traces a second, $26 a month at that rate). The rule matches the stage's own
 * functions by name only; another stage or another service in the account keeps its own rules.
 * ADR 0027 says where X-Ray honours such rules and how to check on staging that it matched.
 */
export class Tracing extends Construct {
  /** One trace a second per rule is always recorded, so a quiet stage still shows its paths. */
  static readonly RESERVOIR_PER_SECOND = 1;
  readonly rule: xray.CfnSamplingRule;

  constructor(scope: Construct, id: string, props: TracingProps) {
    super(scope, id);
    this.rule = new xray.CfnSamplingRule(this, 'SamplingRule', {
      samplingRule: {
        // At most 32 characters: `Checkout-staging` fits.
        ruleName: props.name,
        // Ahead of the account's Default rule (10000), behind any narrower rule an operator adds.
        priority: 1000,
        reservoirSize: Tracing.RESERVOIR_PER_SECOND,
        fixedRate: props.fixedRate,
        serviceName: `${props.name}-*`,
        serviceType: '*',
        host: '*',
        httpMethod: '*',
        urlPath: '*',
        resourceArn: '*',
        version: 1,
      },
    });
  }
}
