#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CheckoutStack } from '../lib/checkout-stack';
import { CheckoutEdgeStack, edgeStackName } from '../lib/edge-stack';
import { STAGES, stackName, type Stage } from '../lib/naming';

/**
 * `cdk synth -c stage=prod`; cdk.json sets dev as the default. The stack reads its settings
 * (lib/stages/<stage>.ts) and its other context (`authorizationValidityDays`, per stage in
 * cdk.json) itself, so tests that build it see the same.
 */
function stageFromContext(value: unknown): Stage {
  const stage = value ?? 'dev';
  if (!STAGES.includes(stage as Stage)) {
    throw new Error(`Unknown stage ${JSON.stringify(stage)}: pass -c stage=${STAGES.join('|')}`);
  }
  return stage as Stage;
}

const app = new App();
try {
  const stage = stageFromContext(app.node.tryGetContext('stage'));
  const stack = new CheckoutStack(app, stackName(stage), { stage });
  // CloudFront and WAF for a domain with edge settings: a stack of their own in us-east-1 (lib/edge-stack.ts).
  const domain = stack.settings.domain;
  if (domain?.edge) {
    const edge = new CheckoutEdgeStack(app, edgeStackName(stage), { stage, domain: { ...domain, edge: domain.edge } });
    // Not a reference (the stacks are in two regions): an order, since the distribution's origin
    // header reads the secret the API's stack creates and replicates to us-east-1.
    edge.addDependency(stack, 'CloudFront reads the origin secret the API stack creates');
  }
} catch (e) {
  // A configuration mistake (no acquirer on prod, a bad domain…): its message, not a stack trace.
  console.error(`Cannot synthesize: ${(e as Error).message}`);
  process.exit(1);
}

// cdk-nag 3 runs as a policy validation plugin: any unacknowledged finding fails the synth.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
