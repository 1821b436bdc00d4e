import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { LambdaHandler } from './merchant-endpoint';
import { pageChain } from './page-chain';

export { formFields, FORM_LIMIT_BYTES } from './page-chain';

/**
 * A page backed by the service's data: the page chain with the dependencies the page uses
 * (`deps`, a part of lambdas/wiring/), so it bundles no client it does not call.
 */
export function pageEndpoint<D>(run: (event: APIGatewayProxyEventV2, deps: D) => Promise<APIGatewayProxyStructuredResultV2>, deps: () => D): LambdaHandler {
  return pageChain((event) => run(event, deps()));
}

