// Recordings in an S3 bucket, or any S3-compatible store (`S3_ENDPOINT`): `<prefix><callSid>.wav`,
// uploaded while the call runs as a multipart upload whose first part, holding the header, is sent
// last, so the finished object is a WAV with its exact sizes (s3-upload.ts). A call holds at most
// about three parts of 5 MiB in memory however long it is.
//
// Retention is a second, empty object per recording, `<prefix>expiry/<expiresAtMs>/<callSid>`,
// zero-padded so a listing in key order meets the earliest expiries first.
import { createReadStream } from 'node:fs';
import { open, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { RecordingStoreConfig } from '../config/recording.js';
import { SpoolFile } from './s3-spool.js';
import { PART_BYTES, S3Upload } from './s3-upload.js';
import { isStorableCallSid, type RecordingStore, type RecordingUpload } from './store.js';
import { BYTES_PER_FRAME, headerSampleRate, WAV_HEADER_BYTES, wavHeader } from './wav-header.js';

type S3Config = Extract<RecordingStoreConfig, { kind: 's3' }>;

const EXPIRY_DIGITS = 15;
const EXPIRES_META = 'expires-at';

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NotFound' || e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
}

export class S3RecordingStore implements RecordingStore {
  readonly kind = 's3';
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #spoolDir: string | null;
  /** Recordings this store is writing: their spools are live, never recovered. */
  readonly #writing = new Set<string>();

  /** `spoolDir`: where recordings are also written while their parts stream (s3-spool.ts). */
  constructor(config: S3Config, opts: { spoolDir?: string } = {}) {
    this.#spoolDir = opts.spoolDir ?? null;
    const options: S3ClientConfig = {
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      // S3-compatible stores differ in the newer integrity checksums; send them only where required.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(config.endpoint !== null ? { endpoint: config.endpoint } : {}),
      ...(config.credentials !== null ? { credentials: config.credentials } : {}),
    };
    this.#client = new S3Client(options);
    this.#bucket = config.bucket;
    this.#prefix = config.prefix;
  }

