import { runMain } from './cli';
import { runOperatorCommand } from './operator-command';

/** `npm run operator -- <command>`; see USAGE in operator-command.ts or run with --help. */
runMain('operator', runOperatorCommand);
