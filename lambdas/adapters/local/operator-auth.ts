import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SignJWT, jwtVerify } from 'jose';
import type { OperatorRole } from '../../../lib/operator-roles';
import { systemClock, type Clock } from '../../ports/clock';
import type { Operator, OperatorAuthenticator, SignInResult } from '../../ports/operators';
import { conditionalUpdate, isConditionFailure } from '../dynamodb/client';
import { key, TTL_ATTRIBUTE } from '../dynamodb/keys';

const scrypt = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** The local equivalent of the Cognito user pool: issuer and audience the local authorizer checks. */
export const LOCAL_ISSUER = 'urn:checkout:local-operators';
export const LOCAL_AUDIENCE = 'checkout-admin';
const TOKEN_SECONDS = 3600;

/**
 * Wrong passwords in a row, per user name and source address, before that address must wait, and
 * the wait: one minute, doubled by every further failure (up to four hours), so the tenth failure
 * in a row waits 32 minutes (PCI DSS 8.3.4: at most 10 attempts, then at least 30 minutes). Keyed
 * by address as well as name so that a stranger's guesses lock only the stranger: the operator
 * signs in from their own address meanwhile. A count nobody adds to is forgotten after a day.
 */
export const SIGN_IN_LOCKOUT = { maxFailures: 5, firstLockSeconds: 60, maxLockSeconds: 4 * 3600, forgetAfterSeconds: 24 * 3600 } as const;

/** How long the `failures`-th wrong password in a row makes its address wait (0 below the limit). */
export const lockSecondsAfter = (failures: number): number =>
  failures < SIGN_IN_LOCKOUT.maxFailures ? 0 : Math.min(SIGN_IN_LOCKOUT.firstLockSeconds * 2 ** (failures - SIGN_IN_LOCKOUT.maxFailures), SIGN_IN_LOCKOUT.maxLockSeconds);

/** A source address as a key part: what an address may hold, bounded; anything else is one bucket. */
const sourceKey = (source: string | undefined): string => (source && /^[0-9A-Fa-f:.]{2,45}$/.test(source) ? source.toLowerCase() : 'unknown');