  begin(callSid: string, expiresAtMs: number): RecordingUpload {
    this.#check(callSid);
    // The expiry goes first: a recording is never kept without one.
    this.#client
      .send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: this.#expiryKey(expiresAtMs, callSid),
          Body: '',
          ContentLength: 0,
        }),
      )
      .catch(() => {});
    const spool = this.#spoolDir === null ? null : new SpoolFile(this.#spoolDir, callSid, expiresAtMs);
    this.#writing.add(callSid);
    return new S3Upload(
      {
        client: this.#client,
        bucket: this.#bucket,
        key: this.#key(callSid),
        metadata: { [EXPIRES_META]: String(expiresAtMs) },
      },
      spool,
      () => this.#writing.delete(callSid),
    );
  }

  /**
   * Uploads every recording a previous run of this instance left in the spool (it died mid-call):
   * the whole samples written, the header's sizes patched so it plays; abandons the unfinished
   * multipart upload it left, then removes the spool. Run once at start, before any call. Returns
   * the call ids uploaded; one that fails stays in the spool for the next start.
   */
  async recoverSpooled(): Promise<string[]> {
    if (this.#spoolDir === null) return [];
    const names = await readdir(this.#spoolDir).catch(() => [] as string[]);
    const recovered: string[] = [];
    for (const name of names.filter((file) => file.endsWith('.wav'))) {
      const callSid = name.slice(0, -'.wav'.length);
      // Recovery runs beside the first calls of this run: their spools are theirs.
      if (!isStorableCallSid(callSid) || this.#writing.has(callSid)) continue;
      await this.#recoverOne(callSid);
      recovered.push(callSid);
    }
    return recovered;
  }

  async #recoverOne(callSid: string): Promise<void> {
    const dir = this.#spoolDir!;
    const wav = join(dir, `${callSid}.wav`);
    const meta = join(dir, `${callSid}.json`);
    const expiresAtMs = await readFile(meta, 'utf8').then(
      (text) => Number((JSON.parse(text) as { expiresAtMs?: unknown }).expiresAtMs),
      () => Number.NaN,
    );
    const file = await open(wav, 'r+');
    let dataBytes: number;
    try {
      const { size } = await file.stat();
      const header = Buffer.alloc(WAV_HEADER_BYTES);
      await file.read(header, 0, WAV_HEADER_BYTES, 0);
      const rate = headerSampleRate(header);
      if (rate === null || size < WAV_HEADER_BYTES) {
        // Died before the header was written: nothing of the call to keep.
        await file.close();
        await rm(wav, { force: true });
        await rm(meta, { force: true });
        return;
      }
      // Whole sample frames only: a write cut short mid-frame would shift the channels.
      dataBytes = Math.floor((size - WAV_HEADER_BYTES) / BYTES_PER_FRAME) * BYTES_PER_FRAME;
      await file.write(wavHeader(rate, dataBytes), 0, WAV_HEADER_BYTES, 0);
    } finally {
      await file.close().catch(() => {});
    }
    const key = this.#key(callSid);
    await this.#abortUnfinished(key);
    const kept = Number.isSafeInteger(expiresAtMs) ? { [EXPIRES_META]: String(expiresAtMs) } : undefined;
    if (kept) {
      await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: this.#expiryKey(expiresAtMs, callSid),
          Body: '',
          ContentLength: 0,
        }),
      );
    }
    await new Upload({
      client: this.#client,
      params: {
        Bucket: this.#bucket,
        Key: key,
        Body: createReadStream(wav, { start: 0, end: WAV_HEADER_BYTES + dataBytes - 1 }),
        ContentType: 'audio/wav',
        ...(kept ? { Metadata: kept } : {}),
      },
      partSize: PART_BYTES,
      queueSize: 1,
      leavePartsOnError: false,
    }).done();
    await rm(wav, { force: true });
    await rm(meta, { force: true });
  }

  /** The multipart uploads a dead run left under `key`: abandoned, so no part lingers. */
  async #abortUnfinished(key: string): Promise<void> {
    const listing = await this.#client
      .send(new ListMultipartUploadsCommand({ Bucket: this.#bucket, Prefix: key }))
      .catch(() => null);
    for (const upload of listing?.Uploads ?? []) {
      if (upload.Key !== key || upload.UploadId === undefined) continue;
      await this.#client
        .send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: key, UploadId: upload.UploadId }))
        .catch(() => {});
    }
  }

  async size(callSid: string): Promise<number | null> {
    return (await this.#head(callSid))?.size ?? null;
  }

  async read(callSid: string, start: number, end: number): Promise<Readable> {
    this.#check(callSid);
    const answer = await this.#client.send(
      new GetObjectCommand({ Bucket: this.#bucket, Key: this.#key(callSid), Range: `bytes=${start}-${end}` }),
    );
    const body = answer.Body;
    if (body instanceof Readable) return body;
    if (!body) return Readable.from([]);
    return Readable.fromWeb(body.transformToWebStream() as Parameters<typeof Readable.fromWeb>[0]);
  }

  async remove(callSid: string): Promise<boolean> {
    const head = await this.#head(callSid);
    if (!head) return false;
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(callSid) }));
    if (head.expiresAtMs !== null) {
      await this.#client
        .send(
          new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#expiryKey(head.expiresAtMs, callSid) }),
        )
        .catch(() => {});
    }
    return true;
  }

  async removeExpired(nowMs: number, limit: number): Promise<string[]> {
    const listing = await this.#client.send(
      new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: `${this.#prefix}expiry/`, MaxKeys: limit }),
    );
    const removed: string[] = [];
    for (const { Key: key } of listing.Contents ?? []) {
      const match = key === undefined ? null : /\/(\d+)\/([^/]+)$/.exec(key);
      if (!key || !match) continue;
      // Keys list in order of expiry: past the first one still running, none has ended.
      if (Number(match[1]) > nowMs) break;
      const callSid = match[2]!;
      if (isStorableCallSid(callSid)) {
        await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(callSid) }));
      }
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
      removed.push(callSid);
    }
    return removed;
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }

  async #head(callSid: string): Promise<{ size: number; expiresAtMs: number | null } | null> {
    if (!isStorableCallSid(callSid)) return null;
    try {
      const head = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(callSid) }),
      );
      const expires = Number(head.Metadata?.[EXPIRES_META]);
      return { size: head.ContentLength ?? 0, expiresAtMs: Number.isSafeInteger(expires) ? expires : null };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  #check(callSid: string): void {
    if (!isStorableCallSid(callSid)) throw new RangeError('not a call id a recording can be stored under');
  }

  #key(callSid: string): string {
    return `${this.#prefix}${callSid}.wav`;
  }

  #expiryKey(expiresAtMs: number, callSid: string): string {
    return `${this.#prefix}expiry/${String(Math.max(0, Math.floor(expiresAtMs))).padStart(EXPIRY_DIGITS, '0')}/${callSid}`;
  }
}
