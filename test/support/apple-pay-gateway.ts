import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import type { MerchantIdentity } from '../../lambdas/domain/apple-pay';

/** What the stand-in saw of one validation request. */
export interface ValidationSeen {
  readonly path: string;
  readonly host: string | undefined;
  /** The common name of the client certificate presented (the merchant identity); undefined without one. */
  readonly clientCertificate: string | undefined;
  readonly body: Record<string, unknown>;
}

/**
 * What Apple's host may do on a bad day, to the next validation requests (until set back to
 * undefined): never answer, close the connection without an answer, reset it half-way through the
 * answer, trickle the answer a byte at a time (each byte inside any idle timeout, the whole far too
 * late), answer 200 with something that is not a merchant session, answer far more than one, or
 * answer correctly after a delay.
 */
export type AppleFault =
  | { readonly kind: 'hang' }
  | { readonly kind: 'drop' }
  | { readonly kind: 'reset-midway' }
  | { readonly kind: 'drip'; readonly everyMs: number }
  | { readonly kind: 'not-json' }
  | { readonly kind: 'oversize' }
  | { readonly kind: 'slow'; readonly ms: number };

export interface FakeAppleGateway {
  /** host:port to give APPLE_PAY_GATEWAY_ADDRESS. */
  readonly address: string;
  /** The PEM file of the CA that signed the stand-in's certificate (APPLE_PAY_GATEWAY_CA). */
  readonly caFile: string;
  /** A merchant identity certificate and key the stand-in accepts, issued to `merchantIdentifier`. */
  identity(merchantIdentifier: string): MerchantIdentity;
  /** A certificate of a CA the stand-in does not trust. */
  readonly strangerIdentity: MerchantIdentity;
  readonly seen: ValidationSeen[];
  /** The HTTP status the next answers have (200: a merchant session). */
  answerWith: number;
  /** A fault of the next answers (undefined: none). */
  fault: AppleFault | undefined;
  close(): Promise<void>;
}

/**
 * A stand-in for Apple's merchant validation hosts, over real TLS on loopback: its certificate names
 * Apple's hosts (signed by a test CA the service is told to trust), it asks for a client
 * certificate and accepts only one its CA issued, as Apple accepts only the merchant identity
 * certificate, and answers a merchant session as Apple documents it. Keys are made with openssl
 * (EC P-256, a few milliseconds each) in a temporary folder removed on close().
 */
export async function startFakeAppleGateway(): Promise<FakeAppleGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'apple-pay-'));
  const file = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const key = (name: string) => ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file(name));
  const ca = (name: string) => {
    key(`${name}.key`);
    ssl('req', '-x509', '-new', '-key', file(`${name}.key`), '-out', file(`${name}.crt`), '-days', '2', '-subj', `/CN=${name}`);
  };
  const issue = (name: string, cn: string, by: string, ext: string) => {
    key(`${name}.key`);
    ssl('req', '-new', '-key', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', `/CN=${cn}`);
    writeFileSync(file(`${name}.ext`), ext);
    ssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${by}.crt`), '-CAkey', file(`${by}.key`), '-CAcreateserial', '-out', file(`${name}.crt`), '-days', '2', '-extfile', file(`${name}.ext`));
    return { certificate: readFileSync(file(`${name}.crt`), 'utf8'), privateKey: readFileSync(file(`${name}.key`), 'utf8') };
  };
  ca('test-apple-root');
  ca('stranger-root');
  const server = issue('gateway', 'apple-pay-gateway.apple.com', 'test-apple-root', 'subjectAltName=DNS:apple-pay-gateway.apple.com,DNS:apple-pay-gateway-cert.apple.com,DNS:cn-apple-pay-gateway.apple.com\n');
  const identities = new Map<string, MerchantIdentity>();
  const strangerIdentity = issue('stranger', 'merchant.stranger', 'stranger-root', 'extendedKeyUsage=clientAuth\n');

  const seen: ValidationSeen[] = [];
  const state: { answerWith: number; fault: AppleFault | undefined } = { answerWith: 200, fault: undefined };
  const session = (body: Record<string, unknown>) =>
    // The fields of Apple's merchant session (opaque to us; the page hands it to completeMerchantValidation).
    JSON.stringify({
      epochTimestamp: 1_700_000_000_000,
      expiresAt: 1_700_003_600_000,
      merchantSessionIdentifier: `SSH${seen.length}`,
      nonce: 'a1b2c3d4',
      merchantIdentifier: 'F0E1D2C3',
      domainName: body.initiativeContext,
      displayName: body.displayName,
      signature: 'MIAGCSqGSIb3DQEHAqCAMIACAQExDzANBglghkgBZQMEAgEFADCABgkqhkiG9w0BBwEAAKCAMIID',
      operationalAnalyticsIdentifier: 'Demo:F0E1D2C3',
      retries: 0,
    });
  const https: Server = createServer({ key: server.privateKey, cert: server.certificate, ca: readFileSync(file('test-apple-root.crt')), requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      seen.push({ path: req.url ?? '', host: req.headers.host, clientCertificate: peer?.subject?.CN as string | undefined, body });
      if (state.answerWith !== 200) {
        res.writeHead(state.answerWith, { 'content-type': 'application/json' }).end('{"statusMessage":"Payment Services Exception","statusCode":"400"}');
        return;
      }
      const answer = session(body);
      const fault = state.fault;
      switch (fault?.kind) {
        case 'hang':
          return;
        case 'drop':
          req.socket.destroy();
          return;
        case 'reset-midway':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
          res.write(answer.slice(0, answer.length >> 1), () => req.socket.destroy());
          return;
        case 'drip': {
          res.writeHead(200, { 'content-type': 'application/json' });
          let at = 0;
          const timer = setInterval(() => {
            if (at < answer.length) res.write(answer[at++]!);
            else res.write(' ');
          }, fault.everyMs);
          res.on('close', () => clearInterval(timer));
          return;
        }
        case 'not-json':
          res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Service Unavailable</body></html>');
          return;
        case 'oversize':
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ padding: 'x'.repeat(200 * 1024) }));
          return;
        case 'slow':
          setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(answer), fault.ms);
          return;
        default:
          res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      }
    });
  });
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(https.address() as AddressInfo).port}`,
    caFile: file('test-apple-root.crt'),
    identity(merchantIdentifier) {
      const known = identities.get(merchantIdentifier);
      if (known) return known;
      const made = issue(`identity-${identities.size}`, merchantIdentifier, 'test-apple-root', 'extendedKeyUsage=clientAuth\n');
      identities.set(merchantIdentifier, made);
      return made;
    },
    strangerIdentity,
    seen,
    get answerWith() {
      return state.answerWith;
    },
    set answerWith(v: number) {
      state.answerWith = v;
    },
    get fault() {
      return state.fault;
    },
    set fault(v: AppleFault | undefined) {
      state.fault = v;
    },
    close: async () => {
      https.closeAllConnections();
      await new Promise<void>((resolve) => https.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
