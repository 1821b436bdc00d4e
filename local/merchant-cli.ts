import { runMain } from './cli';
import { runMerchantCommand } from './merchant-command';

/** `npm run merchant -- <command>`; see USAGE in merchant-command.ts or run with --help. */
runMain('merchant', runMerchantCommand);
