import { LOCAL_JOBS } from '../lib/jobs';
import { routeKey, type RouteDefinition } from '../lib/routes';
import { LOCAL_PAGE_PATHS } from './local-pages';

/**
 * What `npm start` prints, in the order a newcomer needs it: where it listens, the demo merchant's
 * key and password, the portal's operator, a ready curl; then the receiver and CLI commands, with
 * DATA_DIR in front when the runner's is not the default (they would read another store without
 * it); last the next step (the README's), where the data lives and how to stop. The route list only
 * with --routes.
 */
export function bannerLines(b: {
  base: string;
  dataDir: string;
  customDataDir: boolean;
  /** The routes the runner serves (the configured acquirer's). */
  routes: readonly RouteDefinition[];
  /** Which acquirer the payments go to. */
  acquirer: string;
  demo: { merchant_key: string; password: string; webhookSecret?: string; notificationUrl?: string; generated?: boolean };
  operator: { username: string; password: string; role: string; generated?: boolean };
  curl: string;
  showRoutes: boolean;
}): string[] {
  const env = b.customDataDir ? `DATA_DIR=${b.dataDir} ` : '';
  // The receiver listens on 127.0.0.1 (not whatever `localhost` resolves to first, ::1 on some machines).
  const receiver = 'http://127.0.0.1:4000/callbacks';
  return [
    `Checkout is running at ${b.base} (data in ${b.dataDir})`,
    b.acquirer,
    `Scheduled jobs: ${LOCAL_JOBS.map((j) => `${j.id} every ${j.localEverySeconds !== undefined ? `${j.localEverySeconds} s` : `${j.everyMinutes} min`}`).join(', ')}`,
    ...(b.showRoutes ? [`Routes: ${b.routes.map(routeKey).join(', ')}`] : []),
    `Demo merchant: ${JSON.stringify({ merchant_key: b.demo.merchant_key, password: b.demo.password, webhook_secret: b.demo.webhookSecret, generated: b.demo.generated })}${b.demo.generated ? ' (generated; set DEMO_MERCHANT_KEY and DEMO_MERCHANT_PASSWORD to choose)' : ''}`,
    `Admin portal: ${b.base}/admin (operator ${JSON.stringify({ username: b.operator.username, password: b.operator.password, role: b.operator.role })}${b.operator.generated ? '; set ADMIN_USER and ADMIN_PASSWORD to choose' : ''})`,
    'Create a checkout session:',
    b.curl,
    `After paying (or closing) the checkout returns to ${b.base}${LOCAL_PAGE_PATHS.result}, the curl's success_url and cancel_url: the payment as the demo merchant's status request sees it, its callbacks, and what to try next (${env}npm run -s merchant -- status|refund|void PAYMENT_ID).`,
    `Changed the curl's order (number, amount, currency or description)? Its hash changes too, or the answer is "hash: Hash is not valid.": ${env}npm run -s merchant -- sign session NUMBER AMOUNT CURRENCY DESCRIPTION prints the new one (amounts carry their currency's decimals: 10.00 USD, 1500 JPY).`,
    b.demo.notificationUrl
      ? `Callbacks: the demo merchant's go to ${b.demo.notificationUrl}`
      : `Callbacks: to receive the demo merchant's here, run in another terminal ${env}npm run -s receiver -- --webhook-secret ${b.demo.webhookSecret} --password ${b.demo.password}, then ${env}npm run -s merchant -- set ${b.demo.merchant_key} --notification-url ${receiver}`,
    `Merchants: ${env}npm run -s merchant -- --help; operators: ${env}npm run -s operator -- create NAME --role viewer|operator|admin${b.showRoutes ? '' : '; the route list: npm start -- --routes'}`,
    'Next: open the redirect_url the curl answers and pay with 4111 1111 1111 1111, expiry 01/38, any 3-digit security code and a two-word name; docs/sandbox.md has every test card, the README goes on from there.',
    `Data: ${b.dataDir} (kept across restarts; ${b.customDataDir ? `other tools use it with DATA_DIR=${b.dataDir}; ` : ''}delete it to start afresh).`,
    'Stop: Ctrl-C (the data stays).',
  ];
}
