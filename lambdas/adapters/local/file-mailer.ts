import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { maskAddress } from '../../domain/receipt';
import type { Mailer, OutgoingMail } from '../../ports/receipts';

/** A payment id as a file name: the ids are UUIDs; anything else is refused rather than written outside the folder. */
const SAFE_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** One receipt written by the local mailer: its files' base name and the header lines. */
export interface LocalMail {
  readonly name: string;
  readonly to: string;
  readonly subject: string;
  readonly writtenAt: string;
}

/**
 * The local runner's mail (no SES): each message becomes `<payment id>.txt` (headers and the text
 * body) and `<payment id>.html` in the data directory's `mail/` folder, written whole (a temporary
 * file renamed) so a reader never sees half a message. The runner prints a line for each (`announce`)
 * and lists them at GET /local/mail.
 */
export class FileMailer implements Mailer {
  constructor(
    private readonly dir: string,
    private readonly announce?: (line: string) => void,
  ) {}

  async send(mail: OutgoingMail): Promise<{ messageId: string }> {
    if (!SAFE_NAME.test(mail.paymentId)) throw new Error('a receipt file is named by its payment id');
    mkdirSync(this.dir, { recursive: true });
    const header = `To: ${mail.to}\nSubject: ${mail.subject}\nDate: ${new Date().toUTCString()}\n\n`;
    const put = (file: string, body: string) => {
      const path = join(this.dir, file);
      writeFileSync(`${path}.tmp`, body, { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
    };
    put(`${mail.paymentId}.html`, mail.html);
    put(`${mail.paymentId}.txt`, header + mail.text);
    this.announce?.(`receipt for payment ${mail.paymentId} to ${maskAddress(mail.to)}: ${join(this.dir, `${mail.paymentId}.html`)}`);
    return { messageId: `local-${mail.paymentId}` };
  }
}

/** The receipts written to `dir`, newest first (at most `limit`). */
export function localMails(dir: string, limit = 200): LocalMail[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => f.endsWith('.txt')).map((f) => f.slice(0, -4)).filter((n) => SAFE_NAME.test(n));
  } catch {
    return [];
  }
  return names
    .map((name) => {
      const path = join(dir, `${name}.txt`);
      const head = readFileSync(path, 'utf8').split('\n\n', 1)[0] ?? '';
      const field = (key: string) => new RegExp(`^${key}: (.*)$`, 'm').exec(head)?.[1] ?? '';
      return { name, to: field('To'), subject: field('Subject'), writtenAt: statSync(path).mtime.toISOString() };
    })
    .sort((a, b) => b.writtenAt.localeCompare(a.writtenAt))
    .slice(0, limit);
}

/** One receipt's part (`html` or `txt`), or undefined when there is none of that name. */
export function localMailPart(dir: string, name: string, part: 'html' | 'txt'): string | undefined {
  if (!SAFE_NAME.test(name)) return undefined;
  try {
    return readFileSync(join(dir, `${name}.${part}`), 'utf8');
  } catch {
    return undefined;
  }
}
