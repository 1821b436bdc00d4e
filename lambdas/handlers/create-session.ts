import { idempotencyKey, merchantApi, publicBaseUrl, validateBody, verifyHash } from '../middleware/merchant-endpoint';
import { createSession, createSessionHashFields, replayableLink, validateCreateSession } from '../use-cases/create-session';

/** POST /api/v1/session */
export const handler = merchantApi<ReturnType<typeof validateCreateSession>>()
  .use(validateBody(validateCreateSession))
  .use(verifyHash(createSessionHashFields))
  .use(idempotencyKey())
  .handler(async ({ deps, merchantKey, body, event, requestKey }) => {
    const { linkToken } = await createSession(deps, merchantKey, body, requestKey && (await replayableLink(deps, merchantKey, requestKey.transId)));
    return { redirect_url: `${publicBaseUrl(event, deps.config.PUBLIC_BASE_URL)}/auth/${linkToken}` };
  });
