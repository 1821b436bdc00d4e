import type { Node } from 'constructs';
import type { Stage } from './naming';

/** Who moves the money on a stage (lambdas/config.ts `ACQUIRER`). */
export const ACQUIRERS = ['sandbox', 's2s-card'] as const;
export type AcquirerName = (typeof ACQUIRERS)[number];

export const ACQUIRER_CONTEXT = 'acquirer';
export const S2S_CARD_URL_CONTEXT = 's2sCardUrl';

/** The stage's acquirer and what it needs from context, checked before anything is built. */
export type AcquirerChoice = { readonly name: 'sandbox' } | { readonly name: 's2s-card'; readonly url: string };

/**
 * `-c acquirer=sandbox|s2s-card`: dev and staging default to the sandbox; prod has no default and
 * never takes the sandbox, whose test cards are approved while no money moves. The S2S CARD
 * connector needs the gateway's URL (`-c s2sCardUrl=https://…/post`); its credentials live in a
 * Secrets Manager secret the stack creates (docs/operations.md).
 */
export function acquirerFromContext(node: Node, stage: Stage): AcquirerChoice {
  const given = node.tryGetContext(ACQUIRER_CONTEXT) as unknown;
  if (given === undefined || given === '') {
    if (stage === 'prod') {
      throw new Error(
        'Stage prod needs a real acquirer: pass -c acquirer=s2s-card -c s2sCardUrl=https://<PAYMENT_URL>/post. ' +
          'The sandbox approves test cards while no money moves, so prod never runs on it (docs/operations.md, "Before the first deploy").',
      );
    }
    return { name: 'sandbox' };
  }
  if (!ACQUIRERS.includes(given as AcquirerName)) throw new Error(`Unknown acquirer ${JSON.stringify(given)}: pass -c ${ACQUIRER_CONTEXT}=${ACQUIRERS.join('|')}`);
  if (given === 'sandbox') {
    if (stage === 'prod') throw new Error('Stage prod never runs on the sandbox acquirer (it moves no money): pass -c acquirer=s2s-card');
    return { name: 'sandbox' };
  }
  const url = node.tryGetContext(S2S_CARD_URL_CONTEXT) as unknown;
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.protocol !== 'https:') {
    throw new Error(`-c acquirer=s2s-card needs the gateway's URL over https: -c ${S2S_CARD_URL_CONTEXT}=https://<PAYMENT_URL>/post (got ${JSON.stringify(url)})`);
  }
  return { name: 's2s-card', url: parsed.toString() };
}
