import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { esbuildApiOptions } from '../bench/bundles';

/**
 * The S3 anchor store as Lambda runs it: bundled with the project's esbuild options (the SDK's
 * event-stream module is stubbed there, and the S3 client must still build), talking HTTP to a
 * stand-in for S3 that records each request. A put carries `If-None-Match: *` and a SHA-256
 * checksum (Object Lock requires one); S3's 412 is "exists", anything else an error.
 */
jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'checkout-anchor-s3-'));
const requests: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
let answer = 200;
let server: Server;
let bundle: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(answer, { 'content-type': 'application/xml' });
      res.end(answer === 412 ? '<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>' : '');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const entry = join(dir, 'probe.ts');
  writeFileSync(
    entry,
    `import { S3Client } from '@aws-sdk/client-s3';
import { S3AuditAnchors } from ${JSON.stringify(resolve(__dirname, '../../lambdas/adapters/s3/audit-anchors'))};
const s3 = new S3Client({ region: 'us-east-1', endpoint: process.argv[2], forcePathStyle: true, credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
new S3AuditAnchors(s3, 'anchors-bucket').write({ day: '2030-01-02', seq: 3, hash: 'a'.repeat(64), closed: true, at: '2030-01-03T00:20:00.000Z' })
  .then((outcome) => console.log(outcome), (e) => console.log('error ' + e.name));
`,
  );
  bundle = join(dir, 'probe.mjs');
  await build({ ...esbuildApiOptions(), entryPoints: [entry], outfile: bundle, sourcemap: false, nodePaths: [resolve(__dirname, '../../node_modules')] });
});
afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
  rmSync(dir, { recursive: true, force: true });
});

const run = () =>
  new Promise<string>((done, fail) =>
    execFile(process.execPath, [bundle, `http://127.0.0.1:${(server.address() as AddressInfo).port}`], (e, stdout) => (e ? fail(e) : done(stdout.trim()))),
  );

test('a put is conditional and checksummed, under the anchors\' prefix; 200 is written', async () => {
  answer = 200;
  expect(await run()).toBe('written');
  const put = requests.at(-1)!;
  expect(put.method).toBe('PUT');
  expect(put.url).toMatch(/^\/anchors-bucket\/audit-anchors\/2030-01-02\/closed\.json/);
  expect(put.headers['if-none-match']).toBe('*');
  expect(put.headers['x-amz-checksum-sha256'] ?? put.headers['x-amz-sdk-checksum-algorithm']).toBeDefined();
  expect(put.body).toContain('"hash":"' + 'a'.repeat(64));
});

test('S3\'s 412 (the name is taken) is "exists"; a refusal is an error', async () => {
  answer = 412;
  expect(await run()).toBe('exists');
  answer = 403;
  expect(await run()).toMatch(/^error /);
});
