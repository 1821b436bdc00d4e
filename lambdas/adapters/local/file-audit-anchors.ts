import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { AuditAnchor } from '../../domain/audit-chain';
import { anchorName, parseAnchor, type AuditAnchorStore } from '../../ports/audit-anchors';

/**
 * The local runner's anchor store: one file per anchor under the data directory, created exclusively
 * (`wx`, as S3's `If-None-Match: *`) and made read-only. It is no defence against the machine's own
 * user, which the local runner does not need; it exercises the same export and verification as S3.
 */
export class FileAuditAnchors implements AuditAnchorStore {
  constructor(private readonly dir: string) {}

  async write(anchor: AuditAnchor): Promise<'written' | 'exists'> {
    const file = join(this.dir, anchorName(anchor));
    await mkdir(dirname(file), { recursive: true });
    try {
      await writeFile(file, JSON.stringify(anchor), { flag: 'wx', mode: 0o444 });
      await chmod(file, 0o444);
      return 'written';
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return 'exists';
      throw e;
    }
  }

  async ofDay(day: string): Promise<AuditAnchor[]> {
    const folder = join(this.dir, day);
    const names = await readdir(folder).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? [] : Promise.reject(e)));
    return Promise.all(names.filter((n) => n.endsWith('.json')).map(async (n) => parseAnchor(await readFile(join(folder, n), 'utf8'), join(folder, n))));
  }

  async firstDay(): Promise<string | undefined> {
    const days = await readdir(this.dir).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? [] : Promise.reject(e)));
    return days.filter((d) => /^\d{4}-\d{2}-\d{2}$/.test(d)).sort()[0];
  }
}
