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
const stage = stageFromContext(app.node.tryGetContext('stage'));
new CheckoutStack(app, stackName(stage), { stage });

// cdk-nag 3 runs as a policy validation plugin: any unacknowledged finding fails the synth.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
