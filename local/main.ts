import { resolve } from 'node:path';
import { bannerLines } from './banner';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { LocalOperatorAuthenticator } from '../lambdas/adapters/local/operator-auth';
import { join } from 'node:path';
import { signFields } from '../lambdas/domain/hash';
import { buildDeps, setDeps } from '../lambdas/container';
import { readConfig } from '../lambdas/config';
import { createMerchant, rotateWebhookSecret, showMerchant, webhookSecretOf, MerchantAdminError } from '../lambdas/use-cases/manage-merchants';
import { localRoutes } from '../lib/routes';
import { backendEnvironment, localDeps, startLocalBackend } from './backend';
import { createApp } from './http-server';
import { announceBackend, auditAnchorDirectory, dataDirectory } from './local-store';
import { startScheduler } from './scheduler';
import { withLocalStream } from './local-stream';
import { LOCAL_JOBS } from '../lib/jobs';
import { functionTimeoutScaleOf } from './lambda-context';
import { localClock } from './clock';
import { acquirerTimeoutEnvironment, acquirerTimeoutsOf } from '../lib/time-budget';
import { LOCAL_PAGE_PATHS, localPages } from './local-pages';
import { LOCAL_MAIL_PATH, mailDirectory, mailPages } from './mail-pages';
import { FileMailer } from '../lambdas/adapters/local/file-mailer';
import { announceRunner } from './runner-file';

/**
 * `npm start`: the whole service on one machine. The same handlers and route table as the cloud
 * stack, on dynalite (a DynamoDB-compatible engine) and a local Secrets Manager, persisted in DATA_DIR.
 */
