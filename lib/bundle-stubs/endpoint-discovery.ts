/**
 * Bundled in place of @aws-sdk/middleware-endpoint-discovery (see lib/bundling.ts). The DynamoDB
 * client resolves its endpoint-discovery configuration when it is built and makes an endpoint cache
 * (mnemonist's LRU, about 8 KB in every bundle), yet no DynamoDB operation the service calls uses
 * endpoint discovery: the regional endpoint is the endpoint. The configuration keeps its shape, says
 * discovery is off, and a client asked to turn it on fails loudly instead of silently.
 */
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (): undefined => undefined,
  configFileSelector: (): undefined => undefined,
  default: undefined,
};

export function resolveEndpointDiscoveryConfig<T extends { endpointDiscoveryEnabled?: boolean }>(input: T, { endpointDiscoveryCommandCtor }: { endpointDiscoveryCommandCtor: unknown }): T {
  if (input.endpointDiscoveryEnabled) {
    throw new Error('DynamoDB endpoint discovery is not bundled: remove the @aws-sdk/middleware-endpoint-discovery alias in lib/bundling.ts');
  }
  return Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled: () => Promise.resolve(false),
    isClientEndpointDiscoveryEnabled: false,
  });
}
