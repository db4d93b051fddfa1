// The local copy an S3 recording is spooled to while its parts stream (docs/recordings.md): parts
// once sent cannot be completed by another process, so an instance that dies mid-call would leave
// only an unfinished multipart upload. Each recording is also written to
// `$DATA_DIR/recordings-spool/<callSid>.wav` (0600, header rewritten as it grows, like the file
// store) beside `<callSid>.json` holding its expiry; a finished upload removes both, and the next
// start of the instance uploads whatever a previous run left (spool-recovery.ts).
import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdirPrivate, writePrivateFile } from '../store/private-files.js';

export class SpoolFile {
  readonly #wav: string;
  readonly #meta: string;
  /** Every write in order; a failure stops the spool, never the upload. */
  #chain: Promise<FileHandle | null>;
  #position = 0;
  #queuedBytes = 0;

  constructor(dir: string, callSid: string, expiresAtMs: number) {
    const wav = join(dir, `${callSid}.wav`);
    const meta = join(dir, `${callSid}.json`);
    this.#wav = wav;
    this.#meta = meta;
    this.#chain = (async () => {
      await mkdirPrivate(dir);
      await writePrivateFile(meta, JSON.stringify({ expiresAtMs }));
      return open(wav, 'w', 0o600);
    })().catch(() => null);
  }

  /** Bytes accepted and not yet on disk: counted with the upload's, so a slow disk is bounded too. */
  get pendingBytes(): number {
    return this.#queuedBytes;
  }

  write(bytes: Buffer): void {
    const at = this.#position;
    this.#position += bytes.length;
    this.#queuedBytes += bytes.length;
    this.#then((file) => file.write(bytes, 0, bytes.length, at)).finally(() => {
      this.#queuedBytes -= bytes.length;
    });
  }

  /** Rewrites the first bytes (the header's sizes) so the spool plays as it is. */
  rewriteStart(bytes: Buffer): void {
    this.#then((file) => file.write(bytes, 0, bytes.length, 0));
  }

  /** The upload failed: the spool stays for the next start of the instance to upload. */
  async close(): Promise<void> {
    const file = await this.#chain;
    await file?.close().catch(() => {});
  }

  /** The upload is complete (or given up): the spool is no longer needed. */
  async discard(): Promise<void> {
    const file = await this.#chain;
    await file?.close().catch(() => {});
    await rm(this.#wav, { force: true });
    await rm(this.#meta, { force: true });
  }

  #then(step: (file: FileHandle) => Promise<unknown>): Promise<unknown> {
    this.#chain = this.#chain.then(async (file) => {
      if (file === null) return null;
      try {
        await step(file);
        return file;
      } catch {
        await file.close().catch(() => {});
        return null;
      }
    });
    return this.#chain;
  }
}
