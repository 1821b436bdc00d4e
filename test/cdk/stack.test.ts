import { Template } from 'aws-cdk-lib/assertions';
import { PROJECT_ROOT } from '../../lib/bundling';
import type { CheckoutStack } from '../../lib/checkout-stack';
import { accountSecretPrefix, merchantSecretPrefix, stackName, STAGES } from '../../lib/naming';
import { JOBS } from '../../lib/jobs';
import { logicalId, stageRoutes, synthesize } from './synth';

/** Where operators open the admin portal (lib/routes.ts AdminPortal). */
const ADMIN_PORTAL_PATH = '/admin';

/**
 * The NAT addresses to register with the gateway, comma separated, one per NAT gateway of the stage:
 * CloudFormation's join of several, the address itself for one (CDK writes a join of one element as
 * that element), so the output reads the same way, `a` or `a,b`, whatever the count.
 */
function egressIpsValue(stack: CheckoutStack): unknown {
  const ips = stack.egress!.addresses.map((address) => ({ 'Fn::GetAtt': [logicalId(address), 'PublicIp'] }));
  expect(ips).toHaveLength(stack.settings.natGateways);
  return ips.length === 1 ? ips[0] : { 'Fn::Join': [',', ips] };
}

describe.each(STAGES)('the stack (%s)', (stage) => {
  test('is named by stage and tells deployers where things are', () => {
    const { stack, template } = synthesize(stage);
    expect(stack.stackName).toBe(stackName(stage));
    const apiUrl = { 'Fn::GetAtt': [logicalId(stack.api.httpApi), 'ApiEndpoint'] };
    expect(template.toJSON().Outputs).toEqual({
      ApiUrl: expect.objectContaining({ Value: apiUrl }),
      TableName: expect.objectContaining({ Value: { Ref: logicalId(stack.table.table) } }),
      MerchantSecretPrefix: expect.objectContaining({ Value: merchantSecretPrefix(stage) }),
      AccountSecretPrefix: expect.objectContaining({ Value: accountSecretPrefix(stage) }),
      Stage: expect.objectContaining({ Value: stage }),
      UserPoolId: expect.objectContaining({ Value: { Ref: logicalId(stack.operators.userPool) } }),
      UserPoolClientId: expect.objectContaining({ Value: { Ref: logicalId(stack.operators.client) } }),
      OperatorSignInUrl: expect.objectContaining({ Value: expect.objectContaining({ 'Fn::Join': expect.any(Array) }) }),
      AdminPortalUrl: expect.objectContaining({ Value: { 'Fn::Join': ['', [apiUrl, ADMIN_PORTAL_PATH]] } }),
      AlarmTopicArn: expect.objectContaining({ Value: { Ref: logicalId(stack.alarmTopic.topic) } }),
      DashboardName: expect.objectContaining({ Value: stackName(stage) }),
      Acquirer: expect.objectContaining({ Value: stage === 'dev' ? 'sandbox' : 's2s-card' }),
      PublicBaseUrl: expect.objectContaining({ Value: apiUrl }),
      AuditAnchorBucket: expect.objectContaining({ Value: { Ref: logicalId(stack.auditAnchor!.bucket) } }),
      // E-mail receipts' sender, configuration set and the DKIM records to publish (test/cdk/receipts.test.ts).
      ReceiptSender: expect.objectContaining({ Value: stack.settings.receipts!.sender }),
      ReceiptConfigurationSet: expect.objectContaining({ Value: { Ref: logicalId(stack.receiptMail!.configurationSet) } }),
      ReceiptDkimRecords: expect.objectContaining({ Value: expect.anything() }),
      ...(stage !== 'dev'
        ? {
            S2SCardUrl: expect.objectContaining({ Value: 'https://gateway.example.com/post' }),
            S2SCardSecretArn: expect.objectContaining({ Value: { Ref: logicalId(stack.acquirerSecret!) } }),
            S2SCardNotificationUrl: expect.objectContaining({ Value: { 'Fn::Join': ['', [apiUrl, '/acquirer/s2s-card/notify']] } }),
            S2SCardEgressIps: expect.objectContaining({ Value: egressIpsValue(stack) }),
          }
        : {}),
    });
  });

  test('exposes the table, the API, the operators, each route function by route id and each job function by job id', () => {
    const { stack } = synthesize(stage);
    expect(stack.table.table.tableName).toBeDefined();
    expect(stack.operators.userPool.userPoolId).toBeDefined();
    expect([...stack.api.routes.keys()].sort()).toEqual(stageRoutes(stage).map((r) => r.id).sort());
    for (const route of stageRoutes(stage)) expect(stack.functions.get(route.id)?.function.runtime.name).toBe('nodejs24.x');
    expect(stack.fallbackFunction.function.runtime.name).toBe('nodejs24.x');
    expect(stack.api.fallbackRoute).toBeDefined();
    for (const job of JOBS) expect(stack.jobFunctions.get(job.id)?.function.runtime.name).toBe('nodejs24.x');
  });

  test('creates no merchant secret (they belong to the merchant CLI), only the cursor key and the gateway credentials with the S2S CARD connector, and no key but the alarm topic\'s', () => {
    const { stack, template } = synthesize(stage);
    // The cursor key on every stage (test/cdk/cursor-secret.test.ts), the gateway's credentials with its connector.
    template.resourceCountIs('AWS::SecretsManager::Secret', stage === 'dev' ? 1 : 2);
    template.resourceCountIs('AWS::KMS::Key', 1);
    expect(stack.callbackDelivery?.alarmKey).toBeDefined();
  });
});

/** Asset hashes change with every code change; the template's shape is what the snapshot guards. */
const maskAssetHashes = (template: unknown): unknown =>
  JSON.parse(JSON.stringify(template).replace(/[a-f0-9]{64}(\.zip)?/g, (_m, zip: string | undefined) => `[asset hash]${zip ?? ''}`));

test('the dev template matches the snapshot', () => {
  const { template } = synthesize('dev');
  const json = template.toJSON();
  // Nothing may depend on where the project is checked out.
  expect(JSON.stringify(json)).not.toContain(PROJECT_ROOT);
  expect(maskAssetHashes(json)).toMatchSnapshot();
});

test('the dev monitoring template (the nested stack) matches the snapshot', () => {
  const { stack } = synthesize('dev');
  const json = Template.fromStack(stack.observability).toJSON();
  expect(JSON.stringify(json)).not.toContain(PROJECT_ROOT);
  expect(maskAssetHashes(json)).toMatchSnapshot();
});
