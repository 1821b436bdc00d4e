import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PROJECT_ROOT } from '../../lib/bundling';

/** Runs bin/checkout.ts the way the CDK CLI does (context and output directory in the environment). */
function runApp(context: Record<string, unknown>) {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'checkout-cdk-'));
  const result = spawnSync(path.join(PROJECT_ROOT, 'node_modules/.bin/tsx'), ['bin/checkout.ts'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      CDK_OUTDIR: outdir,
      // A test of the app's wiring: no bundling, and no CloudFormation schema validation (slow, and
      // `npm run synth` runs it on the real thing). cdk-nag still runs.
      CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [], ...context }),
      CDK_VALIDATION: 'false',
    },
  });
  const read = (file: string) => JSON.parse(fs.readFileSync(path.join(outdir, file), 'utf8'));
  return { ...result, read, cleanUp: () => fs.rmSync(outdir, { recursive: true, force: true }) };
}

describe('bin/checkout.ts', () => {
  test('builds the stack of the stage given in context, named by stage, with cdk-nag passing', () => {
    const run = runApp({ stage: 'staging', s2sCardUrl: 'https://sandbox.gateway.example.com/post', authorizationValidityDays: { staging: 3, prod: 9 } });
    try {
      if (run.status !== 0) throw new Error(`The app failed:\n${run.stderr}`);
      const stacks = Object.entries(run.read('manifest.json').artifacts as Record<string, { type: string }>)
        .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
        .map(([name]) => name);
      expect(stacks).toEqual(['Checkout-staging']);
      const template = run.read('Checkout-staging.template.json') as {
        Outputs: Record<string, { Value: unknown }>;
        Resources: Record<string, { Type: string; Properties: { Environment?: { Variables: Record<string, unknown> } } }>;
      };
      expect(template.Outputs.Stage!.Value).toBe('staging');
      // The CLI passes cdk.json context this way; the stage's own value reaches every function.
      const validity = Object.values(template.Resources)
        .filter((r) => r.Type === 'AWS::Lambda::Function')
        .map((r) => r.Properties.Environment?.Variables.AUTHORIZATION_VALIDITY_DAYS);
      expect(new Set(validity)).toEqual(new Set(['3']));
      const report = run.read('validation-report.json') as { pluginReports: { violations?: unknown[] }[] };
      expect(report.pluginReports.flatMap((r) => r.violations ?? [])).toEqual([]);
    } finally {
      run.cleanUp();
    }
  });

  test('refuses an unknown stage', () => {
    const run = runApp({ stage: 'qa' });
    try {
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('Unknown stage "qa"');
    } finally {
      run.cleanUp();
    }
  });
});
