import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A local stand-in for AWS Secrets Manager that speaks its JSON protocol (the subset we use), so
 * the same SDK adapter runs locally and in the cloud. Secrets persist in one JSON file when a path
 * is given, in memory otherwise.
 */
interface StoredSecret {
  name: string;
  arn: string;
  value: string;
  versionId: string;
  createdAt: number;
}

const MAX_BODY = 64 * 1024;

export function startSecretsServer(file?: string): Promise<{ server: Server; endpoint: string }> {
  const secrets = new Map<string, StoredSecret>();
  if (file) {
    try {
      for (const s of JSON.parse(readFileSync(file, 'utf8')) as StoredSecret[]) secrets.set(s.name, s);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  const persist = () => {
    if (!file) return;
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify([...secrets.values()], null, 2), { mode: 0o600 });
    renameSync(tmp, file);
  };

  const fail = (type: string, message: string) => ({ status: 400, body: { __type: type, message } });
  const operations: Record<string, (input: Record<string, string>) => { status: number; body: unknown }> = {
    GetSecretValue: ({ SecretId = '' }) => {
      const s = secrets.get(SecretId) ?? [...secrets.values()].find((x) => x.arn === SecretId);
      if (!s) return fail('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
      return { status: 200, body: { ARN: s.arn, Name: s.name, SecretString: s.value, VersionId: s.versionId, VersionStages: ['AWSCURRENT'], CreatedDate: s.createdAt } };
    },
    CreateSecret: ({ Name = '', SecretString = '' }) => {
      if (secrets.has(Name)) return fail('ResourceExistsException', `The operation failed because the secret ${Name} already exists.`);
      const s = { name: Name, arn: `arn:aws:secretsmanager:local:000000000000:secret:${Name}`, value: SecretString, versionId: randomUUID(), createdAt: Date.now() / 1000 };
      secrets.set(Name, s);
      persist();
      return { status: 200, body: { ARN: s.arn, Name, VersionId: s.versionId } };
    },
    PutSecretValue: ({ SecretId = '', SecretString = '' }) => {
      const s = secrets.get(SecretId);
      if (!s) return fail('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
      s.value = SecretString;
      s.versionId = randomUUID();
      persist();
      return { status: 200, body: { ARN: s.arn, Name: s.name, VersionId: s.versionId, VersionStages: ['AWSCURRENT'] } };
    },
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const op = operations[target.replace(/^secretsmanager\./, '')];
      let result: { status: number; body: unknown };
      try {
        result = size > MAX_BODY
          ? fail('InvalidRequestException', 'Request too large.')
          : op
            ? op(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, string>)
            : fail('UnknownOperationException', `Unsupported operation ${target}`);
      } catch {
        result = fail('InvalidRequestException', 'Malformed request.');
      }
      res.writeHead(result.status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(result.body));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({ server, endpoint: `http://127.0.0.1:${port}` });
    });
  });
}
