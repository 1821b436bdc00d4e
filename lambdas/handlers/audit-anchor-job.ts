import middy from '@middy/core';
import { jobObservability } from '../middleware/observability';
import { auditAnchorStore } from '../adapters/audit-anchor-store';
import { storeDeps as deps } from '../wiring/stores';
import { logger } from '../observability/logger';
import { exportAuditAnchors } from '../use-cases/audit-anchors';
import type { AuditAnchorStore } from '../ports/audit-anchors';

let anchors: AuditAnchorStore | undefined;

/** Scheduled (EventBridge, hourly): exports the audit chain's heads to the write-once anchor store. */
export const handler = middy(async () => {
  const d = deps();
  anchors ??= auditAnchorStore(d.config);
  const report = await exportAuditAnchors({ audit: d.audit, anchors, clock: d.clock });
  if (report.written.length) logger.info('audit anchors exported', { written: report.written, existing: report.existing });
  return report;
}).use(jobObservability());
