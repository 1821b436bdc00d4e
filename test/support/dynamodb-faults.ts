import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * An HTTP proxy in front of the local engine that fails DynamoDB calls as the network may: a call
 * that never reaches the table and is never answered (`hang`), and a call the table carried out
 * whose answer never comes back (`lose-answer`: the SDK tries again, and a conditional write then
 * finds its own work done). The plan picks a fault for each call by its operation and its number.
 */
export type CallFault = 'pass' | 'hang' | 'lose-answer';

export interface DynamoCall {
  /** `PutItem`, `UpdateItem`, `Query`… */
  readonly operation: string;
  /** 1, 2, … in the order the calls reached the proxy. */
  readonly n: number;
  /** The request's JSON (the table's key and condition are in it). */
  readonly input: Record<string, unknown>;
}

export interface DynamoFaultProxy {
  readonly url: string;
  /** The engine's endpoint: set before the first call (the service is started on the proxy's address). */
  target: string;
  plan: (call: DynamoCall) => CallFault;
  /** Every call with the fault it got, in order. */
  readonly calls: (DynamoCall & { fault: CallFault })[];
  close(): Promise<void>;
}

export const WRITE_OPERATIONS = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

export async function startDynamoFaultProxy(): Promise<DynamoFaultProxy> {
  const sockets = new Set<Socket>();
  const calls: (DynamoCall & { fault: CallFault })[] = [];
  let n = 0;
  const proxy: DynamoFaultProxy = {
    url: '',
    target: '',
    plan: () => 'pass',
    calls,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const operation = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
      let input: Record<string, unknown> = {};
      try {
        input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        input = {};
      }
      const call = { operation, n: ++n, input };
      const fault = proxy.plan(call);
      calls.push({ ...call, fault });
      // Never answered, never carried out: the client's request timeout ends the try.
      if (fault === 'hang') return;
      const upstream = new URL(proxy.target);
      const forwarded = httpRequest(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
        (answer: IncomingMessage) => {
          const back: Buffer[] = [];
          answer.on('data', (c: Buffer) => back.push(c));
          answer.on('end', () => {
            // Carried out; the answer is lost on the way back (the connection is cut).
            if (fault === 'lose-answer') return void req.socket.destroy();
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(back));
          });
        },
      );
      forwarded.on('error', () => req.socket.destroy());
      forwarded.end(body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  return Object.assign(proxy, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}
