import { S3Client } from '@aws-sdk/client-s3';
import type { Config } from '../config';
import type { AuditAnchorStore } from '../ports/audit-anchors';
import { FileAuditAnchors } from './local/file-audit-anchors';
import { S3AuditAnchors } from './s3/audit-anchors';

/**
 * The anchor store the configuration names: the stage's bucket, or the local runner's folder.
 * Only the export job and verify-audit import this (the S3 client stays out of every other bundle).
 */
export function auditAnchorStore(config: Pick<Config, 'AUDIT_ANCHOR_BUCKET' | 'AUDIT_ANCHOR_DIR'>): AuditAnchorStore {
  if (config.AUDIT_ANCHOR_BUCKET) return new S3AuditAnchors(new S3Client({}), config.AUDIT_ANCHOR_BUCKET);
  if (config.AUDIT_ANCHOR_DIR) return new FileAuditAnchors(config.AUDIT_ANCHOR_DIR);
  throw new Error('AUDIT_ANCHOR_BUCKET (AWS) or AUDIT_ANCHOR_DIR (local) must name where the audit anchors are kept');
}
