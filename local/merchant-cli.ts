import { runMerchantCommand } from './merchant-command';

/** `npm run merchant -- <command>`; see USAGE in merchant-command.ts or run with --help. */
runMerchantCommand(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error('merchant:', e);
    process.exitCode = 1;
  },
);
