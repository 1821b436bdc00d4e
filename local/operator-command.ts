import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../lambdas/adapters/dynamodb/client';
import { LocalOperatorAuthenticator, OperatorAdminError, SIGN_IN_LOCKOUT } from '../lambdas/adapters/local/operator-auth';
import { readConfig } from '../lambdas/config';
import { isOperatorRole, OPERATOR_ROLES, type OperatorRole } from '../lib/operator-roles';
import { consoleIo, runCli, UsageError, type Io } from './cli';
import { dataDirectory, openLocalStore } from './local-store';

/**
 * The operators of the local runner's admin portal, behind `npm run operator` (local/operator-cli.ts).
 * On AWS operators are Cognito users and their role is their group (docs/operations.md).
 */
export const USAGE = `Usage: npm run -s operator -- <command> [options]

Commands:
  create NAME --role ROLE         Create an operator (or reset its password and role, and unlock it).
                                  The password is OPERATOR_PASSWORD if set (12 characters or more),
                                  else generated. Prints {"username","password","role"}.
  set-role NAME ROLE              Change an operator's role; it applies from their next sign-in.
                                  Prints {"username","role"}.
  unlock NAME                     Lift the waits of a user name, from every address, after ${SIGN_IN_LOCKOUT.maxFailures} wrong passwords in a row
                                  (a wait starts at ${SIGN_IN_LOCKOUT.firstLockSeconds / 60} minute and doubles with each further one). Prints {"username","unlocked"}.
  list                            Print every operator: {"username","role","lockedUntil"?}.

Roles (each includes the one before it; lib/operator-roles.ts):
  viewer                          reads payments, callbacks, the capture queue, merchants, the audit log
  operator                        also captures, releases, voids, refunds and resends callbacks
  admin                           also changes merchant settings

Target: the local store in DATA_DIR (default .data), the running local runner's or opened here.
On AWS operators are Cognito users: see docs/operations.md.

Exit status: 0 done, 1 failed, 2 bad usage.
`;

const COMMANDS = ['create', 'set-role', 'unlock', 'list'] as const;
type CommandName = (typeof COMMANDS)[number];

export interface OperatorCommand {
  readonly name: CommandName;
  readonly username?: string;
  readonly role?: OperatorRole;
}

function roleArgument(value: string | undefined): OperatorRole {
  if (!isOperatorRole(value)) throw new UsageError(`the role is one of ${OPERATOR_ROLES.join(', ')}, not ${JSON.stringify(value ?? '')}`);
  return value;
}

export function parseOperatorCommand(argv: readonly string[]): OperatorCommand | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: { role: { type: 'string' }, help: { type: 'boolean', short: 'h' }, stage: { type: 'string' } } });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return 'help';
  if (values.stage !== undefined) throw new UsageError('operators of a deployed stage are Cognito users and their role is their group: see docs/operations.md');
  const [name, username, extra, ...rest] = positionals;
  if (!(COMMANDS as readonly string[]).includes(name ?? '')) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  const command = name as CommandName;
  if (command === 'list') {
    if (username !== undefined || values.role !== undefined) throw new UsageError('list takes no arguments');
    return { name: command };
  }
  if (!username) throw new UsageError(`${command} needs an operator name`);
  if (command === 'create') {
    if (extra !== undefined) throw new UsageError('create takes one name and --role');
    return { name: command, username, role: roleArgument(values.role) };
  }
  if (command === 'set-role') {
    if (rest.length || values.role !== undefined) throw new UsageError('set-role takes a name and a role: set-role NAME ROLE');
    return { name: command, username, role: roleArgument(extra) };
  }
  if (extra !== undefined || values.role !== undefined) throw new UsageError('unlock takes one name');
  return { name: command, username };
}

async function execute(command: OperatorCommand, operators: LocalOperatorAuthenticator, env: NodeJS.ProcessEnv): Promise<unknown> {
  const username = command.username as string;
  switch (command.name) {
    case 'create': {
      const password = env.OPERATOR_PASSWORD || randomBytes(12).toString('base64url');
      await operators.createOperator(username, password, command.role as OperatorRole);
      return { username, password, role: command.role };
    }
    case 'set-role':
      await operators.setRole(username, command.role as OperatorRole);
      return { username, role: command.role };
    case 'unlock':
      await operators.unlock(username);
      return { username, unlocked: true };
    case 'list':
      return operators.list();
  }
}

/** Runs one command line; resolves with the exit status (0 done, 1 failed, 2 bad usage). */
export function runOperatorCommand(argv: readonly string[], io: Io = consoleIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return runCli(
    {
      name: 'operator',
      usage: USAGE,
      parse: () => parseOperatorCommand(argv),
      open: async () => {
        const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : dataDirectory();
        const store = await openLocalStore(dataDir);
        const config = readConfig(store.env);
        const db = createDocumentClient({ endpoint: config.DYNAMODB_ENDPOINT });
        // These commands never sign anyone in, so they need no token key.
        const operators = new LocalOperatorAuthenticator(db, config.TABLE_NAME, new Uint8Array(0));
        return {
          operators,
          description: `local store in ${dataDir}`,
          close: async () => {
            db.destroy();
            await store.close();
          },
        };
      },
      run: async (command, target) => JSON.stringify(await execute(command, target.operators, env), null, 2),
      readable: (e) => e instanceof OperatorAdminError,
    },
    io,
  );
}
