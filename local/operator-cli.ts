import { runOperatorCommand } from './operator-command';

// Supports Node.js 20.19+ (Lambda runs 22); the SDK's notice about its future minimum is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** `npm run operator -- <command>`; see USAGE in operator-command.ts or run with --help. */
runOperatorCommand(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error('operator:', e);
    process.exitCode = 1;
  },
);
