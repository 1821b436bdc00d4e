/**
 * Bundled in place of @smithy/core/event-streams (see lib/bundling.ts). DynamoDB and Secrets
 * Manager have no event-stream operations; the SDK reaches this module only through a dynamic
 * import for such operations, so a client that ever needs one fails loudly instead of silently.
 */
const notBundled = (): never => {
  throw new Error('AWS SDK event streams are not bundled: remove the @smithy/core/event-streams alias in lib/bundling.ts');
};

export class EventStreamSerde {
  constructor() {
    notBundled();
  }
}

export const eventStreamSerdeProvider = notBundled;

/**
 * The S3 client resolves its event-stream configuration when it is built (for SelectObjectContent,
 * which the audit anchors never call): left without a marshaller, such an operation fails, and
 * every other S3 call works.
 */
export const resolveEventStreamSerdeConfig = <T>(input: T): T => input;
