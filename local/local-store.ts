import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startLocalBackend, backendEnvironment, type LocalBackend } from './backend';

/** Where the local runner keeps its data; DATA_DIR overrides. */
export const dataDirectory = (): string => resolve(process.env.DATA_DIR ?? '.data');

const backendFile = (dataDir: string) => join(dataDir, 'backend.json');
/** The local runner's anchor store (lambdas/adapters/local/file-audit-anchors.ts): the S3 bucket's stand-in. */
export const auditAnchorDirectory = (dataDir: string): string => join(dataDir, 'audit-anchors');

interface RunningBackend {
  pid: number;
  dynamodbEndpoint: string;
  secretsEndpoint: string;
  tableName: string;
}

/** Tells other processes (the merchant CLI) where the running local backend listens. */
export function announceBackend(dataDir: string, backend: LocalBackend): () => void {
  const file = backendFile(dataDir);
  const info: RunningBackend = { pid: process.pid, dynamodbEndpoint: backend.dynamodbEndpoint, secretsEndpoint: backend.secretsEndpoint, tableName: backend.tableName };
  writeFileSync(file, JSON.stringify(info, null, 2), { mode: 0o600 });
  chmodSync(file, 0o600);
  return () => rmSync(file, { force: true });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The local store for a tool that runs beside (or instead of) the runner: the runner's backend
 * when it is up (its LevelDB is locked by it), else one opened on the data directory for the call.
 */
export async function openLocalStore(dataDir = dataDirectory()): Promise<{ env: Record<string, string>; close: () => Promise<void>; runnerPid?: number }> {
  const file = backendFile(dataDir);
  if (existsSync(file)) {
    const running = JSON.parse(readFileSync(file, 'utf8')) as RunningBackend;
    if (alive(running.pid)) {
      return {
        env: { ...backendEnvironment({ ...running, operatorKey: new Uint8Array(32), close: async () => undefined }), AUDIT_ANCHOR_DIR: auditAnchorDirectory(dataDir) },
        close: async () => undefined,
        runnerPid: running.pid,
      };
    }
  }
  const backend = await startLocalBackend({ dataDir });
  // stderr: the tools' stdout is their answer.
  if (backend.indexLayout) console.error(backend.indexLayout);
  if (backend.indexRepair) console.error(backend.indexRepair);
  return { env: { ...backendEnvironment(backend), AUDIT_ANCHOR_DIR: auditAnchorDirectory(dataDir) }, close: () => backend.close() };
}
