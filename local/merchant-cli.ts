import { runMerchantCommand } from './merchant-command';

// Supports Node.js 20.19+ (Lambda runs 22); the SDK's notice about its future minimum is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

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
