// One recording streamed to S3 while its call runs, finished as a WAV whose header gives its exact
// sizes (docs/recordings.md, "S3"). A multipart upload's parts may be sent in any order and only
// the last may be under 5 MiB, so the first part, the one holding the header, is kept back: it is
// exactly 5 MiB (header and the first audio), held in memory, and sent last, once the recorder has
// written the final header. Parts 2, 3… are sent as they fill, one at a time. A call that never
// fills two parts is one PUT at its end. A part, once sent, is never sent again.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { SpoolFile } from './s3-spool.js';
import type { RecordingUpload } from './store.js';

/** S3's smallest part but the last; the first part is exactly this long. */
export const PART_BYTES = 5 * 1024 * 1024;

export interface S3Target {
  client: S3Client;
  bucket: string;
  key: string;
  metadata: Record<string, string>;
}

export class S3Upload implements RecordingUpload {
  readonly #target: S3Target;
  readonly #spool: SpoolFile | null;
  readonly #finished: () => void;
  /** The first part: header and the first audio, sent last (grown as written: most calls are short). */
  #first: Buffer[] = [];
  #firstBytes = 0;
  /** The latest rewrite of the first bytes (the header with its sizes), applied before sending. */
  #start: Buffer | null = null;
  /** Bytes past the first part not yet handed to a part upload. */
  #current: Buffer[] = [];
  #currentBytes = 0;
  /** Bytes of the part being sent now. */
  #sendingBytes = 0;
  #uploadId: Promise<string> | null = null;
  #nextPartNumber = 2;
  readonly #parts: Array<{ PartNumber: number; ETag: string }> = [];
  /** Part uploads in order, one at a time. */
  #chain: Promise<void> = Promise.resolve();
  #failure: Error | null = null;
  #closed = false;

  constructor(target: S3Target, spool: SpoolFile | null, finished: () => void) {
    this.#target = target;
    this.#spool = spool;
    this.#finished = finished;
  }

  /** The held first part is not counted: it is bounded, and waits by design, not on the store. */
  get pendingBytes(): number {
    return this.#currentBytes + this.#sendingBytes + (this.#spool?.pendingBytes ?? 0);
  }

  write(bytes: Buffer): void {
    if (this.#closed || bytes.length === 0) return;
    this.#spool?.write(bytes);
    // After a failed part the upload is lost (end() says so); the spool keeps the recording.
    if (this.#failure !== null) return;
    let rest = bytes;
    if (this.#firstBytes < PART_BYTES) {
      const taken = rest.subarray(0, PART_BYTES - this.#firstBytes);
      this.#first.push(Buffer.from(taken));
      this.#firstBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0) return;
    this.#current.push(Buffer.from(rest));
    this.#currentBytes += rest.length;
    if (this.#currentBytes >= PART_BYTES) this.#sendPart(this.#takeCurrent(PART_BYTES));
  }

  rewriteStart(bytes: Buffer): void {
    if (this.#closed) return;
    this.#start = Buffer.from(bytes);
    this.#spool?.rewriteStart(bytes);
  }

  async end(): Promise<void> {
    this.#closed = true;
    try {
      await this.#finish();
    } catch (err) {
      // Not stored: the spool stays, and the next start of this instance uploads it.
      await this.#abortMultipart();
      await this.#spool?.close();
      throw err;
    } finally {
      this.#finished();
    }
    await this.#spool?.discard();
  }

  async abort(): Promise<void> {
    this.#closed = true;
    this.#current = [];
    this.#currentBytes = 0;
    await this.#chain.catch(() => {});
    await this.#abortMultipart();
    await this.#spool?.discard();
    this.#finished();
  }

  async #finish(): Promise<void> {
    const { client, bucket, key, metadata } = this.#target;
    const first = this.#firstPart();
    if (this.#uploadId === null) {
      // Never more than two parts' worth: one request, whole, with its final header.
      const body = Buffer.concat([first, ...this.#current]);
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentLength: body.length,
          ContentType: 'audio/wav',
          Metadata: metadata,
        }),
      );
      return;
    }
    if (this.#currentBytes > 0) this.#sendPart(this.#takeCurrent(this.#currentBytes));
    await this.#chain;
    if (this.#failure !== null) throw this.#failure;
    const uploadId = await this.#uploadId;
    this.#parts.push({ PartNumber: 1, ETag: await this.#uploadPart(uploadId, 1, first) });
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: [...this.#parts].sort((a, b) => a.PartNumber - b.PartNumber) },
      }),
    );
  }

  /** The first part as it is to be stored: the bytes written, the latest header over them. */
  #firstPart(): Buffer {
    const first = Buffer.concat(this.#first);
    this.#start?.copy(first, 0, 0, Math.min(this.#start.length, first.length));
    return first;
  }

  /** The first `size` bytes waiting past the first part, as one buffer; the rest stays. */
  #takeCurrent(size: number): Buffer {
    const all = Buffer.concat(this.#current);
    this.#current = size < all.length ? [all.subarray(size)] : [];
    this.#currentBytes = all.length - size;
    return all.subarray(0, size);
  }

  #sendPart(body: Buffer): void {
    if (this.#uploadId === null) {
      this.#uploadId = this.#createMultipart();
      // A failure is read where the id is awaited; it must not also surface as unhandled.
      this.#uploadId.catch(() => {});
    }
    // Parts 2, 3…: part 1 is the held first part.
    const partNumber = this.#nextPartNumber++;
    const upload = this.#uploadId;
    this.#chain = this.#chain.then(async () => {
      if (this.#failure !== null) return;
      this.#sendingBytes = body.length;
      try {
        const etag = await this.#uploadPart(await upload, partNumber, body);
        this.#parts.push({ PartNumber: partNumber, ETag: etag });
      } catch (err) {
        this.#failure = err as Error;
      } finally {
        this.#sendingBytes = 0;
      }
    });
  }

  async #createMultipart(): Promise<string> {
    const { client, bucket, key, metadata } = this.#target;
    const created = await client.send(
      new CreateMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        ContentType: 'audio/wav',
        Metadata: metadata,
      }),
    );
    if (created.UploadId === undefined) throw new Error('the store gave the multipart upload no id');
    return created.UploadId;
  }

  async #uploadPart(uploadId: string, partNumber: number, body: Buffer): Promise<string> {
    const { client, bucket, key } = this.#target;
    const sent = await client.send(
      new UploadPartCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        PartNumber: partNumber,
        Body: body,
        ContentLength: body.length,
      }),
    );
    if (sent.ETag === undefined) throw new Error(`the store gave part ${partNumber} no ETag`);
    return sent.ETag;
  }

  async #abortMultipart(): Promise<void> {
    if (this.#uploadId === null) return;
    const uploadId = await this.#uploadId.catch(() => null);
    if (uploadId === null) return;
    const { client, bucket, key } = this.#target;
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
      .catch(() => {});
  }
}
