import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Bundled in place of @aws-sdk/credential-provider-node (see lib/bundling.ts). Lambda hands its
 * role's credentials to the function in environment variables; the rest of the default chain
 * (SSO, INI files, IMDS, web identity...) is dead weight there: about 90 KB and a slower cold start.
 */
export const defaultProvider = (init?: Parameters<typeof fromEnv>[0]) => fromEnv(init);
