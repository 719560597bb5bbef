// The S3 store's object writer: one object of a known size, as a single PutObject (a body of at most one
// part) or a multipart upload whose parts are sent from a small pool of reused buffers while the next one
// fills. Memory stays at the pool's size however large the body (s3.ts's header says why lib-storage's
// Upload is not used). The object only appears when a finish call completes it; abort() discards it.

import {
  AbortMultipartUploadCommand,
  type CompletedPart,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

const CONTENT_TYPE = 'application/octet-stream';
/** SigV4's payload hash header (the signer uses a value already set instead of hashing the body). */
const PAYLOAD_HASH_HEADER = 'x-amz-content-sha256';

export interface WriterOptions {
  partSizeBytes: number;
  queueSize: number;
  /** The client's requestChecksumCalculation: WHEN_SUPPORTED makes the SDK checksum every part (CRC32). */
  checksumMode: 'WHEN_REQUIRED' | 'WHEN_SUPPORTED';
}

/**
 * Writes one object of a known size. A body of at most one part is buffered (exactly `totalSize` bytes) and
 * sent as a single PutObject by finishSingle(), under a key chosen then (the hash is known by that time);
 * a bigger one becomes a multipart upload to `key` whose parts are sent as they fill, at most `queueSize`
 * at once while the next one fills, from a pool of at most queueSize + 1 reused part buffers (no per-part
 * allocation: memory stays at the pool size however large the body). write() waits while the queue is
 * full, which is what slows the body down. The object only appears when a finish call completes it;
 * abort() discards everything. Bodies are always Buffers, so the SDK can retry a request and never frames
 * a body as aws-chunked.
 */
export class ObjectWriter {
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly checksumMode: WriterOptions['checksumMode'];
  private readonly multipart: boolean;
  private readonly abortController = new AbortController();
  /** Part buffers (each partSize bytes) not being filled or sent. */
  private readonly pool: Buffer[] = [];
  private buffersAllocated = 0;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly parts: CompletedPart[] = [];
  /** The buffer being filled and how many of its bytes the current part takes. */
  private current: { buffer: Buffer; partBytes: number } | undefined;
  private filled = 0;
  /** Bytes handed to write() so far. */
  private written = 0;
  private nextPartNumber = 1;
  private uploadId: Promise<string> | undefined;
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    /** The multipart upload's object key (undefined for a single-part body). */
    private readonly key: string | undefined,
    private readonly totalSize: number,
    options: WriterOptions,
  ) {
    this.partSize = options.partSizeBytes;
    this.queueSize = options.queueSize;
    this.checksumMode = options.checksumMode;
    this.multipart = totalSize > this.partSize;
    if (this.multipart !== (key !== undefined)) throw new Error('a multipart upload needs its key up front');
  }

  /** Copies `chunk` into part buffers, sending each part as it fills. */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.written + chunk.byteLength > this.totalSize) {
      throw new RangeError(`write past the declared size of ${this.totalSize} bytes`);
    }
    let offset = 0;
    while (offset < chunk.byteLength) {
      this.throwIfFailed();
      this.current ??= await this.takeBuffer();
      const { buffer, partBytes } = this.current;
      const n = Math.min(partBytes - this.filled, chunk.byteLength - offset);
      buffer.set(chunk.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      this.written += n;
      if (this.multipart && this.filled === partBytes) await this.sendPart();
    }
  }

  /**
   * Sends a single-part body as one PutObject to `key` with its Content-MD5 and its SHA-256 (hex, the blob
   * hash); returns the ETag. SigV4 signs the SHA-256 as given (x-amz-content-sha256) instead of hashing the
   * body a second time, and S3 refuses a body that does not match it.
   */
  async finishSingle(key: string, contentMd5: string, sha256Hex: string): Promise<string | undefined> {
    this.assertComplete();
    if (this.multipart) throw new Error('finishSingle() on a multipart body');
    const body = this.current?.buffer ?? Buffer.alloc(0);
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: key,
      Body: body,
      ContentLength: body.length,
      ContentMD5: contentMd5,
      ContentType: CONTENT_TYPE,
    });
    command.middlewareStack.add(
      (next) => (args) => {
        (args.request as { headers: Record<string, string> }).headers[PAYLOAD_HASH_HEADER] = sha256Hex;
        return next(args);
      },
      { step: 'build', name: 'knownPayloadHash' },
    );
    const res = await this.client.send(command, { abortSignal: this.abortController.signal });
    return res.ETag;
  }

  /** Completes the multipart upload: after write() was given exactly totalSize bytes. */
  async finish(): Promise<void> {
    this.assertComplete();
    if (!this.multipart) throw new Error('finish() on a single-part body');
    const abortSignal = this.abortController.signal;
    await Promise.all(this.inFlight);
    this.throwIfFailed();
    const uploadId = await this.ensureUpload();
    const parts = [...this.parts].sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
    await this.client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: this.key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts },
      }),
      { abortSignal },
    );
    this.uploadId = undefined; // completed: nothing left to abort
  }

  private assertComplete(): void {
    this.throwIfFailed();
    if (this.written !== this.totalSize) {
      throw new Error(`finish after ${this.written} of ${this.totalSize} bytes`);
    }
  }

  /** Stops in-flight requests and aborts the multipart upload, if any. Never throws. */
  async abort(): Promise<void> {
    this.abortController.abort();
    await Promise.allSettled(this.inFlight);
    const uploadId = this.uploadId;
    this.uploadId = undefined;
    this.current = undefined;
    this.pool.length = 0;
    if (uploadId === undefined) return;
    try {
      await this.client.send(
        new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key!, UploadId: await uploadId }),
      );
    } catch {
      // Best effort (s3rver does not implement it): a bucket lifecycle rule reaps incomplete uploads.
    }
  }

  /** A buffer for the next part; waits for an in-flight part when all queueSize + 1 are taken. */
  private async takeBuffer(): Promise<{ buffer: Buffer; partBytes: number }> {
    this.filled = 0;
    const remaining = this.totalSize - this.written;
    if (!this.multipart) return { buffer: Buffer.allocUnsafe(remaining), partBytes: remaining };
    const partBytes = Math.min(this.partSize, remaining);
    for (;;) {
      this.throwIfFailed();
      const free = this.pool.pop();
      if (free !== undefined) return { buffer: free, partBytes };
      if (this.buffersAllocated < this.queueSize + 1) {
        this.buffersAllocated++;
        return { buffer: Buffer.allocUnsafeSlow(this.partSize), partBytes };
      }
      await Promise.race(this.inFlight);
    }
  }

  /** Starts sending the full current part, first waiting until fewer than queueSize are in flight. */
  private async sendPart(): Promise<void> {
    while (this.inFlight.size >= this.queueSize) {
      await Promise.race(this.inFlight);
      this.throwIfFailed();
    }
    const current = this.current;
    if (current === undefined) return;
    this.current = undefined;
    const { buffer } = current;
    const body = buffer.subarray(0, current.partBytes);
    const partNumber = this.nextPartNumber++;
    const sending: Promise<void> = (async () => {
      const uploadId = await this.ensureUpload();
      const res = await this.client.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key: this.key,
          UploadId: uploadId,
          PartNumber: partNumber,
          Body: body,
          ContentLength: body.length,
        }),
        { abortSignal: this.abortController.signal },
      );
      if (!res.ETag) throw new Error(`S3 returned no ETag for part ${partNumber} of ${this.key}`);
      this.parts.push({
        PartNumber: partNumber,
        ETag: res.ETag,
        // Set only in WHEN_SUPPORTED mode; CompleteMultipartUpload must then repeat them.
        ...(res.ChecksumCRC32 !== undefined && { ChecksumCRC32: res.ChecksumCRC32 }),
        ...(res.ChecksumCRC32C !== undefined && { ChecksumCRC32C: res.ChecksumCRC32C }),
        ...(res.ChecksumSHA1 !== undefined && { ChecksumSHA1: res.ChecksumSHA1 }),
        ...(res.ChecksumSHA256 !== undefined && { ChecksumSHA256: res.ChecksumSHA256 }),
      });
      // The request is over (response received): the buffer can take another part.
      this.pool.push(buffer);
    })()
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => {
        this.inFlight.delete(sending);
      });
    this.inFlight.add(sending);
  }

  private ensureUpload(): Promise<string> {
    this.uploadId ??= this.client
      .send(
        new CreateMultipartUploadCommand({
          Bucket: this.bucket,
          Key: this.key,
          ContentType: CONTENT_TYPE,
          // As lib-storage does: parts checksummed by the SDK need an upload created for that algorithm.
          ...(this.checksumMode === 'WHEN_SUPPORTED' && { ChecksumAlgorithm: 'CRC32' as const }),
        }),
        { abortSignal: this.abortController.signal },
      )
      .then((res) => {
        if (!res.UploadId) throw new Error(`S3 returned no UploadId for ${this.key}`);
        return res.UploadId;
      });
    return this.uploadId;
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure.error;
  }
}
