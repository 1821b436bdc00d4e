import { Template } from 'aws-cdk-lib/assertions';
import { CheckoutStack } from '../../lib/checkout-stack';
import { stackName } from '../../lib/naming';
import { ROUTES } from '../../lib/routes';
import type { StageFile } from '../../lib/stage-settings';
import { STAGE_FILES } from '../../lib/stages';
import { logicalId, testApp } from './synth';

/**
 * The checkout page's footer names the stage's provider (lib/stages/<stage>.ts `provider`): its
 * name and https links reach the checkout page functions as PROVIDER_*, no other function; a
 * stage without one gives none (the footer then names no one); a malformed one stops the synth.
 */
const PROVIDER = { name: 'Example Payments', termsUrl: 'https://payments.example/terms', privacyUrl: 'https://payments.example/privacy' };
// The checkout page's routes and one merchant route are enough to see who is told.
const routes = ROUTES.filter((r) => ['CheckoutPage', 'CheckoutPay', 'CheckoutComplete', 'CreateSession'].includes(r.id));

const stackWith = (provider?: StageFile['provider']) => {
  const stageFile: StageFile = { ...STAGE_FILES.dev, ...(provider ? { provider } : {}) };
  return new CheckoutStack(testApp({ context: { stage: 'dev', 'aws:cdk:bundling-stacks': [] } }), stackName('dev'), { stage: 'dev', stageFile, routes, jobs: [] });
};

const environmentOf = (stack: CheckoutStack) => {
  const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Properties: { Environment?: { Variables?: Record<string, unknown> } } }>;
  return (id: string) => resources[logicalId(stack.functions.get(id)!.function)]!.Properties.Environment?.Variables ?? {};
};

test("the checkout page's functions, and only they, are told the stage's provider", () => {
  const env = environmentOf(stackWith(PROVIDER));
  for (const id of ['CheckoutPage', 'CheckoutPay', 'CheckoutComplete']) {
    expect(env(id)).toMatchObject({ PROVIDER_NAME: PROVIDER.name, PROVIDER_TERMS_URL: PROVIDER.termsUrl, PROVIDER_PRIVACY_URL: PROVIDER.privacyUrl });
  }
  expect(Object.keys(env('CreateSession')).filter((k) => k.startsWith('PROVIDER_'))).toEqual([]);
});

test('a stage without a provider tells no function', () => {
  const env = environmentOf(stackWith());
  expect(Object.keys(env('CheckoutPage')).filter((k) => k.startsWith('PROVIDER_'))).toEqual([]);
});

test.each([
  [{ ...PROVIDER, termsUrl: 'http://payments.example/terms' }, 'lib/stages/dev.ts: provider.termsUrl must be an https URL, got "http://payments.example/terms"'],
  [{ ...PROVIDER, privacyUrl: 'privacy' }, 'lib/stages/dev.ts: provider.privacyUrl must be an https URL, got "privacy"'],
  [{ ...PROVIDER, name: ' ' }, 'lib/stages/dev.ts: provider.name must be 1 to 80 characters, got " "'],
])('refuses %j', (provider, message) => {
  expect(() => stackWith(provider)).toThrow(message);
});
