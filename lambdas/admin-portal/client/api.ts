import { adminRoute, type AdminRouteId } from '../../../lib/admin-api';
import { query, say } from './dom';
import { signOut, token } from './session';

/** A refusal of the admin API: its text for the status line, its body and status, and how long a busy one asks to wait. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: { readonly error_code?: number } & Record<string, unknown>,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** Thrown after a 401 signed the operator out: nothing more to say. */
export const SIGNED_OUT = 'signed out';

interface Problem {
  readonly errors?: readonly { readonly error_message: string }[];
  readonly error_message?: string;
  readonly message?: string;
}

function problemText(body: Problem | undefined): string {
  if (!body) return 'The request failed.';
  if (body.errors?.length) return body.errors.map((e) => e.error_message).join(' ');
  return body.error_message || body.message || 'The request failed.';
}

// Each view starts a new generation; a read made for an earlier one is dropped when it comes back,
// so a slow answer never paints over the page the operator has moved on to.
let generation = 0;
export const newView = (): void => { generation++; };

export interface Call {
  /** Values of the route's `{name}` parameters. */
  readonly params?: Readonly<Record<string, string | number>>;
  /** Its non-empty values are sent; given at all, the path ends in `?` even when none is. */
  readonly query?: Readonly<Record<string, string | undefined>>;
  readonly body?: unknown;
}

/** The route's path with its parameters filled in (encoded), and the query after it. */
export function pathOf(route: AdminRouteId, call: Call = {}): string {
  const path = adminRoute(route).path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = call.params?.[name];
    if (value === undefined) throw new Error(`${route} needs ${name}`);
    return encodeURIComponent(String(value));
  });
  return call.query ? `${path}?${query(call.query)}` : path;
}

async function send(route: AdminRouteId, call: Call, accept: string): Promise<Response> {
  const { method } = adminRoute(route);
  const headers: Record<string, string> = { accept };
  const bearer = token();
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  return fetch(pathOf(route, call), { method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body), credentials: 'omit' });
}

/**
 * One call of the admin API with the operator's token and its answer. A refusal throws an ApiError;
 * a 401 (but to the sign-in itself) signs the operator out. A read for a view the operator has left
 * never settles.
 */
async function answer<T>(route: AdminRouteId, call: Call, csv: boolean): Promise<{ readonly answer: T; readonly headers: Headers }> {
  const asked = generation;
  const res = await send(route, call, csv ? 'text/csv' : 'application/json');
  const read: unknown = csv && res.ok ? await res.text() : await res.json().catch(() => ({}));
  if (res.status === 401 && route !== 'AdminSignIn') {
    signOut('Your session has ended. Sign in again.');
    throw new Error(SIGNED_OUT);
  }
  if (adminRoute(route).method === 'GET' && asked !== generation) return new Promise(() => {});
  if (!res.ok) throw new ApiError(problemText(read as Problem), res.status, read as ApiError['body'], Number(res.headers.get('retry-after')) || 0);
  return { answer: read as T, headers: res.headers };
}

export const api = async <T>(route: AdminRouteId, call: Call = {}): Promise<T> => (await answer<T>(route, call, false)).answer;

/** A CSV answer: its text, and its headers (the part's row count and the next part's cursor). */
export async function apiCsv(route: AdminRouteId, call: Call = {}): Promise<{ readonly text: string; readonly headers: Headers }> {
  const { answer: text, headers } = await answer<string>(route, call, true);
  return { text, headers };
}

/** Says what went wrong on the status line, unless the operator was just signed out (which said so). */
export function fail(e: unknown): void {
  if (e instanceof Error && e.message !== SIGNED_OUT) say(e.message, 'error');
}
