import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SignJWT, jwtVerify } from 'jose';
import type { OperatorRole } from '../../../lib/operator-roles';
import { systemClock, type Clock } from '../../ports/clock';
import type { Operator, OperatorAuthenticator, SignInResult } from '../../ports/operators';
import { isConditionFailure } from '../dynamodb/client';
import { key, TTL_ATTRIBUTE } from '../dynamodb/keys';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** The local equivalent of the Cognito user pool: issuer and audience the local authorizer checks. */
export const LOCAL_ISSUER = 'urn:checkout:local-operators';
export const LOCAL_AUDIENCE = 'checkout-admin';
const TOKEN_SECONDS = 3600;

/**
 * Wrong passwords in a row before a user name is locked, and for how long (PCI DSS 8.3.4: at most
 * 10 attempts, at least 30 minutes). A failure count nobody adds to is forgotten after a day.
 */
export const SIGN_IN_LOCKOUT = { maxFailures: 5, lockSeconds: 30 * 60, forgetAfterSeconds: 24 * 3600 } as const;

/** Operator names: what the store accepts. Exact case: `Alice` is not `alice`. */
const OPERATOR_NAME = /^[A-Za-z0-9._@-]{3,64}$/;

export class OperatorAdminError extends Error {}

interface SignInRecord {
  readonly failures?: number;
  /** Epoch seconds. */
  readonly lockedUntil?: number;
}

/**
 * Operators of the local runner: scrypt password hashes and a role in the table, HS256 tokens
 * signed with a key of the runner's data directory and carrying the role. The runner checks these
 * tokens on the admin routes exactly where API Gateway's JWT authorizer checks Cognito's in the
 * cloud. Sign-in locks a user name after SIGN_IN_LOCKOUT.maxFailures wrong passwords in a row,
 * whether or not an operator has that name, so neither the answer nor its timing tells them apart.
 */
