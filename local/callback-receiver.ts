import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { verifyCallbackHash } from '../lambdas/domain/callback';
import { verifySignatureHeader } from '../lambdas/domain/webhook-signature';

/**
 * `npm run receiver`: a merchant's callback endpoint for trying callbacks on one machine. It prints
 * each callback it gets and whether its X-Checkout-Signature verifies with the merchant's webhook
 * secret — the check to fulfil orders on — and whether the legacy hash verifies with the password
 * (which only proves which order a message is about: the customer holds that hash too). It answers
 * 200 (or the status given with --status, to watch the retries).
 */
const USAGE = `Usage: npm run -s receiver -- [--port 4000] [--webhook-secret SECRET] [--password PASSWORD] [--status 200] [--json]

  --port N          Listen on http://localhost:N/callbacks (default 4000).
  --webhook-secret S
                    The merchant's webhook secret (npm run -s merchant -- show KEY): each callback's
                    X-Checkout-Signature is checked with it, and its age (at most 5 minutes).
                    Only a callback whose signature verifies proves its outcome.
  --password PW     The merchant's signing password: each callback's legacy hash is checked with
                    it. The hash proves which order a message is about, not its outcome.
  --status CODE     Answer every callback with this HTTP status (default 200); anything but 2xx
                    makes the service retry.
  --json            Print one JSON object per callback instead of a line of text.`;

function main(): void {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '4000' }, 'webhook-secret': { type: 'string' }, password: { type: 'string' }, status: { type: 'string', default: '200' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
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
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const fields = Object.fromEntries(new URLSearchParams(raw));
      const header = req.headers['x-checkout-signature'];
      const secret = values['webhook-secret'];
      const checked = secret === undefined ? undefined : verifySignatureHeader(Array.isArray(header) ? header[0] : header, raw, secret, new Date());
      const signature = checked === undefined ? 'unchecked' : checked.ok ? 'ok' : `INVALID (${checked.why})`;
      const hash = values.password === undefined ? 'unchecked' : verifyCallbackHash(fields, values.password) ? 'ok (order only)' : 'INVALID';
      if (values.json) console.log(JSON.stringify({ signature, hash, fields }));
      else console.log(`${new Date().toISOString()} ${fields.type}/${fields.status} payment ${fields.id} order ${fields.order_number} ${fields.order_amount} ${fields.order_currency} → ${fields.order_status}; signature ${signature}; hash ${hash}; answered ${status}`);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'OK' : 'Not now');
    });
  });
  server.once('error', (e: NodeJS.ErrnoException) => {
    console.error(e.code === 'EADDRINUSE' ? `Port ${port} is in use: pick another with --port.` : `Cannot listen on port ${port}: ${e.message}`);
    process.exit(1);
  });
  server.listen(port, () => console.log(`Receiving callbacks at http://localhost:${port}/callbacks`));
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main();
