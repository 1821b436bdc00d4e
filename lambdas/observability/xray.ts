import { createSocket, type Socket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { getXrayTraceDataFromEnv } from '@aws-lambda-powertools/commons/utils/env';

/**
 * X-Ray traces without the X-Ray SDK (ADR 0036). Lambda's active tracing records each invocation's
 * segment by itself; what the service adds are subsegments under it: one for the handler (with the
 * searchable annotations), one per AWS SDK call and one per call to something outside (the acquirer,
 * a merchant's server). They are X-Ray segment documents sent as UDP datagrams to the daemon Lambda
 * runs beside the function (AWS_XRAY_DAEMON_ADDRESS), which is all the SDK does in Lambda too.
 *
 * Only for a sampled invocation (the trace header says `Sampled=1`): the rest pay one environment
 * read. Nothing here keeps context across promises (no async hooks): an invocation's subsegments hang
 * under its handler subsegment, which is all a Lambda invocation needs.
 *
 * Only names, annotations and outcomes go into a subsegment: never a request or a response (card
 * data, secrets).
 */

export type AnnotationValue = string | number | boolean;

export interface Subsegment {
  readonly id: string;
  readonly name: string;
  readonly trace_id: string;
  readonly parent_id: string;
  readonly type: 'subsegment';
  readonly start_time: number;
  end_time?: number;
  namespace?: 'aws' | 'remote';
  annotations?: Record<string, AnnotationValue>;
  aws?: Record<string, unknown>;
  http?: { response: { status: number } };
  error?: boolean;
  fault?: boolean;
  throttle?: boolean;
}

/** The daemon's header line, then the document: the daemon's UDP protocol. */
const HEADER = '{"format":"json","version":1}\n';

interface Invocation {
  readonly traceId: string;
  readonly handler: Subsegment;
  /** The daemon's UDP address, read once per invocation. */
  readonly daemon: { readonly host: string; readonly port: number };
  readonly sends: Promise<void>[];
}

let current: Invocation | undefined;
let coldStart = true;
let socket: Socket | undefined;

const now = (): number => Date.now() / 1000;
const newId = (): string => randomBytes(8).toString('hex');

/** `host:port`, or the `tcp:… udp:…` pair Lambda sets: the UDP address either way. */
export function daemonAddress(value = process.env.AWS_XRAY_DAEMON_ADDRESS): { host: string; port: number } | undefined {
  if (!value) return undefined;
  const parts = value.trim().split(/\s+/);
  const udp = parts.length === 1 ? parts[0]?.replace(/^udp:/, '') : parts.find((part) => part.startsWith('udp:'))?.slice('udp:'.length);
  const match = udp?.match(/^(.+):(\d+)$/);
  return match ? { host: match[1] as string, port: Number(match[2]) } : undefined;
}

function send(invocation: Invocation, document: Subsegment): void {
  const address = invocation.daemon;
  if (!socket) {
    socket = createSocket(address.host.includes(':') ? 'udp6' : 'udp4');
    socket.unref();
  }
  const message = Buffer.from(HEADER + JSON.stringify(document));
  invocation.sends.push(
    new Promise<void>((resolve) => {
      // A trace lost is a trace lost; it never fails the invocation.
      socket!.send(message, address.port, address.host, () => resolve());
    }),
  );
}

/**
 * Starts this invocation's handler subsegment, `## <function name>`, when the invocation is
 * sampled; annotated with `ColdStart` and `Service` as Powertools' tracer annotates its own.
 */
export function beginInvocation(service: string): void {
  const wasCold = coldStart;
  coldStart = false;
  current = undefined;
  const trace = getXrayTraceDataFromEnv();
  const daemon = trace?.Sampled === '1' ? daemonAddress() : undefined;
  if (!daemon || !trace?.Root || !trace.Parent) return;
  current = {
    traceId: trace.Root,
    daemon,
    sends: [],
    handler: {
      id: newId(),
      name: `## ${process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'handler'}`,
      trace_id: trace.Root,
      parent_id: trace.Parent,
      type: 'subsegment',
      start_time: now(),
      annotations: { ColdStart: wasCold, Service: service },
    },
  };
}

/** Closes the handler subsegment (marked a fault when the handler threw) and waits until every datagram is out. */
export async function endInvocation(failed = false): Promise<void> {
  const invocation = current;
  if (!invocation) return;
  invocation.handler.end_time = now();
  if (failed) invocation.handler.fault = true;
  send(invocation, invocation.handler);
  await Promise.all(invocation.sends);
  current = undefined;
}

/** A searchable annotation on this invocation's handler subsegment (nothing when not sampled). */
export function annotate(key: string, value: AnnotationValue): void {
  if (current) current.handler.annotations = { ...current.handler.annotations, [key]: value };
}

/**
 * Runs `call` in a subsegment of the handler's, named `name`, with these annotations; `describe`
 * adds what the answer or the error says (status, request id), never their content.
 */
export async function inSubsegment<T>(
  name: string,
  namespace: 'aws' | 'remote',
  annotations: Readonly<Record<string, AnnotationValue>>,
  call: () => Promise<T>,
  describe?: (subsegment: Subsegment, outcome: { readonly value?: T; readonly error?: unknown }) => void,
): Promise<T> {
  const invocation = current;
  if (!invocation) return call();
  const subsegment: Subsegment = {
    id: newId(),
    name,
    trace_id: invocation.traceId,
    parent_id: invocation.handler.id,
    type: 'subsegment',
    start_time: now(),
    namespace,
    ...(Object.keys(annotations).length ? { annotations: { ...annotations } } : {}),
  };
  try {
    const value = await call();
    describe?.(subsegment, { value });
    return value;
  } catch (error) {
    // The error's name only: messages can quote what was sent.
    subsegment.annotations = { ...subsegment.annotations, error: (error as Error)?.name ?? 'Error' };
    describe?.(subsegment, { error });
    // A fault unless `describe` called it the caller's error (a 4xx answer).
    if (!subsegment.error) subsegment.fault = true;
    throw error;
  } finally {
    subsegment.end_time = now();
    // Only while the same invocation is on: a call outliving its invocation is not sent into the next one's.
    if (current === invocation) send(invocation, subsegment);
  }
}

interface SdkMetadata {
  readonly httpStatusCode?: number;
  readonly requestId?: string;
  readonly attempts?: number;
}

interface SdkClient {
  readonly middlewareStack: {
    add(middleware: (next: (args: unknown) => Promise<{ output?: { $metadata?: SdkMetadata } }>, context: { clientName?: string; commandName?: string }) => (args: unknown) => Promise<unknown>, options: { step: 'initialize'; name: string; priority: 'high' }): void;
  };
}

const THROTTLES = new Set(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded', 'TooManyRequestsException']);

/**
 * An AWS SDK v3 client whose every call (retries included) is a subsegment named after its service
 * (`DynamoDB`, `SecretsManager`), with the operation, region, request id and retries, as the X-Ray
 * SDK records them; a 4xx answer marks it an error, a 5xx or a network failure a fault.
 */
export function traceAwsClient<C>(client: C): C {
  const stack = (client as unknown as SdkClient).middlewareStack;
  if (!stack?.add) return client;
  stack.add(
    (next, context) => (args) => {
      if (!current) return next(args);
      const service = (context.clientName ?? 'AWS').replace(/Client$/, '');
      const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      return inSubsegment(service, 'aws', {}, () => next(args), (subsegment, { value, error }) => {
        const metadata = value?.output?.$metadata ?? (error as { $metadata?: SdkMetadata } | undefined)?.$metadata;
        subsegment.aws = {
          operation,
          region: process.env.AWS_REGION,
          ...(metadata?.requestId ? { request_id: metadata.requestId } : {}),
          retries: Math.max(0, (metadata?.attempts ?? 1) - 1),
        };
        const status = metadata?.httpStatusCode;
        if (status) subsegment.http = { response: { status } };
        if (error && status && status < 500) subsegment.error = true;
        if (error && THROTTLES.has((error as Error).name)) subsegment.throttle = true;
      });
    },
    { step: 'initialize', name: 'xrayTraceSubsegment', priority: 'high' },
  );
  return client;
}