export class LocalOperatorAuthenticator implements OperatorAuthenticator {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly signingKey: Uint8Array,
    /** Lockouts follow it (tests move it); tokens follow the real time the authorizer checks. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Creates the operator, or replaces its password and role (and lifts a lock on its name). */
  async createOperator(username: string, password: string, role: OperatorRole): Promise<void> {
    if (!OPERATOR_NAME.test(username)) throw new OperatorAdminError('operator names are 3-64 letters, digits, dots, @, _ or -');
    if (password.length < 12) throw new OperatorAdminError('operator passwords have at least 12 characters');
    const salt = randomBytes(16);
    const hash = await scrypt(password, salt, 32);
    await this.db.send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...key.operator(username), kind: 'operator', username, role, salt: salt.toString('hex'), hash: hash.toString('hex'), createdAt: this.clock.now().toISOString() },
      }),
    );
    await this.unlock(username);
  }

  /** Changes an existing operator's role; it applies from their next sign-in. */
  async setRole(username: string, role: OperatorRole): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.operator(username),
          UpdateExpression: 'SET #role = :role',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':role': role },
        }),
      );
    } catch (e) {
      if (isConditionFailure(e)) throw new OperatorAdminError(`no operator ${username}`);
      throw e;
    }
  }

  /** Gives a role to an operator that has none (one made before roles existed); keeps any other. */
  async giveRoleIfNone(username: string, role: OperatorRole): Promise<void> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.operator(username),
          UpdateExpression: 'SET #role = :role',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#role)',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':role': role },
        }),
      );
    } catch (e) {
      if (!isConditionFailure(e)) throw e;
    }
  }

  /** Forgets the failed sign-ins of a user name and lifts its lock. */
  async unlock(username: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: key.operatorSignIn(username) }));
  }

  async exists(username: string): Promise<boolean> {
    return (await this.find(username)) !== undefined;
  }

  async find(username: string): Promise<Operator | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.tableName, Key: key.operator(username), ConsistentRead: true }));
    const item = out.Item as { username: string; role?: OperatorRole } | undefined;
    return item ? { username: item.username, ...(item.role ? { role: item.role } : {}) } : undefined;
  }

  /** Every operator with its role and, if its name is locked now, until when. A scan: local tables only. */
  async list(): Promise<(Operator & { lockedUntil?: string })[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new ScanCommand({ TableName: this.tableName, FilterExpression: 'begins_with(pk, :p)', ExpressionAttributeValues: { ':p': 'OPERATOR#' }, ExclusiveStartKey: start }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const now = this.nowSeconds();
    const locks = new Map(items.filter((i) => i.sk === 'SIGNIN').map((i) => [i.pk, i.lockedUntil as number | undefined]));
    return items
      .filter((i) => i.sk === 'OPERATOR')
      .map((i) => {
        const until = locks.get(i.pk);
        return { username: i.username as string, ...(i.role ? { role: i.role as OperatorRole } : {}), ...(until && until > now ? { lockedUntil: new Date(until * 1000).toISOString() } : {}) };
      })
      .sort((a, b) => a.username.localeCompare(b.username));
  }

  async signIn(username: string, password: string): Promise<SignInResult> {
    const storable = OPERATOR_NAME.test(username);
    const [record, item] = storable
      ? await Promise.all([
          this.db.send(new GetCommand({ TableName: this.tableName, Key: key.operatorSignIn(username), ConsistentRead: true })).then((o) => o.Item as SignInRecord | undefined),
          this.db.send(new GetCommand({ TableName: this.tableName, Key: key.operator(username), ConsistentRead: true })).then((o) => o.Item as { salt: string; hash: string; role?: OperatorRole } | undefined),
        ])
      : [undefined, undefined];
    // A locked name is refused before any password is checked: guessing on pays nothing.
    if ((record?.lockedUntil ?? 0) > this.nowSeconds()) return { kind: 'locked' };
    // Unknown operators cost the same scrypt as known ones.
    const salt = Buffer.from(item?.salt ?? '00'.repeat(16), 'hex');
    const actual = await scrypt(password, salt, 32);
    const expected = Buffer.from(item?.hash ?? '00'.repeat(32), 'hex');
    const correct = item !== undefined && timingSafeEqual(actual, expected);
    // A name the store would not accept is no operator's, and cannot be locked (nothing to count).
    if (!storable) return { kind: 'refused' };
    if (!correct) return this.failed(username);
    if (!(await this.succeeded(username))) return { kind: 'locked' };
    const token = await new SignJWT({ username, token_use: 'id', ...(item.role ? { role: item.role } : {}) })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(username)
      .setIssuer(LOCAL_ISSUER)
      .setAudience(LOCAL_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_SECONDS}s`)
      .sign(this.signingKey);
    return { kind: 'signed-in', token, expiresInSeconds: TOKEN_SECONDS, username, ...(item.role ? { role: item.role } : {}) };
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  /**
   * Counts a wrong password (an atomic increment, so concurrent failures all count), unless the
   * name is locked by now; the failure that reaches the limit locks it, with a condition that is
   * the rule: enough failures, and no lock in force.
   */
  private async failed(username: string): Promise<SignInResult> {
    const now = this.nowSeconds();
    const notLocked = 'attribute_not_exists(lockedUntil) OR lockedUntil <= :now';
    let failures: number;
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.operatorSignIn(username),
          UpdateExpression: 'SET failures = if_not_exists(failures, :zero) + :one, #kind = :kind, #ttl = :forget',
          ConditionExpression: notLocked,
          ExpressionAttributeNames: { '#kind': 'kind', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':now': now, ':kind': 'operator-sign-in', ':forget': now + SIGN_IN_LOCKOUT.forgetAfterSeconds },
          ReturnValues: 'ALL_NEW',
        }),
      );
      failures = (out.Attributes as SignInRecord).failures ?? 0;
    } catch (e) {
      if (isConditionFailure(e)) return { kind: 'locked' };
      throw e;
    }
    if (failures < SIGN_IN_LOCKOUT.maxFailures) return { kind: 'refused' };
    const until = now + SIGN_IN_LOCKOUT.lockSeconds;
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key.operatorSignIn(username),
          UpdateExpression: 'SET lockedUntil = :until, #ttl = :forget REMOVE failures',
          ConditionExpression: `failures >= :max AND (${notLocked})`,
          ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':max': SIGN_IN_LOCKOUT.maxFailures, ':now': now, ':until': until, ':forget': until + SIGN_IN_LOCKOUT.forgetAfterSeconds },
        }),
      );
    } catch (e) {
      // Another failure locked it first (or a right password reset it): either way this one is answered as locked.
      if (!isConditionFailure(e)) throw e;
    }
    return { kind: 'locked' };
  }

  /** A right password resets the count; false when a concurrent failure locked the name meanwhile. */
  private async succeeded(username: string): Promise<boolean> {
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: key.operatorSignIn(username),
          ConditionExpression: 'attribute_not_exists(lockedUntil) OR lockedUntil <= :now',
          ExpressionAttributeValues: { ':now': this.nowSeconds() },
        }),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
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
