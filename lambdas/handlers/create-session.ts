import { merchantEndpoint, publicBaseUrl } from '../middleware/merchant-endpoint';
import { createSession, createSessionHashFields, validateCreateSession } from '../use-cases/create-session';

/** POST /api/v1/session */
export const handler = merchantEndpoint({
  validate: validateCreateSession,
  hashFields: createSessionHashFields,
  run: async ({ deps, merchantKey, body, event }) => {
    const { linkToken } = await createSession(deps, merchantKey, body);
    return { redirect_url: `${publicBaseUrl(event, deps.config.PUBLIC_BASE_URL)}/auth/${linkToken}` };
  },
});
