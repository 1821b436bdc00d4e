import { fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { LoadPlan, LoadResult } from './load-generator';

export const listenOnFreePort = (server: Server): Promise<string> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });

export const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** The reference: the least a Node HTTP server can do with the same request. */
export function helloWorldServer(): Server {
  return createServer((req, res) => {
    req.resume();
    req.once('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello world');
    });
  });
}

/** Drives `plan` from a separate Node process (same TypeScript loader as this one). */
export function generateLoad(plan: LoadPlan): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'load-generator.ts'), [], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (m: { ok: boolean; result?: LoadResult; error?: string }) => {
      if (m.ok && m.result) resolve(m.result);
      else reject(new Error(`load generator failed: ${m.error}`));
    });
    child.once('error', reject);
    // After a result this is a no-op; without one it is the failure.
    child.once('close', (code) => reject(new Error(`load generator exited ${code} without a result`)));
    child.send(plan);
  });
}
