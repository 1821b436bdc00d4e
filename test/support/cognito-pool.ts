import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { seeded } from './seeded-random';

/**
 * A stand-in for the two calls of Cognito's API the sign-in import makes (ListUsers,
 * AdminListUserAuthEvents) over HTTP, for the real SDK client, with Cognito's bad days drawn per
 * request from a seed: throttling (400 TooManyRequestsException), its own errors (500), an answer
 * that never comes (the client's timeout ends it), a connection cut before the answer, the events
 * of one second in any order within a page, pages that repeat the previous page's last event (new
 * events moved them on), and a user removed between the users' list and its events.
 */
export interface PoolFaults {
  readonly seed: number;
  readonly throttle: number;
  readonly internalError: number;
  readonly hang: number;
  readonly cut: number;
  readonly reorder: number;
  readonly repeat: number;
}

export const NO_FAULTS: PoolFaults = { seed: 1, throttle: 0, internalError: 0, hang: 0, cut: 0, reorder: 0, repeat: 0 };

export interface PoolEvent {
  readonly EventId: string;
  readonly EventType: string;
  /** Seconds since the epoch, as the JSON protocol carries dates. */
  readonly CreationDate: number;
  readonly EventResponse: 'Pass' | 'Fail' | 'InProgress';
  readonly [more: string]: unknown;
}

export interface CognitoPool {
  readonly url: string;
  readonly poolId: string;
  /** Events by user name; a user's list is kept newest first. */
  addEvent(username: string, event: PoolEvent): void;
  /** Listed by ListUsers, but its events answer UserNotFoundException (removed in between). */
  addGhost(username: string): void;
  faults: PoolFaults;
  /** Requests answered, and faults served, by kind. */
  readonly counts: Record<string, number>;
  close(): Promise<void>;
}


export async function startCognitoPool(options: { poolId?: string; pageSize?: number } = {}): Promise<CognitoPool> {
  const poolId = options.poolId ?? 'eu-west-1_FaultyPool';
  const pageSize = options.pageSize ?? 3;
  const events = new Map<string, PoolEvent[]>();
  const ghosts = new Set<string>();
  const counts: Record<string, number> = {};
  const sockets = new Set<Socket>();
  let random = seeded(NO_FAULTS.seed);
  let faults = NO_FAULTS;
  const count = (what: string) => (counts[what] = (counts[what] ?? 0) + 1);

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
      const input = JSON.parse(body || '{}') as { UserPoolId?: string; Username?: string; NextToken?: string; PaginationToken?: string };
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
        res.end(JSON.stringify(json));
      };
      count(target);
      if (random() < faults.throttle) return count('throttled'), answer(400, { __type: 'TooManyRequestsException', message: 'Too many requests' });
      if (random() < faults.internalError) return count('internal error'), answer(500, { __type: 'InternalErrorException', message: 'Internal error' });
      if (random() < faults.hang) return void count('never answered');
      if (random() < faults.cut) return count('connection cut'), req.socket.destroy();
      if (input.UserPoolId !== poolId) return answer(400, { __type: 'ResourceNotFoundException', message: 'User pool does not exist.' });
      if (target === 'ListUsers') {
        const names = [...new Set([...events.keys(), ...ghosts])].sort();
        const start = Number(input.PaginationToken ?? 0);
        const next = start + pageSize < names.length ? String(start + pageSize) : undefined;
        return answer(200, { Users: names.slice(start, start + pageSize).map((Username) => ({ Username })), ...(next ? { PaginationToken: next } : {}) });
      }
      if (target === 'AdminListUserAuthEvents') {
        const username = input.Username ?? '';
        if (ghosts.has(username)) return answer(400, { __type: 'UserNotFoundException', message: 'User does not exist.' });
        const all = events.get(username) ?? [];
        let start = Number(input.NextToken ?? 0);
        // New events arrived since the previous page: this one starts an event earlier.
        if (start > 0 && random() < faults.repeat) (start -= 1), count('repeated');
        const page = all.slice(start, start + pageSize);
        if (page.length > 1 && random() < faults.reorder) {
          count('reordered');
          for (let i = page.length - 1; i > 0; i--) {
            const j = Math.floor(random() * (i + 1));
            [page[i], page[j]] = [page[j]!, page[i]!];
          }
        }
        const next = start + pageSize < all.length ? String(start + pageSize) : undefined;
        return answer(200, { AuthEvents: page, ...(next ? { NextToken: next } : {}) });
      }
      return answer(400, { __type: 'InvalidParameterException', message: `unexpected ${target}` });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    poolId,
    addEvent(username, event) {
      const list = events.get(username) ?? [];
      list.push(event);
      // Newest first; within one second, as they were added.
      list.sort((a, b) => b.CreationDate - a.CreationDate);
      events.set(username, list);
    },
    addGhost: (username) => void ghosts.add(username),
    get faults() {
      return faults;
    },
    set faults(f: PoolFaults) {
      faults = f;
      random = seeded(f.seed);
    },
    counts,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
