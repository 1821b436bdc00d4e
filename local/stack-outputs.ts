import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { stackName } from '../lib/naming';

/**
 * Where a deployed stage keeps its data, read from its stack's outputs: the table and the user pool
 * have generated names (a retained one of a failed first deploy never blocks the next deploy), so
 * the CLIs never guess them. `describe` is the one AWS call, injectable for the test.
 */
export type DescribeOutputs = (stackName: string) => Promise<Readonly<Record<string, string>> | undefined>;

export const describeOutputs: DescribeOutputs = async (name) => {
  const client = new CloudFormationClient({});
  try {
    const out = await client.send(new DescribeStacksCommand({ StackName: name }));
    const stack = out.Stacks?.[0];
    return stack ? Object.fromEntries((stack.Outputs ?? []).filter((o) => o.OutputKey && o.OutputValue).map((o) => [o.OutputKey!, o.OutputValue!])) : undefined;
  } catch (e) {
    if ((e as Error).name === 'ValidationError') return undefined;
    throw e;
  }
};

/** The configuration (lambdas/config.ts) a CLI needs to act on a stage's data, from its stack's outputs. */
export function environmentFromOutputs(stage: string, outputs: Readonly<Record<string, string>>): Record<string, string> {
  const missing = ['TableName', 'MerchantSecretPrefix'].filter((k) => !outputs[k]);
  if (missing.length) throw new Error(`Stack ${stackName(stage)} has no output ${missing.join(', ')}: deploy this version first`);
  return {
    TABLE_NAME: outputs.TableName!,
    MERCHANT_SECRET_PREFIX: outputs.MerchantSecretPrefix!,
    ...(outputs.AccountSecretPrefix ? { ACQUIRER_ACCOUNT_SECRET_PREFIX: outputs.AccountSecretPrefix } : {}),
    STAGE: stage,
    // The stage's acquirer as deployed (prod refuses the sandbox, so the CLI must not assume it).
    ACQUIRER: outputs.Acquirer ?? 'sandbox',
    ...(outputs.S2SCardUrl ? { S2S_CARD_URL: outputs.S2SCardUrl } : {}),
    ...(outputs.S2SCardSecretArn ? { S2S_CARD_SECRET_ID: outputs.S2SCardSecretArn } : {}),
    // verify-audit checks the chain against the anchors exported there.
    ...(outputs.AuditAnchorBucket ? { AUDIT_ANCHOR_BUCKET: outputs.AuditAnchorBucket } : {}),
  };
}

export async function stageEnvironment(stage: string, describe: DescribeOutputs = describeOutputs): Promise<Record<string, string>> {
  const outputs = await describe(stackName(stage));
  if (!outputs) throw new Error(`No stack ${stackName(stage)} in this account and region (AWS_REGION / AWS_PROFILE): deploy it first, or pick another --stage`);
  return environmentFromOutputs(stage, outputs);
}
