import { idempotencyKey, merchantApi, publicBaseUrl, validateBody, verifyHash, type RememberedAs } from '../middleware/merchant-endpoint';
import { merchantSecretDeps } from '../wiring/secrets';
import { createSessionHashFields, sessionCommandOf, validateCreateSession, type CreateSessionRequest, type SessionAnswer } from '../protocol/merchant/session';
import { createSession, replayableLink, replayedLinkToken } from '../use-cases/create-session';

const LINK_PATH = '/auth/';

/**
 * A session's answer is kept on its Idempotency-Key without the link token (the link's secret is
 * never stored, ADR 0016); a replay rebuilds the token from the key and the merchant's password.
 */
const keptWithoutLinkToken: RememberedAs<CreateSessionRequest, SessionAnswer> = {
  forget: ({ redirect_url }) => ({ redirect_url: redirect_url.slice(0, redirect_url.lastIndexOf(LINK_PATH) + LINK_PATH.length) }),
  recall: async (kept, { deps, merchantKey, requestKey }) => {
    const base = (kept as Partial<SessionAnswer> | null)?.redirect_url;
    if (typeof base !== 'string' || !base.endsWith(LINK_PATH) || !requestKey) throw new Error('a kept session answer is its link without the token');
    return { redirect_url: `${base}${await replayedLinkToken(deps, merchantKey, requestKey.transId)}` };
  },
};

/** POST /api/v1/session */
export const handler = merchantApi<CreateSessionRequest>()
  .use(validateBody(validateCreateSession))
  .use(verifyHash(createSessionHashFields))
  .use(idempotencyKey())
  .handler(async ({ deps, merchantKey, body, event, requestKey, earlierRun }): Promise<SessionAnswer> => {
    const link = requestKey && (await replayableLink(deps, merchantKey, requestKey.transId));
    const { linkToken } = await createSession(deps, merchantKey, sessionCommandOf(body), link && { ...link, ...(earlierRun ? { earlierRun } : {}) });
    return { redirect_url: `${publicBaseUrl(event, deps.config.PUBLIC_BASE_URL)}${LINK_PATH}${linkToken}` };
  }, { deps: merchantSecretDeps, remembered: keptWithoutLinkToken });
