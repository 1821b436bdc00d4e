#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { CheckoutStack } from '../lib/checkout-stack';
import { STAGES, stackName, type Stage } from '../lib/naming';

/**
 * `cdk synth -c stage=prod`; cdk.json sets dev as the default. The stack reads its other context
 * (`authorizationValidityDays`, per stage in cdk.json) itself, so tests that build it see the same.
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
  new CheckoutStack(app, stackName(stage), { stage });
} catch (e) {
  // A configuration mistake (no acquirer on prod, a bad domain…): its message, not a stack trace.
  console.error(`Cannot synthesize: ${(e as Error).message}`);
  process.exit(1);
}

// cdk-nag 3 runs as a policy validation plugin: any unacknowledged finding fails the synth.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