// The runner supports Node.js 20.19+ (Lambda runs 24); the SDK's notice about its future minimum is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  // Loopback only unless HOST says otherwise (HOST=0.0.0.0 serves the network: set PUBLIC_BASE_URL then).
  const host = process.env.HOST ?? '127.0.0.1';
  const dataDir = dataDirectory();
  const backend = await startLocalBackend({ dataDir });
  // Links are built on configuration only, never on a request's Host header: here, the listening address.
  const publicBase = process.env.PUBLIC_BASE_URL ?? `http://${host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host}:${port}`;
  const acquirerTimeouts = acquirerTimeoutsOf(process.env);
  const timeoutScale = functionTimeoutScaleOf(process.env);
  // Callbacks to loopback are refused everywhere but here, where `npm run receiver` listens on localhost.
  Object.assign(
    process.env,
    backendEnvironment(backend, {
      PUBLIC_BASE_URL: publicBase,
      ALLOW_LOOPBACK_CALLBACKS: process.env.ALLOW_LOOPBACK_CALLBACKS ?? '1',
      AUDIT_ANCHOR_DIR: auditAnchorDirectory(dataDir),
      // Callbacks leave as in the cloud: the write leaves them to the stream, here its in-process stand-in (local/local-stream.ts).
      CALLBACK_STREAM: '1',
      // E-mail receipts go to files instead of SES (ADR 0037): DATA_DIR/mail, listed at /local/mail.
      RECEIPT_MAIL_DIR: mailDirectory(dataDir),
      // The operator's own acquirer timeouts if set, else the stack's: the routes' timeouts follow.
      ...acquirerTimeoutEnvironment(acquirerTimeouts),
      // The checkout page's footer: a stage names its provider (lib/stages/), the runner its own placeholder pages.
      PROVIDER_NAME: process.env.PROVIDER_NAME ?? 'Hosted Checkout (local runner)',
      PROVIDER_TERMS_URL: process.env.PROVIDER_TERMS_URL ?? `${publicBase}${LOCAL_PAGE_PATHS.terms}`,
      PROVIDER_PRIVACY_URL: process.env.PROVIDER_PRIVACY_URL ?? `${publicBase}${LOCAL_PAGE_PATHS.privacy}`,
    }),
  );
  const config = readConfig();
  // The receipt job's mailer prints a line for each receipt it writes.
  const deps = withLocalStream({ ...localDeps(backend, config, localClock()), mailer: new FileMailer(mailDirectory(dataDir), (line) => console.log(`${line} (${publicBase}${LOCAL_MAIL_PATH})`)) });
  setDeps(deps);
  // What a killed runner left to its stream and did not deliver, as a stream consumer resumes from its checkpoint.
  const resumed = await deps.localStream.resume(deps.db, backend.tableName);
  if (resumed) console.log(`callbacks: ${resumed} left undelivered by the last run handed to the local stream`);
  // ACQUIRER=s2s-card (with S2S_CARD_URL, S2S_CARD_CLIENT_KEY, S2S_CARD_PASSWORD) pays through the
  // gateway; the sandbox's pages are then not served, as on a deployed stage.
  const routes = localRoutes(config.ACQUIRER);
  const withdraw = announceBackend(dataDir, backend);

  const demo = await seedDemoMerchant(deps, dataDir);
  const operator = await seedOperator(deps.operators as LocalOperatorAuthenticator, dataDir);
  const customDataDir = resolve(process.env.DATA_DIR ?? '.data') !== resolve('.data');
  // Where the runner reaches itself (the result page asks the status route there), known once it listens.
  let selfUrl = '';
  const pages = localPages({
    get selfUrl() {
      return selfUrl;
    },
    demo,
    deps,
    helper: { prefix: customDataDir ? `DATA_DIR=${dataDir} ` : '', options: '' },
    dataDir,
  });
  const mail = mailPages(mailDirectory(dataDir));
  const app = createApp(routes, { operatorKey: backend.operatorKey, acquirerTimeouts, timeoutScale, localPages: async (method, url) => (await pages(method, url)) ?? mail(method, url) });
  await new Promise<void>((resolve, reject) => {
    app.once('error', reject);
    app.listen(port, host, resolve);
  });
  const listening = app.address();
  const selfHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  selfUrl = `http://${selfHost}:${typeof listening === 'object' && listening ? listening.port : port}`;
  const withdrawRunner = announceRunner(dataDir, selfUrl);

  const scheduler = startScheduler(LOCAL_JOBS, 1, timeoutScale);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping`);
    scheduler.stop();
    await deps.localStream.stop();
    app.closeAllConnections();
    await new Promise<void>((resolve) => app.close(() => resolve()));
    deps.db.destroy();
    deps.secretsClient.destroy();
    withdraw();
    withdrawRunner();
    await backend.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const address = app.address();
  const base = port === 0 && typeof address === 'object' && address ? `http://${host}:${address.port}` : publicBase;
  const order = { number: 'demo-1', amount: '10.00', currency: 'USD', description: 'Demo order' };
  const hash = signFields([order.number, order.amount, order.currency, order.description], demo.password);
  const body = JSON.stringify({
    merchant_key: demo.merchant_key,
    operation: 'purchase',
    // The runner's own result page (local/local-pages.ts): the payment as the demo merchant sees it, and what to try next.
    success_url: `${base}${LOCAL_PAGE_PATHS.result}?order=${order.number}`,
    cancel_url: `${base}${LOCAL_PAGE_PATHS.result}?order=${order.number}&outcome=cancel`,
    hash,
    order,
    customer: { name: 'John Doe', email: 'john@example.com' },
    billing_address: { country: 'US' },
  });
  if (backend.indexLayout) console.log(backend.indexLayout);
  if (backend.indexRepair) console.log(`${backend.indexRepair} (the last run was cut off mid-write; the indexes now match the items)`);
  if (backend.indexMigration) console.log(backend.indexMigration);
  for (const line of bannerLines({
    base,
    dataDir,
    customDataDir,
    routes,
    acquirer:
      config.ACQUIRER === 's2s-card'
        ? `Acquirer: S2S CARD gateway at ${config.S2S_CARD_URL}; its Notification URL must be ${publicBase}/acquirer/s2s-card/notify`
        : 'Acquirer: the sandbox (test cards in docs/sandbox.md; no money moves)',
    demo,
    operator: { ...operator, role: (await (deps.operators as LocalOperatorAuthenticator).find(operator.username))?.role ?? 'none' },
    curl: `curl -s ${base}/api/v1/session -H 'content-type: application/json' -d '${body}'`,
    showRoutes: process.argv.includes('--routes'),
  })) console.log(line);
}

