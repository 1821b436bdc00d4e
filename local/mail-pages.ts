import { join } from 'node:path';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { localMailPart, localMails } from '../lambdas/adapters/local/file-mailer';
import { esc } from '../lambdas/checkout-page/html';
import { maskAddress } from '../lambdas/domain/receipt';

/** The runner's mail folder (SES's stand-in): receipts are written there (lambdas/adapters/local/file-mailer.ts). */
export const mailDirectory = (dataDir: string): string => join(dataDir, 'mail');

/** Where the runner lists the receipts it wrote; `?id=<payment id>` shows one (`&part=txt`: its text). */
export const LOCAL_MAIL_PATH = '/local/mail';

type Answer = APIGatewayProxyStructuredResultV2;

const HEADERS = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff' };

/**
 * GET /local/mail: the receipts the local runner "sent", newest first, each opening as the customer
 * would see it (its HTML part, or its text). A runner page like local/local-pages.ts's: no part of
 * the route table, never deployed. The list names each address masked; the message itself is the
 * customer's, as in a mailbox.
 */
export function mailPages(dir: string): (method: string, url: URL) => Promise<Answer | undefined> {
  return async (method, url): Promise<Answer | undefined> => {
    if (url.pathname !== LOCAL_MAIL_PATH) return undefined;
    if (method !== 'GET' && method !== 'HEAD') return { statusCode: 405, headers: { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' }, body: 'GET only\n' };
    const id = url.searchParams.get('id');
    if (id !== null) {
      const part = url.searchParams.get('part') === 'txt' ? 'txt' : 'html';
      const body = localMailPart(dir, id, part);
      if (body === undefined) return { statusCode: 404, headers: { ...HEADERS, 'content-type': 'text/plain; charset=utf-8' }, body: 'No such receipt.\n' };
      return part === 'txt'
        ? { statusCode: 200, headers: { ...HEADERS, 'content-type': 'text/plain; charset=utf-8' }, body }
        : // The message's own inline styles, nothing else: no script, no request anywhere.
          { statusCode: 200, headers: { ...HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'" }, body };
    }
    const mails = localMails(dir);
    const rows = mails
      .map((m) => `<tr><td>${esc(m.writtenAt)}</td><td>${esc(maskAddress(m.to))}</td><td>${esc(m.subject)}</td><td><a href="${LOCAL_MAIL_PATH}?id=${encodeURIComponent(m.name)}">HTML</a> · <a href="${LOCAL_MAIL_PATH}?id=${encodeURIComponent(m.name)}&amp;part=txt">text</a></td></tr>`)
      .join('\n');
    const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Receipts sent locally</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:1rem">
<h1>Receipts sent locally</h1>
<p>The e-mail receipts the local runner wrote instead of sending them (Amazon SES in a deployed stage), in <code>${esc(dir)}</code>. A merchant sends them with <code>npm run -s merchant -- set KEY --email-receipts on</code>; a paid checkout with the customer's e-mail gets one.</p>
${mails.length ? `<table style="border-collapse:collapse" id="mail"><thead><tr><th>Written</th><th>To</th><th>Subject</th><th></th></tr></thead><tbody>\n${rows}\n</tbody></table>` : '<p id="mail">None yet.</p>'}
</body></html>`;
    return { statusCode: 200, headers: { ...HEADERS, 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'" }, body };
  };
}
