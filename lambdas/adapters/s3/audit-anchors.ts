import { GetObjectCommand, ListObjectVersionsCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { AuditAnchor } from '../../domain/audit-chain';
import { anchorName, parseAnchor, type AuditAnchorStore } from '../../ports/audit-anchors';

/** Under this prefix, one folder per day (ports/audit-anchors.ts anchorName). */
export const ANCHOR_PREFIX = 'audit-anchors/';
/** A day holds one checkpoint per export run that saw new entries (hourly) and its close: well under a page. */
const VERSIONS_PAGE = 1000;

const isPreconditionFailed = (e: unknown) => (e as { name?: string }).name === 'PreconditionFailed' || (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412;

/**
 * The anchors in an S3 bucket with Object Lock in compliance mode (lib/constructs/audit-anchor.ts):
 * no version can be deleted or changed until its retention ends, not even by the account's root.
 * A put is conditional (`If-None-Match: *`, and the bucket policy refuses puts without it), so an
 * anchor is never replaced by a newer version; should one exist anyway, ofDay returns every version
 * and the verifier reports a disagreement.
 */
export class S3AuditAnchors implements AuditAnchorStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
  ) {}

  async write(anchor: AuditAnchor): Promise<'written' | 'exists'> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: `${ANCHOR_PREFIX}${anchorName(anchor)}`,
          Body: JSON.stringify(anchor),
          ContentType: 'application/json',
          IfNoneMatch: '*',
          // Object Lock requires an integrity checksum on every put.
          ChecksumAlgorithm: 'SHA256',
        }),
      );
      return 'written';
    } catch (e) {
      if (isPreconditionFailed(e)) return 'exists';
      throw e;
    }
  }

  async ofDay(day: string): Promise<AuditAnchor[]> {
    const out = await this.s3.send(new ListObjectVersionsCommand({ Bucket: this.bucket, Prefix: `${ANCHOR_PREFIX}${day}/`, MaxKeys: VERSIONS_PAGE }));
    const versions = out.Versions ?? [];
    return Promise.all(
      versions.map(async (v) => {
        const got = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: v.Key, VersionId: v.VersionId }));
        return parseAnchor(await got.Body!.transformToString(), `s3://${this.bucket}/${v.Key}?versionId=${v.VersionId}`);
      }),
    );
  }

  async firstDay(): Promise<string | undefined> {
    // Keys list in UTF-8 order: the first day folder is the earliest day.
    const out = await this.s3.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: ANCHOR_PREFIX, Delimiter: '/', MaxKeys: 1 }));
    const first = out.CommonPrefixes?.[0]?.Prefix;
    return first ? first.slice(ANCHOR_PREFIX.length, -1) : undefined;
  }
}
