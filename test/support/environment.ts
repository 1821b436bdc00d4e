/**
 * The test processes run on the machine's Node.js (20.19 or newer); Lambda runs Node.js 24. The
 * SDK's notice about its future minimum version would otherwise print in every test file.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
