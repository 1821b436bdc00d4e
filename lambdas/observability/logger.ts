import { LogFormatter, LogItem, Logger } from '@aws-lambda-powertools/logger';
import type { LogAttributes, UnformattedAttributes } from '@aws-lambda-powertools/logger/types';
import { redact } from './redact';

/** Powertools' standard keys, with every attribute passed through the card-data redactor. */
export class RedactingLogFormatter extends LogFormatter {
  override formatAttributes(attributes: UnformattedAttributes, additional: LogAttributes): LogItem {
    const base: LogAttributes = {
      level: attributes.logLevel,
      message: attributes.message,
      timestamp: this.formatTimestamp(attributes.timestamp),
      service: attributes.serviceName,
      cold_start: attributes.lambdaContext?.coldStart,
      function_name: attributes.lambdaContext?.functionName,
      function_request_id: attributes.lambdaContext?.awsRequestId,
      xray_trace_id: attributes.xRayTraceId,
    };
    return new LogItem({ attributes: redact({ ...base, ...additional }) as LogAttributes });
  }
}

/**
 * Resolves the plain dotted paths we use as correlationIdPath ('requestContext.requestId'). Without
 * a search function Powertools drops the correlation id with a warning; its JMESPath package would
 * add a dependency for no expression we need.
 */
export const dottedPathSearch = (expression: string, data: unknown): unknown =>
  expression.split('.').reduce<unknown>((value, key) => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined), data);

export const logger = new Logger({
  serviceName: 'checkout',
  logFormatter: new RedactingLogFormatter(),
  correlationIdSearchFn: dottedPathSearch,
  ...(process.env.LOG_LEVEL ? {} : { logLevel: process.env.JEST_WORKER_ID ? 'SILENT' : 'INFO' }),
});
