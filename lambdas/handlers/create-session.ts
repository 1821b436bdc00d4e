import { merchantEndpoint, publicBaseUrl } from '../middleware/merchant-endpoint';
import { createSession, createSessionHashFields, replayableLink, validateCreateSession } from '../use-cases/create-session';

/** POST /api/v1/session */
export const handler = merchantEndpoint({
  validate: validateCreateSession,
  hashFields: createSessionHashFields,
  run: async ({ deps, merchantKey, body, event, requestKey }) => {
    const { linkToken } = await createSession(deps, merchantKey, body, requestKey && (await replayableLink(deps, merchantKey, requestKey.transId)));
    return { redirect_url: `${publicBaseUrl(event, deps.config.PUBLIC_BASE_URL)}/auth/${linkToken}` };
  },
});
