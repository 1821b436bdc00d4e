import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SignJWT, jwtVerify } from 'jose';
import type { OperatorAuthenticator, SignInResult } from '../../ports/operators';
import { key } from '../dynamodb/keys';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** The local equivalent of the Cognito user pool: issuer and audience the local authorizer checks. */
export const LOCAL_ISSUER = 'urn:checkout:local-operators';
export const LOCAL_AUDIENCE = 'checkout-admin';
const TOKEN_SECONDS = 3600;

/**
 * Operators of the local runner: scrypt password hashes in the table, HS256 tokens signed with a
 * key of the runner's data directory. The runner checks these tokens on the admin routes exactly
 * where API Gateway's JWT authorizer checks Cognito's in the cloud.
 */
export class LocalOperatorAuthenticator implements OperatorAuthenticator {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly signingKey: Uint8Array,
  ) {}

  async createOperator(username: string, password: string): Promise<void> {
    if (!/^[A-Za-z0-9._@-]{3,64}$/.test(username)) throw new Error('operator names are 3-64 letters, digits, dots, @, _ or -');
    if (password.length < 12) throw new Error('operator passwords have at least 12 characters');
    const salt = randomBytes(16);
    const hash = await scrypt(password, salt, 32);
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...key.operator(username), kind: 'operator', username, salt: salt.toString('hex'), hash: hash.toString('hex'), createdAt: new Date().toISOString() },
      }),
    );
  }

  async exists(username: string): Promise<boolean> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.operator(username) }));
    return Boolean(out.Item);
  }

  async signIn(username: string, password: string): Promise<SignInResult> {
    const out = /^[A-Za-z0-9._@-]{3,64}$/.test(username)
      ? await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.operator(username) }))
      : { Item: undefined };
    const item = out.Item as { salt: string; hash: string } | undefined;
    // Unknown operators cost the same scrypt as known ones.
    const salt = Buffer.from(item?.salt ?? '00'.repeat(16), 'hex');
    const actual = await scrypt(password, salt, 32);
    const expected = Buffer.from(item?.hash ?? '00'.repeat(32), 'hex');
    if (!item || !timingSafeEqual(actual, expected)) return { kind: 'refused' };
    const token = await new SignJWT({ username, token_use: 'id' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(username)
      .setIssuer(LOCAL_ISSUER)
      .setAudience(LOCAL_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_SECONDS}s`)
      .sign(this.signingKey);
    return { kind: 'signed-in', token, expiresInSeconds: TOKEN_SECONDS, username };
  }
}

/** What the local runner's authorizer does: the claims of a valid token, or undefined. */
export async function verifyLocalOperatorToken(token: string, signingKey: Uint8Array): Promise<Record<string, unknown> | undefined> {
  try {
    const { payload } = await jwtVerify(token, signingKey, { issuer: LOCAL_ISSUER, audience: LOCAL_AUDIENCE, algorithms: ['HS256'] });
    return payload as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