interface SeededOperator {
  username: string;
  password: string;
  generated: boolean;
}

/**
 * The local operator, an admin (every role: lib/operator-roles.ts): ADMIN_USER / ADMIN_PASSWORD,
 * else one generated on first start and kept. An operator kept from before roles existed becomes
 * admin; one whose role was changed since (`npm run operator -- set-role`) keeps it.
 */
async function seedOperator(operators: LocalOperatorAuthenticator, dataDir: string): Promise<SeededOperator> {
  const wantedUser = process.env.ADMIN_USER;
  const wantedPassword = process.env.ADMIN_PASSWORD;
  if (wantedUser && wantedPassword) {
    await operators.createOperator(wantedUser, wantedPassword, 'admin');
    return { username: wantedUser, password: wantedPassword, generated: false };
  }
  const file = join(dataDir, 'admin-operator.json');
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as SeededOperator;
    if (await operators.exists(saved.username)) {
      await operators.giveRoleIfNone(saved.username, 'admin');
      return saved;
    }
  }
  const seeded = { username: wantedUser ?? 'operator', password: randomBytes(12).toString('base64url'), generated: true };
  await operators.createOperator(seeded.username, seeded.password, 'admin');
  writeFileSync(file, JSON.stringify(seeded, null, 2), { mode: 0o600 });
  return seeded;
}

interface DemoMerchant {
  merchant_key: string;
  password: string;
  webhook_secret?: string;
  generated: boolean;
  notificationUrl?: string;
}

async function seedDemoMerchant(deps: ReturnType<typeof buildDeps>, dataDir: string): Promise<DemoMerchant & { webhookSecret: string }> {
  const { webhook_secret: _issued, ...demo } = await findOrCreateDemoMerchant(deps, dataDir);
  const notificationUrl = (await deps.merchants.find(demo.merchant_key))?.notificationUrl;
  // A demo merchant from before webhook secrets gets one now: callbacks are always signed.
  const webhookSecret = (await webhookSecretOf(deps, demo.merchant_key)) ?? (await rotateWebhookSecret(deps, demo.merchant_key)).webhook_secret;
  return { ...demo, webhookSecret, ...(notificationUrl ? { notificationUrl } : {}) };
}

async function findOrCreateDemoMerchant(deps: ReturnType<typeof buildDeps>, dataDir: string): Promise<DemoMerchant> {
  const file = join(dataDir, 'demo-merchant.json');
  const wantedKey = process.env.DEMO_MERCHANT_KEY;
  const wantedPassword = process.env.DEMO_MERCHANT_PASSWORD;
  if (wantedKey) {
    const existing = await deps.merchants.find(wantedKey);
    if (!existing) {
      const created = await createMerchant(deps, { name: 'Demo Shop', merchantKey: wantedKey, password: wantedPassword });
      return { ...created, generated: false };
    }
    if (wantedPassword) await deps.secrets.put(wantedKey, wantedPassword);
    const password = wantedPassword ?? (await deps.secrets.passwordOf(wantedKey));
    if (!password) throw new MerchantAdminError(`merchant ${wantedKey} has no password; set DEMO_MERCHANT_PASSWORD`);
    return { merchant_key: wantedKey, password, generated: false };
  }
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as DemoMerchant;
    await showMerchant(deps, saved.merchant_key);
    return { ...saved, generated: true };
  }
  // Receipts on, so a first payment shows one (npm start prints where; /local/mail lists them). Both
  // wallets on, so their buttons show where the browser has them (Google Pay's TEST environment and
  // its `example` gateway; docs/wallets.md, "Locally").
  const created = await createMerchant(deps, {
    name: 'Demo Shop',
    settings: { emailReceipts: true, wallets: ['applepay', 'googlepay'], googlePayGatewayMerchantId: 'exampleGatewayMerchantId' },
  });
  const demo = { ...created, generated: true };
  writeFileSync(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
  return demo;
}

main().catch((e: unknown) => {
  console.error(e instanceof MerchantAdminError || (e as Error).message?.startsWith('Invalid configuration') ? (e as Error).message : e);
  process.exit(1);
});
