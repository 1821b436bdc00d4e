import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { localClock } from './clock';
import { checkCallback, RECEIVER_DEFAULT_HOST } from './receiver-check';

/**
 * `npm run receiver`: a merchant's callback endpoint for trying callbacks on one machine. It prints
 * each callback it gets and whether its X-Checkout-Signature verifies with the merchant's webhook
 * secret — the check to fulfil orders on — and whether the legacy hash verifies with the password
 * (which only proves which order a message is about: the customer holds that hash too). It answers
 * 200 (or the status given with --status, to watch the retries); a callback whose signature or hash
 * does not verify with what it was given is answered 401, saying which check failed (never any
 * character of the secret or password: whoever posts reads the answer). It listens on 127.0.0.1
 * unless --host names another address, as anyone who can reach it can post to it.
 */
const USAGE = `Usage: npm run -s receiver -- [--port 4000] [--host 127.0.0.1] [--webhook-secret SECRET] [--password PASSWORD] [--status 200] [--json]

  --port N          Listen on http://127.0.0.1:N/callbacks (default 4000).
  --host ADDRESS    The address to listen on (default 127.0.0.1, this machine only); e.g. 0.0.0.0
                    to take callbacks from a service on another machine or in a container.
  --webhook-secret S
                    The merchant's webhook secret (npm run -s merchant -- show KEY): each callback's
                    X-Checkout-Signature is checked with it, and its age (at most 5 minutes).
                    Only a callback whose signature verifies proves its outcome.
  --password PW     The merchant's signing password: each callback's legacy hash is checked with
                    it. The hash proves which order a message is about, not its outcome.
  --status CODE     Answer every callback that verifies with this HTTP status (default 200);
                    anything but 2xx makes the service retry. A callback whose signature or hash
                    does not verify is answered 401, with the check that failed.
  --json            Print one JSON object per callback instead of a line of text.

  CLOCK_START=<ISO time> in the environment: the same clock as a runner started with it.`;

function main(): void {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '4000' }, host: { type: 'string', default: RECEIVER_DEFAULT_HOST }, 'webhook-secret': { type: 'string' }, password: { type: 'string' }, status: { type: 'string', default: '200' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(values.port);
  const status = Number(values.status);
  if (!Number.isInteger(port) || port < 1 || port > 65535 || !Number.isInteger(status) || status < 200 || status > 599) {
    console.error(USAGE);
    process.exit(2);
  }
  // CLOCK_START as the runner's: a callback's signature is as old as the runner's clock says.
  const clock = localClock();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const fields = Object.fromEntries(new URLSearchParams(raw));
      const header = req.headers['x-checkout-signature'];
      const verdict = checkCallback(raw, Array.isArray(header) ? header[0] : header, { webhookSecret: values['webhook-secret'], password: values.password, status }, clock.now());
      const { signature, hash, answer, problems } = verdict;
      if (values.json) console.log(JSON.stringify({ signature, hash, answer, ...(problems.length ? { problems } : {}), fields }));
      else {
        console.log(`${new Date().toISOString()} ${fields.type}/${fields.status} payment ${fields.id} order ${fields.order_number} ${fields.order_amount} ${fields.order_currency} → ${fields.order_status}; signature ${signature}; hash ${hash}; answered ${answer}`);
        for (const p of problems) console.log(`  refused: ${p}`);
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(problems.length ? `Refused: ${problems.join('; ')}\n` : answer < 300 ? 'OK' : 'Not now');
    });
  });
  server.once('error', (e: NodeJS.ErrnoException) => {
    console.error(e.code === 'EADDRINUSE' ? `Port ${port} is in use: pick another with --port.` : `Cannot listen on ${values.host} port ${port}: ${e.message}`);
    process.exit(1);
  });
  const host = values.host;
  server.listen(port, host, () => console.log(`Receiving callbacks at http://${host.includes(':') ? `[${host}]` : host}:${port}/callbacks`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main();
