import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { deps as processDeps, type Deps } from '../container';
import type { LambdaHandler } from './merchant-endpoint';
import { pageChain } from './page-chain';

export { formFields, FORM_LIMIT_BYTES } from './page-chain';

/** A page backed by the service's data: the page chain with the process's dependencies. */
export function pageEndpoint(run: (event: APIGatewayProxyEventV2, deps: Deps) => Promise<APIGatewayProxyStructuredResultV2>): LambdaHandler {
  return pageChain((event) => run(event, processDeps()));
}

