import { Fn, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface StaticEgressProps {
  /** One NAT gateway (and Elastic IP) per Availability Zone used: 2 on prod for availability, 1 elsewhere. */
  readonly natGateways: number;
  readonly logRetention: logs.RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The fixed source addresses the S2S CARD gateway whitelists (it accepts requests only from the
 * merchant's registered IPs): a VPC whose private subnets leave through NAT gateways on Elastic IPs
 * this construct allocates, so the addresses are known before the first payment and survive NAT
 * replacement. Only the functions that call the gateway run in it (lib/constructs/checkout-function.ts);
 * DynamoDB is reached through a gateway endpoint (no NAT cost), Secrets Manager through an interface
 * endpoint, X-Ray through the NAT.
 * Created only when the acquirer is `s2s-card`.
 */
export class StaticEgress extends Construct {
  readonly vpc: ec2.Vpc;
  readonly securityGroup: ec2.SecurityGroup;
  readonly addresses: ec2.CfnEIP[];
  readonly subnets: ec2.SubnetSelection = { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS };
  /** Secrets Manager inside the VPC (private DNS): the functions' secret reads skip the NAT. */
  readonly secretsEndpoint: ec2.InterfaceVpcEndpoint;

  constructor(scope: Construct, id: string, props: StaticEgressProps) {
    super(scope, id);
    this.addresses = Array.from({ length: props.natGateways }, (_, i) => {
      const eip = new ec2.CfnEIP(this, `Address${i + 1}`, { domain: 'vpc' });
      // Registered with the gateway: losing one would stop payments until the gateway is told.
      eip.applyRemovalPolicy(props.removalPolicy);
      return eip;
    });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: props.natGateways,
      natGateways: props.natGateways,
      natGatewayProvider: ec2.NatProvider.gateway({ eipAllocationIds: this.addresses.map((a) => a.attrAllocationId) }),
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'functions', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 22 },
      ],
      gatewayEndpoints: { DynamoDB: { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB } },
      // Not X-Ray: its segments are a few kilobytes per sampled trace, cents a month through the
      // NAT against about $7.30 per zone a month for an endpoint (ADR 0027).
      flowLogs: {
        rejected: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(
            new logs.LogGroup(this, 'FlowLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy }),
          ),
          trafficType: ec2.FlowLogTrafficType.REJECT,
        },
      },
    });
    this.securityGroup = new ec2.SecurityGroup(this, 'Functions', {
      vpc: this.vpc,
      description: 'Functions that call the S2S CARD gateway: outbound only',
      allowAllOutbound: true,
    });
    // The gateway's credentials and the merchants' signing passwords never leave AWS's network, and
    // a NAT gateway's failure or saturation does not take secret reads (every merchant request) with it.
    this.secretsEndpoint = this.vpc.addInterfaceEndpoint('SecretsManager', {
      service: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
      subnets: this.subnets,
      privateDnsEnabled: true,
      // HTTPS from the functions only (not the whole VPC).
      open: false,
      securityGroups: [new ec2.SecurityGroup(this, 'SecretsManagerEndpoint', { vpc: this.vpc, description: 'Secrets Manager endpoint: HTTPS from the functions', allowAllOutbound: false })],
    });
    this.secretsEndpoint.connections.allowFrom(this.securityGroup, ec2.Port.tcp(443), 'The functions read secrets');
  }

  /** The addresses to register with the gateway, comma separated. */
  get publicIps(): string {
    return Fn.join(',', this.addresses.map((a) => a.attrPublicIp));
  }
}
