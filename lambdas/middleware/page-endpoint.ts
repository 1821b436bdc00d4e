import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { LambdaHandler } from './merchant-endpoint';
import { pageChain, type ErrorPage } from './page-chain';
import { renderError } from '../checkout-page/render';
import { pageTexts } from '../checkout-page/texts';

export { formFields, FORM_LIMIT_BYTES } from './page-chain';

/** The customer's error page, in the language the browser asks for. */
export const checkoutErrorPage: ErrorPage = (nonce, event) => renderError({ nonce, texts: pageTexts(undefined, event?.headers?.['accept-language']) });

/**
 * A page backed by the service's data: the page chain with the dependencies the page uses
 * (`deps`, a part of lambdas/wiring/), so it bundles no client it does not call.
 */
export function pageEndpoint<D>(run: (event: APIGatewayProxyEventV2, deps: D) => Promise<APIGatewayProxyStructuredResultV2>, deps: () => D): LambdaHandler {
  return pageChain((event) => run(event, deps()), checkoutErrorPage);
}