/** Failed sign-ins of names that are no operator's, counted per hour (`*` is in no operator's name). */
const unknownNameSignIns = (hour: string) => ({ pk: 'OPERATOR#*', sk: `UNKNOWN-SIGNINS#${hour}` });

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
 * cloud. Sign-in makes an address wait after SIGN_IN_LOCKOUT.maxFailures wrong passwords in a row
 * for one user name, whether or not an operator has that name, so neither the answer nor its timing
 * tells them apart.
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
    if (!(await this.setRoleWhere(username, role, 'attribute_exists(pk)'))) throw new OperatorAdminError(`no operator ${username}`);
  }

  /** Gives a role to an operator that has none (one made before roles existed); keeps any other. */
  async giveRoleIfNone(username: string, role: OperatorRole): Promise<void> {
    await this.setRoleWhere(username, role, 'attribute_exists(pk) AND attribute_not_exists(#role)');
  }

  private setRoleWhere(username: string, role: OperatorRole, condition: string): Promise<boolean> {
    return conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: key.operator(username),
      UpdateExpression: 'SET #role = :role',
      ConditionExpression: condition,
      ExpressionAttributeNames: { '#role': 'role' },
      ExpressionAttributeValues: { ':role': role },
    });
  }

  /** Forgets the failed sign-ins of a user name, from every address, and lifts their waits. */
  async unlock(username: string): Promise<void> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :signIn)',
        ExpressionAttributeValues: { ':pk': key.operator(username).pk, ':signIn': key.operatorSignInPrefix },
        ProjectionExpression: 'pk, sk',
        ConsistentRead: true,
      }),
    );
    for (const item of out.Items ?? []) await this.db.send(new DeleteCommand({ TableName: this.tableName, Key: { pk: item.pk, sk: item.sk } }));
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
    // The latest wait over every address, as the operator's lock.
    const locks = new Map<unknown, number>();
    for (const i of items.filter((i) => String(i.sk).startsWith(key.operatorSignInPrefix))) locks.set(i.pk, Math.max(locks.get(i.pk) ?? 0, (i.lockedUntil as number | undefined) ?? 0));
    return items
      .filter((i) => i.sk === 'OPERATOR')
      .map((i) => {
        const until = locks.get(i.pk);
        return { username: i.username as string, ...(i.role ? { role: i.role as OperatorRole } : {}), ...(until && until > now ? { lockedUntil: new Date(until * 1000).toISOString() } : {}) };
      })
      .sort((a, b) => a.username.localeCompare(b.username));
  }

  async signIn(username: string, password: string, source?: string): Promise<SignInResult> {
    const storable = OPERATOR_NAME.test(username);
    const signInKey = key.operatorSignIn(username, sourceKey(source));
    const [record, item] = storable
      ? await Promise.all([
          this.db.send(new GetCommand({ TableName: this.tableName, Key: signInKey, ConsistentRead: true })).then((o) => o.Item as SignInRecord | undefined),
          this.db.send(new GetCommand({ TableName: this.tableName, Key: key.operator(username), ConsistentRead: true })).then((o) => o.Item as { salt: string; hash: string; role?: OperatorRole } | undefined),
        ])
      : [undefined, undefined];
    // A locked name is refused before any password is checked: guessing on pays nothing.
    const known = item !== undefined;
    if ((record?.lockedUntil ?? 0) > this.nowSeconds()) return { kind: 'locked', known };
    // Unknown operators cost the same scrypt as known ones.
    const salt = Buffer.from(item?.salt ?? '00'.repeat(16), 'hex');
    const actual = await scrypt(password, salt, 32);
    const expected = Buffer.from(item?.hash ?? '00'.repeat(32), 'hex');
    const correct = item !== undefined && timingSafeEqual(actual, expected);
    // A name the store would not accept is no operator's, and cannot be locked (nothing to count).
    if (!storable) return { kind: 'refused', known: false };
    if (!correct) return this.failed(signInKey, known);
    if (!(await this.succeeded(signInKey))) return { kind: 'locked', known };
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
   * address is waiting by now; a failure at or past the limit makes it wait lockSecondsAfter(count),
   * a wait that only ever grows (concurrent failures each set theirs; the longest stays).
   */
  private async failed(signInKey: { pk: string; sk: string }, known: boolean): Promise<SignInResult> {
    const now = this.nowSeconds();
    const notLocked = 'attribute_not_exists(lockedUntil) OR lockedUntil <= :now';
    let failures: number;
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: signInKey,
          UpdateExpression: 'SET failures = if_not_exists(failures, :zero) + :one, #kind = :kind, #ttl = :forget',
          ConditionExpression: notLocked,
          ExpressionAttributeNames: { '#kind': 'kind', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':now': now, ':kind': 'operator-sign-in', ':forget': now + SIGN_IN_LOCKOUT.forgetAfterSeconds },
          ReturnValues: 'ALL_NEW',
        }),
      );
      failures = (out.Attributes as SignInRecord).failures ?? 0;
    } catch (e) {
      if (isConditionFailure(e)) return { kind: 'locked', known };
      throw e;
    }
    const wait = lockSecondsAfter(failures);
    if (wait === 0) return { kind: 'refused', known };
    const until = now + wait;
    // Refused when a concurrent failure set a longer wait (or a right password reset the count): answered as locked all the same.
    await conditionalUpdate(this.db, {
      TableName: this.tableName,
      Key: signInKey,
      UpdateExpression: 'SET lockedUntil = :until, #ttl = :forget',
      ConditionExpression: 'attribute_exists(failures) AND (attribute_not_exists(lockedUntil) OR lockedUntil < :until)',
      ExpressionAttributeNames: { '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: { ':until': until, ':forget': until + SIGN_IN_LOCKOUT.forgetAfterSeconds },
    });
    return { kind: 'locked', known, lockedUntil: new Date(until * 1000) };
  }

  /**
   * One atomic counter per hour: raised while it is below `limit`, so it stops at `limit` and a
   * further failure costs one refused conditional write, nothing stored. Forgotten after a day.
   */
  async countUnknownNameFailure(now: Date, limit: number): Promise<number | undefined> {
    const seconds = Math.floor(now.getTime() / 1000);
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: unknownNameSignIns(now.toISOString().slice(0, 13)),
          UpdateExpression: 'SET failures = if_not_exists(failures, :zero) + :one, #kind = :kind, #ttl = :forget',
          ConditionExpression: 'attribute_not_exists(failures) OR failures < :limit',
          ExpressionAttributeNames: { '#kind': 'kind', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':limit': limit, ':kind': 'operator-sign-in-unknown', ':forget': seconds + SIGN_IN_LOCKOUT.forgetAfterSeconds },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return (out.Attributes as { failures: number }).failures;
    } catch (e) {
      if (isConditionFailure(e)) return undefined;
      throw e;
    }
  }

  /** A right password resets this address's count; false when a concurrent failure locked it meanwhile. */
  private async succeeded(signInKey: { pk: string; sk: string }): Promise<boolean> {
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: signInKey,
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
