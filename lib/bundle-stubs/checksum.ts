/**
 * Bundled in place of @smithy/core/checksum (see lib/bundling.ts): the SDK's own module, with its
 * Sha256 replaced. The SDK's Sha256 is Node's crypto when Node can hash SHA-256 and otherwise a
 * SHA-256 written in JavaScript, which every bundle carried (about 3 KB) for a Node without one.
 * Lambda's Node always has it, so the replacement is the SDK's Node class alone (SigV4 signs every
 * request with it); a Node that could not hash SHA-256 fails loudly instead of silently falling back.
 * test/unit/bundle-stubs.test.ts holds it to the SDK's class, hashes and HMACs alike.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
// The SDK's JavaScript (its types are @smithy/core/checksum's): the alias covers the package path only.
// @ts-expect-error -- a file of the package's ESM build, which ships no declarations beside it
export * from '../../node_modules/@smithy/core/dist-es/submodules/checksum/index.js';

export const JS_SHA256_NOT_BUNDLED =
  "Node's crypto cannot hash SHA-256 here, and the SDK's JavaScript SHA-256 is not bundled: remove the @smithy/core/checksum alias in lib/bundling.ts";

type SourceData = string | ArrayBuffer | ArrayBufferView;

let nativeSha256: boolean | undefined;
const hasNativeSha256 = (): boolean => {
  try {
    nativeSha256 ??= createHash('sha256') !== undefined;
  } catch {
    nativeSha256 = false;
  }
  return nativeSha256;
};

const toKey = (data: SourceData): string | Buffer =>
  typeof data === 'string' ? data : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);

/** @smithy/core's Sha256Node, as built when Node has SHA-256. */
export class Sha256 {
  readonly digestLength = 32;
  private readonly isHmac: boolean;
  private hash: Hash | Hmac;
  private finished = false;

  constructor(private readonly secret?: SourceData) {
    this.isHmac = !!secret;
    this.hash = this.createHash();
  }

  update(data: SourceData): void {
    if (this.finished) {
      throw new Error('Attempted to update an already finished hash.');
    }
    this.hash.update(data as string | NodeJS.ArrayBufferView);
  }

  async digest(): Promise<Uint8Array> {
    let buf: Buffer;
    if (this.isHmac) {
      this.finished = true;
      buf = this.hash.digest();
    } else {
      buf = (this.hash as Hash).copy().digest();
    }
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  reset(): void {
    this.hash = this.createHash();
    this.finished = false;
  }

  private createHash(): Hash | Hmac {
    if (!hasNativeSha256()) throw new Error(JS_SHA256_NOT_BUNDLED);
    return this.secret ? createHmac('sha256', toKey(this.secret)) : createHash('sha256');
  }
}
